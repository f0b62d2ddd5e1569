// The human-facing renderings of a profile: flame graph SVG, report text and verdict, web page.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/cost/usercopy_cost.h"
#include "core/symbols/stack_interner.h"
#include "export/views/flame_graph_svg.h"
#include "export/views/report_text.h"
#include "export/views/web_view.h"

namespace hucprof {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class ProfileViewsTest : public testing::Test {
 protected:
  ProfileSample sample(std::initializer_list<const char*> leaf_first, const char* callsite,
                       const char* check, uint64_t n) {
    ProfileStack s;
    for (const char* f : leaf_first) s.push_back(interner_.frame({f, "", 0, 0}));
    ProfileSample out{interner_.stack(s), make_labels({callsite, "recvfrom", check, ""}), {}};
    out.values[kSamples] = n;
    return out;
  }
  // 99 Hz; 1000 kernel samples; 60 in the checks over 10 s.
  StackProfile profile() {
    StackProfile p;
    p.sampling = true;
    p.sample_period_ns = 10101010;
    p.duration_ns = 10'000'000'000;
    p.sampled_by_context = {{"kernel", 1000}, {"user", 500}, {"idle", 500}};
    p.kernel = "6.1.0-18-amd64";
    p.hardened_usercopy = "on (default)";
    p.samples = {
        sample({"__virt_addr_valid", "__check_object_size", "udp_recvmsg", "__sys_recvfrom"},
               "udp_recvmsg", "page", 45),
        sample({"__check_object_size", "udp_recvmsg", "__sys_recvfrom"}, "udp_recvmsg", "object",
               14),
        sample(
            {"__check_object_size", "a_function_with_a_very_long_name_<script>", "__sys_recvfrom"},
            "a_function_with_a_very_long_name_<script>", "object", 1),
    };
    return p;
  }
  // The same shares from `factor` times the samples: enough for a verdict (60 of 1,500 is not).
  static StackProfile scaled(StackProfile p, uint64_t factor) {
    for (ProfileSample& s : p.samples) s.values[kSamples] *= factor;
    for (auto& [context, n] : p.sampled_by_context) n *= factor;
    return p;
  }
  StackInterner interner_;
};

// The intervals below are Wilson's 95 % score interval at design effect 1.5 (k / 1.5 of
// n / 1.5), computed outside hucprof with Python from the textbook formula (math only):
//   60 of 1,500:    2.951-5.401 %  (width 2.45 > half of 4 %: collecting; decided after 14.92 s
//                                   at these rates)
//   600 of 15,000:  3.633-4.402 %  (width 0.77: decided)
//   59 of 1,500 ±1.392; 590 of 15,000 ±0.399 (3.570-4.332 %); 45 of 59 ±15.24; 450 of 590
//   ±4.45 (larger side)

TEST_F(ProfileViewsTest, FlameGraphIsSelfContainedWithNamesAndNumbers) {
  const FlameNode root = build_flame_tree(profile(), kSamples, FoldingRules::defaults(), "all");
  FlameGraphStyle style;
  style.title = "t & <t>";
  style.seconds_per_unit = 0.01010101;
  const std::string svg = render_flame_graph_svg(root, style);
  EXPECT_THAT(svg, HasSubstr("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_THAT(svg, Not(HasSubstr("<script")));
  EXPECT_THAT(svg, Not(HasSubstr("href")));
  EXPECT_THAT(svg, HasSubstr("t &amp; &lt;t&gt;"));
  // One <g> per drawn frame: all, __sys_recvfrom, 2 call sites, 2 checks, __virt_addr_valid.
  EXPECT_EQ(count(svg, "<g><title>"), 7u);
  EXPECT_THAT(svg,
              HasSubstr("<title>udp_recvmsg: 59 samples, 0.596 s CPU (98.33 % of all)</title>"));
  EXPECT_THAT(svg, HasSubstr(">udp_recvmsg</text>"));
  // The 1-sample frame is ~20 px wide: too narrow for a name, but its title has it, escaped.
  EXPECT_THAT(svg, HasSubstr("<title>a_function_with_a_very_long_name_&lt;script&gt;: 1 sample,"));
  EXPECT_THAT(svg, Not(HasSubstr("<script>")));
}

TEST_F(ProfileViewsTest, FlameGraphCutsNamesThatDoNotFit) {
  StackProfile p;
  p.samples = {sample({"a_rather_long_function_name_here"}, "x", "object", 1),
               sample({"other"}, "x", "object", 5)};
  FlameGraphStyle style;
  style.width = 1220;  // 1200 px for 6 samples: 200 px (27 characters) for the first
  const std::string svg =
      render_flame_graph_svg(build_flame_tree(p, kSamples, FoldingRules::defaults(), "all"), style);
  EXPECT_THAT(svg, HasSubstr(">a_rather_long_function_n..</text>"));
  EXPECT_THAT(svg, HasSubstr(">other</text>"));
}

TEST_F(ProfileViewsTest, EmptyFlameGraphSaysSo) {
  const std::string svg = render_flame_graph_svg(
      build_flame_tree(StackProfile{}, kSamples, FoldingRules::defaults(), "all"), {});
  EXPECT_THAT(svg, HasSubstr("no samples in this profile"));
}

TEST_F(ProfileViewsTest, NoVerdictWhileCollecting) {
  const StackProfile p = profile();
  const UsercopyCost cost = summarize_cost(p);
  EXPECT_EQ(verdict_line(p, cost, headline_estimate(cost)), std::nullopt);
  EXPECT_EQ(prediction_line(p, cost, headline_estimate(cost)), std::nullopt);
  const std::string text = render_report(p, cost);
  EXPECT_THAT(text, Not(HasSubstr("verdict:")));
  EXPECT_THAT(text, Not(HasSubstr("prediction:")));
  EXPECT_THAT(text, testing::ContainsRegex(
                        "\ncollecting: 60 samples in the checks, about [56] s more at this rate\n"
                        "  no verdict or prediction yet"));
}

TEST_F(ProfileViewsTest, HeadlineGivesShareIntervalSamplesAndWindow) {
  const StackProfile p = scaled(profile(), 10);
  const UsercopyCost cost = summarize_cost(p);
  const auto decided = headline(cost, headline_estimate(cost), "over the profile's 10.0 s");
  ASSERT_TRUE(decided);
  EXPECT_EQ(decided->line(),
            "4.00 % of busy CPU is in the checks (95 % interval 3.63-4.40 %): 600 of 15,000 busy "
            "samples (kernel + user, idle left out) over the profile's 10.0 s");
  const UsercopyCost few = summarize_cost(profile());
  const auto collecting = headline(few, headline_estimate(few), "over the profile's 10.0 s");
  ASSERT_TRUE(collecting);
  EXPECT_THAT(collecting->lead,
              testing::MatchesRegex("collecting: 60 samples in the checks, about [56] s more at "
                                    "this rate"));
  EXPECT_EQ(collecting->detail,
            "60 of 1,500 busy samples (kernel + user, idle left out) over the profile's 10.0 s; "
            "95 % interval 2.95-5.40 %, too wide to decide on");
  // A verdict that needs more than the daemon's window says so instead of a wait.
  EXPECT_THAT(headline(few, headline_estimate(few), "x", 12.0)->lead,
              HasSubstr("at this rate a verdict needs a 15 s window, longer than "
                        "--prediction.window"));
  StackProfile idle = profile();
  idle.sampled_by_context = {{"idle", 500}};
  const UsercopyCost none = summarize_cost(idle);
  EXPECT_EQ(headline(none, headline_estimate(none), "x"), std::nullopt);
  EXPECT_EQ(format_count_exact(1234567), "1,234,567");
  EXPECT_EQ(format_count_exact(999), "999");
  EXPECT_EQ(format_share(0.031234), "3.12 %");
}

TEST_F(ProfileViewsTest, VerdictAndPredictionGiveTheShareItsIntervalCoresAndSpeedup) {
  const StackProfile p = scaled(profile(), 10);
  const UsercopyCost cost = summarize_cost(p);
  // 600 samples of 10000 kernel + 5000 user; 600 x 10101010 ns = 6.06 s, / 10 s = 0.606 cores.
  EXPECT_EQ(verdict_line(p, cost, headline_estimate(cost)),
            "the checks cost 4.00 % of busy CPU (95 % interval 3.63-4.40 %; 0.606 cores); "
            "booting with hardened_usercopy=off would save about that much");
  // 4.0 % of busy CPU: 1 / (1 - 0.04) = 1.0417; over the interval 1 / (1 - 0.03633) = 1.0377
  // to 1 / (1 - 0.04402) = 1.0460.
  EXPECT_EQ(prediction_line(p, cost, headline_estimate(cost)),
            "CPU-bound work would run 1.042x as fast with hardened_usercopy=off (1.038-1.046x; 1 / "
            "(1 - 4.00 %); what this assumes: README, \"What would hardened_usercopy=off save?\")");
  EXPECT_THAT(render_report(p, cost), HasSubstr("\nprediction: CPU-bound work"));
  StackProfile off = p;
  off.hardened_usercopy = "off (hardened_usercopy=off)";
  const UsercopyCost off_cost = summarize_cost(off);
  EXPECT_EQ(prediction_line(off, off_cost, headline_estimate(off_cost)), std::nullopt);
  StackProfile idle = p;
  idle.sampled_by_context = {{"idle", 500}};
  const UsercopyCost idle_cost = summarize_cost(idle);
  EXPECT_EQ(prediction_line(idle, idle_cost, headline_estimate(idle_cost)), std::nullopt);
}

TEST_F(ProfileViewsTest, VerdictForProbeOnlyAndForChecksOff) {
  StackProfile probes;
  probes.probes = true;
  probes.latency = true;
  probes.duration_ns = 2'000'000'000;
  ProfileSample s = sample({"__check_object_size", "udp_recvmsg"}, "udp_recvmsg", "", 0);
  s.values[kCalls] = 1500000;
  s.values[kBytes] = 96000000;
  s.values[kLatencyNs] = 300'000'000;
  probes.samples = {s};
  const UsercopyCost cost = summarize_cost(probes);
  // The timing's own error: each check at its log2 bucket's midpoint, so 2/3 to 4/3 of 0.3 s.
  EXPECT_EQ(verdict_line(probes, cost, headline_estimate(cost)),
            "probe mode counts checks, not CPU time: 1.50M checks over 91.6 MiB (exact counts), "
            "0.300 s inside them by their own timing (0.200-0.400 s: each check counted at its "
            "log2 bucket's midpoint; 0.150 cores); record with --mode sample or auto for the "
            "share of busy CPU");
  StackProfile off = profile();
  off.hardened_usercopy = "off (hardened_usercopy=off)";
  const UsercopyCost off_cost = summarize_cost(off);
  EXPECT_THAT(verdict_line(off, off_cost, headline_estimate(off_cost)),
              testing::Optional(HasSubstr("they cost nothing here")));
}

TEST_F(ProfileViewsTest, ReportHasTableStacksAndVerdict) {
  const StackProfile p = scaled(profile(), 10);
  const std::string text = render_report(p, summarize_cost(p));
  EXPECT_THAT(text, HasSubstr("kernel 6.1.0-18-amd64"));
  EXPECT_THAT(text, HasSubstr("\n\n4.00 % of busy CPU is in the checks (95 % interval 3.63-4.40 "
                              "%): 600 of 15,000 busy samples (kernel + user, idle left out) over "
                              "the profile's 10.0 s\n(every 95 % interval here: Wilson's at "
                              "design effect 1.5, the least, as a profile file keeps no per-drain "
                              "counts to measure its own; docs/metrics.md)\n"));
  EXPECT_THAT(text, testing::ContainsRegex(
                        "busy CPU +151.5 s \\(15.152 cores\\): kernel 101.0 s, user 50.5 s"));
  // 600 of 10,000 busy kernel samples: 6.0 %, Wilson at 1.5 from 5.455 to 6.596 %: ±0.6.
  EXPECT_THAT(text, testing::ContainsRegex(
                        "in the checks +6.061 s \\(0.606 cores\\); 6.0 % ±0.6 of busy kernel CPU"));
  EXPECT_THAT(text, Not(HasSubstr("interrupts in checks"))) << "none in this profile";
  EXPECT_THAT(text, testing::ContainsRegex("3.9 % ±0.4 +590 +5.960 s +udp_recvmsg +recvfrom +"
                                           "page 76% ±5 \\(450\\),\n +object 24% ±5 \\(140\\)\n"));
  EXPECT_THAT(text, HasSubstr("udp_recvmsg (recvfrom), 3.9 % ±0.4 of busy CPU, 590 samples:"));
  EXPECT_THAT(text, HasSubstr("  76.3 % ±4.5 (450)  __virt_addr_valid <- __check_object_size <- "
                              "udp_recvmsg"));
  EXPECT_THAT(text, HasSubstr("\nverdict: the checks cost 4.00 % of busy CPU (95 % interval"));
  StackProfile interrupted = p;
  interrupted.excluded_samples = {{"interrupt", 3}};
  EXPECT_THAT(render_report(interrupted, summarize_cost(interrupted)),
              testing::ContainsRegex("interrupts in checks +0.030 s \\(3 samples\\): kernel "
                                     "CPU, not the checks'"));
}

TEST_F(ProfileViewsTest, NumberFormats) {
  EXPECT_EQ(format_percent(0.058), "5.8 %");
  EXPECT_EQ(format_percent(0.00058), "0.06 %");
  EXPECT_EQ(format_percent(0.00000058), "<0.01 %");
  EXPECT_EQ(format_percent(0), "0.00 %");
  // Changes in percentage points: a nonzero one never reads as 0 (an interval beyond noise,
  // -0.24 to -0.003 pp, would otherwise end at "-0.00").
  EXPECT_EQ(format_points(0.0045), "+0.45");
  EXPECT_EQ(format_points(-0.012), "-1.20");
  EXPECT_EQ(format_points(0), "+0.00");
  EXPECT_EQ(format_points(-0.00003), "-0.003");
  EXPECT_EQ(format_points(0.0000004), "+0.00004");
  EXPECT_EQ(format_points(-0.00004999), "-0.005");
  EXPECT_EQ(format_count(950), "950");
  EXPECT_EQ(format_count(12345), "12.3k");
  EXPECT_EQ(format_count(4560000), "4.56M");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(64000), "62.5 KiB");
  EXPECT_EQ(format_seconds(0.5051), "0.505 s");
  EXPECT_EQ(format_seconds(12.34), "12.3 s");
}

TEST_F(ProfileViewsTest, WebViewIsOneSelfContainedPageWithTheTables) {
  WebViewInput in;
  in.snapshot.set_hardened_usercopy_enabled(true);
  in.snapshot.set_hardened_usercopy_reason("CONFIG_HARDENED_USERCOPY=y");
  in.snapshot.mutable_build()->set_kernel("6.1.0-18-amd64");
  in.snapshot.set_sample_frequency_hz(99);
  auto* probe = in.snapshot.add_probes();
  probe->set_target("__check_object_size");
  probe->set_reason("kprobe: <no kprobes> & no fentry");
  in.window = scaled(profile(), 10);
  in.mode = "auto";
  in.interval = std::chrono::seconds(10);
  in.prediction_window = std::chrono::seconds(10);
  in.snapshot.set_timestamp_unix_ms(1'700'000'000'000);
  const std::string html = render_web_view(in);
  EXPECT_THAT(html, HasSubstr("<!DOCTYPE html>"));
  // Not every interval: a reload loses scroll and tooltips, and the window is minutes long.
  EXPECT_THAT(html, HasSubstr("<meta http-equiv=\"refresh\" content=\"60\">"));
  EXPECT_THAT(html, HasSubstr("<span id=\"updated\">22:13:20 UTC</span> — this page reloads "
                              "every 60 s"));
  // The headline first, with its samples and window: the number of usercopy_checks_busy_cpu_ratio.
  // Its interval at the design effect the snapshot's sampling prediction gives (1.5 here).
  EXPECT_THAT(html, HasSubstr("<p class=\"headline\" id=\"headline\">4.00 % of busy CPU is in "
                              "the checks (95 % interval 3.63-4.40 %)</p>"));
  EXPECT_THAT(html, HasSubstr("600 of 15,000 busy samples (kernel + user, idle left out) over the "
                              "last 10s (--prediction.window"));
  EXPECT_THAT(html, HasSubstr("<th>share of busy CPU (± 95 % interval)</th>"));
  // No sampling prediction in this snapshot: the least design effect, said so.
  EXPECT_THAT(html, HasSubstr("<td class=\"n\" title=\"95 % interval 3.57-4.33 %, design effect "
                              "1.50 (the least: /metrics names no drains of this call site)\">3.9 "
                              "% ±0.4</td><td class=\"n\">590</td>"));
  EXPECT_THAT(html, HasSubstr("6.0 % ±0.6 of busy kernel CPU (secondary")) << "labelled";
  // The profile of exactly this window, named by its end (10 s after the profile's start).
  EXPECT_THAT(html, HasSubstr("<a href=\"debug/pprof/usercopy?window=prediction&amp;end="
                              "10000000000\" id=\"window-profile\">"));
  // The flame graph's title says the same share, interval and window.
  EXPECT_THAT(html, HasSubstr(">4.00 % of busy CPU is in the checks (95 % interval 3.63-4.40 %) "
                              "over the last 10s</text>"));
  EXPECT_THAT(html, HasSubstr("<table id=\"callsites\">"));
  EXPECT_THAT(html, HasSubstr("<code>udp_recvmsg</code>"));
  EXPECT_THAT(html, HasSubstr("<table id=\"probes\">"));
  EXPECT_THAT(html, HasSubstr("kprobe: &lt;no kprobes&gt; &amp; no fentry"));
  EXPECT_THAT(html, HasSubstr("<svg xmlns="));
  EXPECT_THAT(html, HasSubstr("the checks cost 4.00 % of busy CPU"));
  // Nothing from elsewhere: no script, no external style, font or image.
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("<link")));
  EXPECT_THAT(html, Not(HasSubstr("src=")));
  EXPECT_THAT(html, Not(HasSubstr("@import")));
  EXPECT_THAT(html, Not(HasSubstr("url(")));
  EXPECT_THAT(html, Not(HasSubstr("a_function_with_a_very_long_name_<script>")));
}

