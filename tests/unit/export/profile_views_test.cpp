// The human-facing renderings of a profile: flame graph SVG, report text and verdict, web page.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/stack_interner.h"
#include "core/usercopy_cost.h"
#include "export/flame_graph_svg.h"
#include "export/report_text.h"
#include "export/web_view.h"

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
  StackInterner interner_;
};

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
  EXPECT_THAT(svg, HasSubstr("<title>udp_recvmsg: 59 samples, 0.596 s CPU (98.33 %)</title>"));
  EXPECT_THAT(svg, HasSubstr(">udp_recvmsg</text>"));
  // The 1-sample frame is ~20 px wide: too narrow for a name, but its title has it, escaped.
  EXPECT_THAT(svg, HasSubstr("<title>a_function_with_a_very_long_name_&lt;script&gt;: 1 samples"));
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

TEST_F(ProfileViewsTest, VerdictGivesShareOfBusyCpuAndCores) {
  const StackProfile p = profile();
  // 60 samples of 1000 kernel + 500 user; 60 x 10101010 ns = 0.606 s, / 10 s = 0.061 cores.
  EXPECT_EQ(verdict_line(p, summarize_cost(p)),
            "the checks cost 4.00 % of busy CPU (0.061 cores); booting with "
            "hardened_usercopy=off would save about that much");
}

TEST_F(ProfileViewsTest, HeadlineGivesShareSamplesAndWindow) {
  const StackProfile p = profile();
  EXPECT_EQ(headline(summarize_cost(p), "over the profile's 10.0 s"),
            "4.00 % of busy CPU is in the checks: 60 of 1,500 busy samples (kernel + user, idle "
            "left out) over the profile's 10.0 s");
  StackProfile idle = profile();
  idle.sampled_by_context = {{"idle", 500}};
  EXPECT_EQ(headline(summarize_cost(idle), "x"), std::nullopt);
  EXPECT_EQ(format_count_exact(1234567), "1,234,567");
  EXPECT_EQ(format_count_exact(999), "999");
  EXPECT_EQ(format_share(0.031234), "3.12 %");
}

TEST_F(ProfileViewsTest, PredictionIsTheSpeedupOverBusyCpuKernelAndUser) {
  const StackProfile p = profile();
  // 60 check samples of 1000 kernel + 500 user: 4.0 % of busy CPU; 1 / (1 - 0.04) = 1.0417.
  EXPECT_EQ(prediction_line(p, summarize_cost(p)),
            "CPU-bound work would run 1.042x as fast with hardened_usercopy=off (1 / (1 - 4.00 "
            "%); what this assumes: README, \"What would hardened_usercopy=off save?\")");
  EXPECT_THAT(render_report(p, summarize_cost(p)), HasSubstr("\nprediction: CPU-bound work"));
  StackProfile off = profile();
  off.hardened_usercopy = "off (hardened_usercopy=off)";
  EXPECT_EQ(prediction_line(off, summarize_cost(off)), std::nullopt);
  StackProfile idle = profile();
  idle.sampled_by_context = {{"idle", 500}};
  EXPECT_EQ(prediction_line(idle, summarize_cost(idle)), std::nullopt);
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
  EXPECT_EQ(verdict_line(probes, summarize_cost(probes)),
            "probe mode counts checks, not CPU time: 1.50M checks over 91.6 MiB, 0.300 s inside "
            "them by their own timing (0.150 cores); record with --mode sample or auto for the "
            "share of busy CPU");
  StackProfile off = profile();
  off.hardened_usercopy = "off (hardened_usercopy=off)";
  EXPECT_THAT(verdict_line(off, summarize_cost(off)), HasSubstr("they cost nothing here"));
}

TEST_F(ProfileViewsTest, ReportHasTableStacksAndVerdict) {
  const StackProfile p = profile();
  const std::string text = render_report(p, summarize_cost(p));
  EXPECT_THAT(text, HasSubstr("kernel 6.1.0-18-amd64"));
  EXPECT_THAT(text, HasSubstr("\n\n4.00 % of busy CPU is in the checks: 60 of 1,500 busy samples "
                              "(kernel + user, idle left out) over the profile's 10.0 s\n"));
  EXPECT_THAT(text, testing::ContainsRegex(
                        "busy CPU +15.2 s \\(1.515 cores\\): kernel 10.1 s, user 5.051 s"));
  EXPECT_THAT(text, testing::ContainsRegex(
                        "in the checks +0.606 s \\(0.061 cores\\); 6.0 % of busy kernel CPU"));
  EXPECT_THAT(text, Not(HasSubstr("interrupts in checks"))) << "none in this profile";
  EXPECT_THAT(text, HasSubstr("udp_recvmsg              recvfrom     page 76%, object 24%"));
  EXPECT_THAT(text, HasSubstr("   3.9 %   0.596 s"));  // 59 of 1500 busy samples
  EXPECT_THAT(text, HasSubstr("udp_recvmsg (recvfrom), 3.9 % of busy CPU:"));
  EXPECT_THAT(text, HasSubstr("  76.3 %  __virt_addr_valid <- __check_object_size <- udp_recvmsg"));
  EXPECT_THAT(text, HasSubstr("\nverdict: the checks cost 4.00 % of busy CPU"));
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
  in.window = profile();
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
  EXPECT_THAT(html, HasSubstr("<p class=\"headline\" id=\"headline\">4.00 % of busy CPU is in "
                              "the checks</p>"));
  EXPECT_THAT(html, HasSubstr("60 of 1,500 busy samples (kernel + user, idle left out) over the "
                              "last 10s (--prediction.window"));
  EXPECT_THAT(html, HasSubstr("<th>share of busy CPU</th>"));
  EXPECT_THAT(html, HasSubstr("6.0 % of busy kernel CPU")) << "secondary, labelled";
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
