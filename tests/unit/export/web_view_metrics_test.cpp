// The web view and /metrics, given the same snapshot, state the same 95 % intervals: the
// headline's and each call site's, at the design effect the window's drains give (not the least
// one, which the page took before).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>

#include "core/cost/speedup_prediction.h"
#include "core/drain/aggregator.h"
#include "core/symbols/stack_interner.h"
#include "export/metrics/prometheus_exporter.h"
#include "export/views/web_view.h"
#include "text_lines.h"

namespace hucprof {
namespace {

constexpr int kDrains = 12;
constexpr uint64_t kKernel = 1000, kUser = 500;  // busy samples per drain
// Samples in the checks per drain, in bursts: the drains spread more than binomial counts would
// (design effects of about 2.3, 3.7 and 5.8 for the two and the total).
uint64_t recv_in(int drain) { return drain % 2 ? 40 : 60; }
uint64_t send_in(int drain) { return drain % 2 ? 20 : 40; }

struct Window {
  v1::Snapshot snapshot;  // after the last drain, with its predictions
  StackProfile profile;   // the same drains' samples, as ProfileStore::window() holds them
};

// The drains as the daemon runs them: each interval's deltas into a real Aggregator, its
// snapshot and totals into the prediction.
Window drained(StackInterner& interner) {
  SpeedupPrediction prediction(std::chrono::seconds(300), /*sampling=*/true, /*latency=*/false);
  prediction.start(0);
  Aggregator aggregator(/*top_k=*/10);
  Window out;
  uint64_t recv = 0, send = 0;
  for (int i = 1; i <= kDrains; ++i) {
    recv += recv_in(i);
    send += send_in(i);
    IntervalDeltas deltas;
    deltas.samples = {{"udp_recvmsg", "recvfrom", "entry", recv_in(i)},
                      {"tcp_sendmsg", "recvfrom", "entry", send_in(i)}};
    deltas.sampled_by_context = {{"kernel", kKernel}, {"user", kUser}};
    aggregator.apply(deltas);
    v1::Snapshot s;
    aggregator.fill(s);
    prediction.update(10.0 * i, aggregator.cost_totals(), 0, s);
    out.snapshot = std::move(s);
  }
  StackProfile& p = out.profile;
  p.sampling = true;
  p.sample_period_ns = 10'000'000;
  p.duration_ns = int64_t{kDrains} * 10'000'000'000;
  p.sampled_by_context = {{"kernel", kKernel * kDrains}, {"user", kUser * kDrains}};
  for (const auto& [callsite, n] :
       std::map<std::string, uint64_t>{{"udp_recvmsg", recv}, {"tcp_sendmsg", send}}) {
    ProfileStack stack{interner.frame({"__check_object_size", "", 0, 0}),
                       interner.frame({callsite, "", 0, 0})};
    ProfileSample sample{
        interner.stack(stack), make_labels({callsite, "recvfrom", "entry", ""}), {}};
    sample.values[kSamples] = n;
    p.samples.push_back(std::move(sample));
  }
  return out;
}

// The value of one series of /metrics' text.
double metric(const std::vector<std::string>& lines, const std::string& series) {
  for (const std::string& line : lines) {
    if (line.starts_with(series + " ")) return std::stod(line.substr(series.size() + 1));
  }
  ADD_FAILURE() << "no " << series;
  return -1;
}

struct Shown {
  double lower = -1, upper = -1;  // percent, as printed
};

// "95 % interval A-B %" at or after `from` in `text`, before `limit`; {-1, -1} where it is not.
// A scan, not std::regex: GCC 12's <regex> does not build under the sanitize tier's -O1.
Shown interval_in(const std::string& text, size_t from, size_t limit) {
  static const std::string kIntro = "95 % interval ";
  const size_t at = text.find(kIntro, from);
  if (at == std::string::npos || at >= limit) return {};
  const size_t lower = at + kIntro.size();
  const size_t dash = text.find('-', lower);
  const size_t end = text.find(" %", dash);
  if (dash == std::string::npos || end == std::string::npos || end >= limit) return {};
  return {std::stod(text.substr(lower, dash - lower)),
          std::stod(text.substr(dash + 1, end - dash - 1))};
}

// The interval the page states in the call site's share cell: the title of the row's first
// cell, the one whose class is "n".
Shown callsite_interval(const std::string& html, const std::string& callsite) {
  static const std::string kShareCell = "<tr><td class=\"n\" title=\"95 % ";
  const size_t cell = html.find("<td><code>" + callsite + "</code>");
  const size_t row = cell == std::string::npos ? cell : html.rfind("<tr>", cell);
  if (row == std::string::npos || html.compare(row, kShareCell.size(), kShareCell) != 0) {
    ADD_FAILURE() << "no share cell for " << callsite;
    return {};
  }
  const Shown shown = interval_in(html, row, html.find('>', row + kShareCell.size()));
  if (shown.lower < 0) ADD_FAILURE() << "no interval in the share cell of " << callsite;
  return shown;
}

TEST(WebViewAndMetrics, SameSnapshotSameIntervals) {
  StackInterner interner;
  const Window w = drained(interner);
  ASSERT_EQ(w.snapshot.predictions_size(), 1);
  const auto& prediction = w.snapshot.predictions(0);
  // The case this is about: drains that spread more than the least design effect assumes.
  double recv_effect = 0;
  for (const auto& site : prediction.callsites()) {
    if (site.callsite() == "udp_recvmsg") recv_effect = site.design_effect();
  }
  ASSERT_GT(recv_effect, 2.0);
  ASSERT_GT(prediction.design_effect(), 2.0);

  const auto lines = text_lines(render_text(snapshot_to_families(w.snapshot)));
  WebViewInput in;
  in.snapshot = w.snapshot;
  in.window = w.profile;
  in.mode = "sample";
  const std::string html = render_web_view(in);

  // Printed to 0.01 percentage points: the same to half of that.
  for (const char* callsite : {"udp_recvmsg", "tcp_sendmsg"}) {
    const std::string labels =
        std::string("{estimator=\"sampling\",callsite=\"") + callsite + "\"}";
    const Shown shown = callsite_interval(html, callsite);
    EXPECT_NEAR(shown.lower, 100 * metric(lines, "usercopy_callsite_busy_cpu_lower_ratio" + labels),
                0.005 + 1e-9)
        << callsite;
    EXPECT_NEAR(shown.upper, 100 * metric(lines, "usercopy_callsite_busy_cpu_upper_ratio" + labels),
                0.005 + 1e-9)
        << callsite;
  }
  const size_t headline = html.find("id=\"headline\">");
  ASSERT_NE(headline, std::string::npos);
  const Shown shown = interval_in(html, headline, html.find('<', headline));
  ASSERT_GE(shown.lower, 0) << "no interval in the headline";
  EXPECT_NEAR(shown.lower,
              100 * metric(lines, "usercopy_checks_busy_cpu_lower_ratio{estimator=\"sampling\"}"),
              0.005 + 1e-9);
  EXPECT_NEAR(shown.upper,
              100 * metric(lines, "usercopy_checks_busy_cpu_upper_ratio{estimator=\"sampling\"}"),
              0.005 + 1e-9);
}

// A call site /metrics does not name (top-K's "other"): the least design effect, said so.
TEST(WebViewAndMetrics, CallsiteWithoutDrainsTakesTheLeastAndSaysSo) {
  StackInterner interner;
  Window w = drained(interner);
  auto* sites = w.snapshot.mutable_predictions(0)->mutable_callsites();
  for (auto it = sites->begin(); it != sites->end();) {
    it = it->callsite() == "tcp_sendmsg" ? sites->erase(it) : std::next(it);
  }
  WebViewInput in;
  in.snapshot = w.snapshot;
  in.window = w.profile;
  in.mode = "sample";
  const std::string html = render_web_view(in);
  EXPECT_THAT(html, testing::ContainsRegex("design effect 1.50 \\(the least: /metrics names no "
                                           "drains of this call site\\)\">[^<]*</td>"
                                           "(<td[^>]*>[^<]*</td>)*<td><code>tcp_sendmsg"));
  EXPECT_THAT(html,
              testing::ContainsRegex("design effect [0-9.]+ \\(this call site&#39;s drains, as "
                                     "/metrics\\)\">[^<]*</td>(<td[^>]*>[^<]*</td>)*"
                                     "<td><code>udp_recvmsg"));
}

}  // namespace
}  // namespace hucprof