// Too few samples: the page says how far it is from a verdict, and gives none.
TEST_F(ProfileViewsTest, WebViewCollectsBeforeItDecides) {
  WebViewInput in;
  in.window = profile();
  in.mode = "sample";
  in.prediction_window = std::chrono::seconds(300);
  const std::string html = render_web_view(in);
  EXPECT_THAT(html, testing::ContainsRegex("<p class=\"headline\" id=\"headline\">collecting: 60 "
                                           "samples in the checks, about [56] s more at this "
                                           "rate</p>"));
  EXPECT_THAT(html, HasSubstr("95 % interval 2.95-5.40 %, too wide to decide on"));
  EXPECT_THAT(html, HasSubstr("no verdict or prediction yet"));
  EXPECT_THAT(html, Not(HasSubstr("the checks cost")));
  EXPECT_THAT(html, Not(HasSubstr("id=\"prediction\"")));
}

// Probe mode with --probe.workloads: the page lists the workloads by their share of the calls.
TEST_F(ProfileViewsTest, WebViewListsWorkloadsByCallsWithoutSampling) {
  WebViewInput in;
  in.snapshot.set_hardened_usercopy_enabled(true);
  in.mode = "probe";
  in.interval = std::chrono::seconds(10);
  in.prediction_window = std::chrono::seconds(10);
  in.window.probes = true;
  ProfileStack frames{interner_.frame({"__check_object_size", "", 0, 0}),
                      interner_.frame({"udp_recvmsg", "", 0, 0})};
  const LabelsPtr base = make_labels({"udp_recvmsg", "recvfrom", "", "to_user"});
  for (auto [workload, calls] : {std::pair{"nginx.service", 300u}, {"cron.service", 100u}}) {
    ProfileSample s{interner_.stack(frames), interner_.with_workload(base, workload, "unit"), {}};
    s.values[kCalls] = calls;
    in.window.samples.push_back(s);
  }
  const std::string html = render_web_view(in);
  EXPECT_THAT(html, HasSubstr("<h2>Which workloads run the checks</h2>"));
  EXPECT_THAT(html, HasSubstr("<tr><td class=\"n\">75.0 %</td><td class=\"n\">300</td><td>"
                              "<code>nginx.service</code></td><td>unit</td></tr>"));
  EXPECT_THAT(html, Not(HasSubstr("share of its own busy CPU")));
}

TEST_F(ProfileViewsTest, WebViewHandlerForbidsForeignContent) {
  const HttpHandler handler = make_web_view_handler([] { return WebViewInput{}; });
  const HttpResponse r = handler(HttpRequest{});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
  bool csp = false;
  for (const auto& [name, value] : r.headers) {
    if (name == "Content-Security-Policy") csp = value.starts_with("default-src 'none'");
  }
  EXPECT_TRUE(csp);
  EXPECT_THAT(r.body, HasSubstr("No usercopy check was seen in the window."));
  EXPECT_THAT(r.body, HasSubstr("<meta http-equiv=\"refresh\""));
}

TEST_F(ProfileViewsTest, WebViewStopsReloadingOnRequest) {
  const HttpHandler handler = make_web_view_handler([] { return WebViewInput{}; });
  HttpRequest still;
  still.query = {{"refresh", "off"}};
  const HttpResponse r = handler(still);
  EXPECT_EQ(r.status, 200);
  EXPECT_THAT(r.body, Not(HasSubstr("http-equiv=\"refresh\"")));
  EXPECT_THAT(r.body, HasSubstr("not reloading"));
  for (const auto& query : std::vector<std::multimap<std::string, std::string>>{
           {{"refresh", "on"}}, {{"refresh", "off"}, {"refresh", "off"}}}) {
    HttpRequest bad;
    bad.query = query;
    const HttpResponse refused = handler(bad);
    EXPECT_EQ(refused.status, 400);
    EXPECT_THAT(refused.body, testing::StartsWith("refresh: "));
  }
}

}  // namespace
}  // namespace hucprof
