#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "export/metrics/prometheus_exporter.h"
#include "sample_snapshots.h"
#include "text_lines.h"

namespace hucprof {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::string render(const v1::Snapshot& snapshot) {
  return render_text(snapshot_to_families(snapshot));
}

TEST(SnapshotFamilies, ChecksAndBytesByCallsiteSyscallDirection) {
  const auto lines = text_lines(render(udp_flood_snapshot()));
  EXPECT_THAT(lines, Contains("# TYPE usercopy_checks_total counter"));
  EXPECT_THAT(lines, Contains("usercopy_checks_total{callsite=\"udp_recvmsg\",syscall=\"recvfrom\","
                              "direction=\"to_user\"} 1000"));
  EXPECT_THAT(lines, Contains("usercopy_checks_total{callsite=\"udp_sendmsg\",syscall=\"sendto\","
                              "direction=\"from_user\"} 5"));
  EXPECT_THAT(lines, Contains("# TYPE usercopy_check_bytes_total counter"));
  EXPECT_THAT(lines, Contains("usercopy_check_bytes_total{callsite=\"udp_recvmsg\","
                              "syscall=\"recvfrom\",direction=\"to_user\"} 1472000"));
  EXPECT_THAT(lines, Contains("usercopy_check_bytes_total{callsite=\"udp_sendmsg\","
                              "syscall=\"sendto\",direction=\"from_user\"} 320"));
}

TEST(SnapshotFamilies, SubchecksAndCpuSamples) {
  const auto lines = text_lines(render(udp_flood_snapshot()));
  EXPECT_THAT(lines, Contains("# TYPE usercopy_subchecks_total counter"));
  EXPECT_THAT(
      lines,
      Contains("usercopy_subchecks_total{callsite=\"udp_recvmsg\",step=\"slab_object\"} 900"));
  EXPECT_THAT(
      lines, Contains("usercopy_subchecks_total{callsite=\"udp_recvmsg\",step=\"vmap_area\"} 100"));
  EXPECT_THAT(lines, Contains("# TYPE usercopy_cpu_samples_total counter"));
  EXPECT_THAT(lines, Contains("usercopy_cpu_samples_total{callsite=\"udp_recvmsg\","
                              "syscall=\"recvfrom\",step=\"entry\"} 40"));
  EXPECT_THAT(lines, Contains("usercopy_cpu_samples_total{callsite=\"other\",syscall=\"sendto\","
                              "step=\"vmap_area\"} 2"));
  EXPECT_THAT(lines, Contains("# TYPE usercopy_sampled_cpu_samples_total counter"));
  EXPECT_THAT(lines, Contains("usercopy_sampled_cpu_samples_total{context=\"kernel\"} 1000"));
  EXPECT_THAT(lines, Contains("usercopy_sampled_cpu_samples_total{context=\"user\"} 500"));
  EXPECT_THAT(lines, Contains("usercopy_sampled_cpu_samples_total{context=\"idle\"} 8500"));
}

TEST(SnapshotFamilies, SamplingSeriesAPrometheusRateNeedsStartAtZero) {
  // rate() and increase() count nothing of a series' first value: the totals a node's share is
  // taken from are there, at 0, from the first scrape of a sampling daemon.
  v1::Snapshot fresh;
  fresh.set_sample_frequency_hz(99);
  const auto lines = text_lines(render(fresh));
  EXPECT_THAT(lines, Contains("usercopy_checks_cpu_samples_total 0"));
  EXPECT_THAT(lines, Contains("usercopy_checks_cpu_seconds_total 0"));
  for (const char* context : {"kernel", "user", "idle"}) {
    EXPECT_THAT(lines, Contains(std::string("usercopy_sampled_cpu_samples_total{context=\"") +
                                context + "\"} 0"));
  }
  const auto off = text_lines(render(v1::Snapshot{}));
  EXPECT_THAT(off, Not(Contains(StartsWith("usercopy_checks_cpu_samples_total "))));
  EXPECT_THAT(off, Not(Contains(StartsWith("usercopy_sampled_cpu_samples_total{"))));
}

TEST(SnapshotFamilies, SamplesAnInterruptTookFromACheckAreCountedByReason) {
  v1::Snapshot s = udp_flood_snapshot();
  auto* excluded = s.add_excluded();
  excluded->set_reason("interrupt");
  excluded->set_samples(12);
  const auto lines = text_lines(render(s));
  EXPECT_THAT(lines, Contains("# TYPE usercopy_excluded_cpu_samples_total counter"));
  EXPECT_THAT(lines, Contains("usercopy_excluded_cpu_samples_total{reason=\"interrupt\"} 12"));
}

// The value of the one series of `family` whose line starts with `series` ("name{labels}").
double series_value(const std::string& text, const std::string& series) {
  for (const auto& line : text_lines(text)) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  ADD_FAILURE() << "no series " << series << " in\n" << text;
  return NAN;
}

TEST(SnapshotFamilies, CpuSecondsAreSamplesTimesTheKernelsTimerPeriod) {
  // 99 Hz: the kernel's cpu-clock hrtimer fires every 1e9 / 99 = 10101010 ns (integer division).
  const std::string text = render(udp_flood_snapshot());
  EXPECT_THAT(text_lines(text), Contains("# TYPE usercopy_cpu_seconds_total counter"));
  EXPECT_THAT(text_lines(text), Contains("# TYPE usercopy_sampled_cpu_seconds_total counter"));
  EXPECT_DOUBLE_EQ(series_value(text,
                                "usercopy_cpu_seconds_total{callsite=\"udp_recvmsg\","
                                "syscall=\"recvfrom\",step=\"entry\"}"),
                   40 * 10101010e-9);
  EXPECT_DOUBLE_EQ(series_value(text, "usercopy_sampled_cpu_seconds_total{context=\"kernel\"}"),
                   1000 * 10101010e-9);
  EXPECT_DOUBLE_EQ(series_value(text, "usercopy_sampled_cpu_seconds_total{context=\"idle\"}"),
                   8500 * 10101010e-9);

  // 997 Hz does not divide a second: 1003009 ns, not 1003009.03.
  v1::Snapshot odd = udp_flood_snapshot();
  odd.set_sample_frequency_hz(997);
  EXPECT_DOUBLE_EQ(
      series_value(render(odd), "usercopy_sampled_cpu_seconds_total{context=\"kernel\"}"),
      1000 * 1003009e-9);
}

TEST(SnapshotFamilies, TheChecksTotalIsTheSnapshotsNotTheNamedSeriesSum) {
  v1::Snapshot s = udp_flood_snapshot();
  s.set_check_samples(1234);  // more than the named series: call sites that left the top-K
  EXPECT_EQ(series_value(render(s), "usercopy_checks_cpu_samples_total"), 1234.0);
}

TEST(SnapshotFamilies, CpuSecondsAreZeroWithSamplingOff) {
  v1::Snapshot off = udp_flood_snapshot();
  off.set_sample_frequency_hz(0);
  EXPECT_EQ(series_value(render(off), "usercopy_sampled_cpu_seconds_total{context=\"kernel\"}"),
            0.0);
}

TEST(SnapshotFamilies, DaemonStatusFamilies) {
  const auto lines = text_lines(render(udp_flood_snapshot()));
  EXPECT_THAT(lines, Contains("# TYPE usercopy_hardened_enabled gauge"));
  EXPECT_THAT(lines, Contains("usercopy_hardened_enabled 1"));
  EXPECT_THAT(lines, Contains("# TYPE hucprof_dropped_total counter"));
  EXPECT_THAT(lines, Contains("hucprof_dropped_total{reason=\"stack_collision\"} 3"));
  EXPECT_THAT(lines, Contains("# TYPE hucprof_build_info gauge"));
  EXPECT_THAT(lines, Contains("hucprof_build_info{version=\"0.1.0\",libbpf=\"1.1.2\","
                              "kernel=\"6.1.0-18-amd64\"} 1"));
  EXPECT_THAT(lines, Contains("# TYPE hucprof_drains_total counter"));
  EXPECT_THAT(lines, Contains("hucprof_drains_total 42"));
  EXPECT_THAT(lines, Contains("# TYPE hucprof_drain_duration_seconds gauge"));
  EXPECT_THAT(lines, Contains("hucprof_drain_duration_seconds 0.0125"));
  EXPECT_THAT(lines, Contains("# TYPE hucprof_sample_frequency_hertz gauge"));
  EXPECT_THAT(lines, Contains("hucprof_sample_frequency_hertz 99"));
}

TEST(SnapshotFamilies, MapMemoryByMapAndKallsymsReloads) {
  v1::Snapshot s = udp_flood_snapshot();
  for (auto [map, bytes] : {std::pair{"sample_stacks", 8519680}, {"sampler_.rodata", 8192}}) {
    auto* m = s.add_bpf_maps();
    m->set_map(map);
    m->set_bytes(bytes);
  }
  s.set_kallsyms_reloads(2);
  const auto lines = text_lines(render(s));
  EXPECT_THAT(lines, Contains("hucprof_bpf_map_memory_bytes{map=\"sample_stacks\"} 8519680"));
  EXPECT_THAT(lines, Contains("hucprof_bpf_map_memory_bytes{map=\"sampler_.rodata\"} 8192"));
  EXPECT_THAT(lines, Contains("hucprof_kallsyms_reloads_total 2"));
}

TEST(SnapshotFamilies, HelperWalksSplitIntoCallsByMethodAndMismatches) {
  const auto lines = text_lines(render(udp_flood_snapshot()));
  EXPECT_THAT(lines, Contains("# TYPE hucprof_probe_helper_calls_total counter"));
  EXPECT_THAT(lines, Contains("hucprof_probe_helper_calls_total{method=\"learned_offsets\"} 2997"));
  EXPECT_THAT(lines, Contains("hucprof_probe_helper_calls_total{method=\"stack_walk\"} 3"));
  EXPECT_THAT(lines, Not(Contains(HasSubstr("method=\"offset_mismatch\""))));
  EXPECT_THAT(lines, Contains("# TYPE hucprof_probe_offset_mismatches_total counter"));
  EXPECT_THAT(lines, Contains("hucprof_probe_offset_mismatches_total 1"));
}

TEST(SnapshotFamilies, HardenedDisabledIsZero) {
  v1::Snapshot s;
  s.set_hardened_usercopy_enabled(false);
  EXPECT_THAT(text_lines(render(s)), Contains("usercopy_hardened_enabled 0"));
}

TEST(SnapshotFamilies, ProbeStates) {
  v1::Snapshot s;
  auto add = [&](const char* target, const char* mode, bool attached, const char* reason) {
    auto* p = s.add_probes();
    p->set_target(target);
    p->set_mode(mode);
    p->set_attached(attached);
    p->set_reason(reason);
  };
  add("__check_object_size", "fentry", true, "");
  add("find_vmap_area", "kprobe", false, "detached: kprobe unregistered");
  add("__check_heap_object", "", false,
      "fentry: EPERM (ftrace locked); kprobe: CONFIG_KPROBES off");
  add("cpu-clock", "perf_event", true, "");
  const auto lines = text_lines(render(s));
  EXPECT_THAT(lines, Contains("# TYPE hucprof_probe_attached gauge"));
  EXPECT_THAT(lines,
              Contains("hucprof_probe_attached{target=\"__check_object_size\",mode=\"fentry\"} 1"));
  EXPECT_THAT(lines,
              Contains("hucprof_probe_attached{target=\"find_vmap_area\",mode=\"kprobe\"} 0"));
  EXPECT_THAT(lines,
              Contains("hucprof_probe_attached{target=\"__check_heap_object\",mode=\"none\"} 0"));
  EXPECT_THAT(lines,
              Contains("hucprof_probe_attached{target=\"cpu-clock\",mode=\"perf_event\"} 1"));
  EXPECT_THAT(lines, Contains("# TYPE hucprof_probe_unavailable_info gauge"));
  EXPECT_THAT(lines, Contains("hucprof_probe_unavailable_info{target=\"find_vmap_area\","
                              "reason=\"detached: kprobe unregistered\"} 1"));
  EXPECT_THAT(lines, Contains("hucprof_probe_unavailable_info{target=\"__check_heap_object\","
                              "reason=\"fentry: EPERM (ftrace locked); kprobe: CONFIG_KPROBES "
                              "off\"} 1"));
  // Attached probes have no "unavailable" reason.
  EXPECT_THAT(render(s),
              Not(HasSubstr("hucprof_probe_unavailable_info{target=\"__check_object_size\"")));
  EXPECT_THAT(render(s), Not(HasSubstr("hucprof_probe_unavailable_info{target=\"cpu-clock\"")));
}

TEST(SnapshotFamilies, LatencyHistogramIsCumulativeOnFixedBounds) {
  v1::Snapshot s;
  auto* h = s.add_latency();
  h->set_callsite("udp_recvmsg");
  // slot i counts calls with floor(log2(ns)) == i.
  std::vector<uint64_t> slots(32, 0);
  slots[2] = 1;   // 4..7 ns
  slots[3] = 2;   // 8..15 ns
  slots[5] = 5;   // 32..63 ns
  slots[10] = 3;  // 1024..2047 ns
  slots[25] = 1;  // ~34 ms: beyond the last bound, only in +Inf
  for (uint64_t v : slots) h->add_bucket_counts(v);
  h->set_sum_ns(5000);
  const auto lines = text_lines(render(s));
  const std::string p = "usercopy_check_duration_seconds_bucket{callsite=\"udp_recvmsg\",le=";
  EXPECT_THAT(lines, Contains("# TYPE usercopy_check_duration_seconds histogram"));
  // Computed by hand: le=2^k ns sums slots 0..k-1.
  EXPECT_THAT(lines, Contains(p + "\"8e-09\"} 1"));    // slots 0..2
  EXPECT_THAT(lines, Contains(p + "\"1.6e-08\"} 3"));  // + slot 3
  EXPECT_THAT(lines, Contains(p + "\"3.2e-08\"} 3"));
  EXPECT_THAT(lines, Contains(p + "\"6.4e-08\"} 8"));       // + slot 5
  EXPECT_THAT(lines, Contains(p + "\"1.024e-06\"} 8"));     // slots 0..9
  EXPECT_THAT(lines, Contains(p + "\"2.048e-06\"} 11"));    // + slot 10
  EXPECT_THAT(lines, Contains(p + "\"0.004194304\"} 11"));  // last fixed bound, 2^22 ns
  EXPECT_THAT(lines, Contains(p + "\"+Inf\"} 12"));
  EXPECT_THAT(lines,
              Contains("usercopy_check_duration_seconds_count{callsite=\"udp_recvmsg\"} 12"));
  EXPECT_THAT(lines,
              Contains("usercopy_check_duration_seconds_sum{callsite=\"udp_recvmsg\"} 5e-06"));
}

TEST(SnapshotFamilies, LatencyBoundsAreTheSameWhateverTheData) {
  v1::Snapshot s;
  auto* empty = s.add_latency();
  empty->set_callsite("a");
  auto* short_slots = s.add_latency();
  short_slots->set_callsite("b");
  short_slots->add_bucket_counts(7);  // only slot 0
  const std::string text = render(s);
  std::vector<std::string> a_bounds, b_bounds;
  for (const auto& line : text_lines(text)) {
    const auto le = line.find("le=");
    if (le == std::string::npos) continue;
    const std::string bound = line.substr(le, line.find('}') - le);
    if (line.find("callsite=\"a\"") != std::string::npos) a_bounds.push_back(bound);
    if (line.find("callsite=\"b\"") != std::string::npos) b_bounds.push_back(bound);
  }
  ASSERT_EQ(a_bounds.size(), 21u);  // 2^3 .. 2^22 ns, then +Inf
  EXPECT_EQ(a_bounds, b_bounds);
  for (int k = 3; k <= 22; ++k) {                // each bound is 2^k ns, in seconds
    const std::string& bound = a_bounds[k - 3];  // le="..."
    EXPECT_NEAR(std::stod(bound.substr(4, bound.size() - 5)), std::ldexp(1.0, k) * 1e-9, 1e-24)
        << bound;
  }
  EXPECT_EQ(a_bounds.back(), "le=\"+Inf\"");
  EXPECT_THAT(text_lines(text),
              Contains("usercopy_check_duration_seconds_bucket{callsite=\"b\",le=\"8e-09\"} 7"));
  EXPECT_THAT(text_lines(text),
              Contains("usercopy_check_duration_seconds_bucket{callsite=\"a\",le=\"+Inf\"} 0"));
}

TEST(SnapshotFamilies, OddCallsiteStringsAreEscaped) {
  v1::Snapshot s;
  auto* c = s.add_checks();
  c->set_callsite("we\"ird\\name\nline");
  c->set_syscall("recvfrom");
  c->set_direction("to_user");
  c->set_calls(1);
  const auto lines = text_lines(render(s));
  // The exposition format escapes the quote and the backslash; the line break is text already
  // ("\x0a", as every name from outside shows one), so no reader sees a second line.
  EXPECT_THAT(lines, Contains("usercopy_checks_total{callsite=\"we\\\"ird\\\\name\\\\x0aline\","
                              "syscall=\"recvfrom\",direction=\"to_user\"} 1"));
}

TEST(SnapshotFamilies, ObjectKindsWithTheirIdentity) {
  v1::Snapshot s;
  auto* o = s.add_object_checks();
  o->set_callsite("udp_recvmsg");
  o->set_object_kind("slab");
  o->set_object("kmalloc-512");
  o->set_region("inside");
  o->set_count(7);
  EXPECT_THAT(text_lines(render(s)),
              Contains("usercopy_object_checks_total{callsite=\"udp_recvmsg\",object_kind=\"slab\","
                       "object=\"kmalloc-512\",region=\"inside\"} 7"));
}

TEST(SnapshotFamilies, InvalidUtf8AndControlBytesAreEscaped) {
  v1::Snapshot s;
  auto* c = s.add_subchecks();
  c->set_callsite("bad\xff\x1b[2J");
  c->set_step("heap_object");
  c->set_count(1);
  // \xff and ESC as text: the exposition format then writes the backslash as "\\".
  EXPECT_THAT(
      text_lines(render(s)),
      Contains(
          "usercopy_subchecks_total{callsite=\"bad\\\\xff\\\\x1b[2J\",step=\"heap_object\"} 1"));
}

TEST(SnapshotFamilies, NoRawKernelAddressIsExported) {
  v1::Snapshot s;
  auto add_check = [&](const char* callsite, uint64_t calls) {
    auto* c = s.add_checks();
    c->set_callsite(callsite);
    c->set_syscall("read");
    c->set_direction("to_user");
    c->set_calls(calls);
  };
  add_check("0xffffffff81a2b3c4", 2);
  add_check("ffffffffc0123456", 3);  // a module address, no 0x
  add_check("udp_recvmsg+0x1a", 4);  // function-relative offsets are fine
  auto* p = s.add_probes();
  p->set_target("__check_object_size");
  p->set_reason("kprobe at 0xFFFFFFFF81000000 refused");
  auto* cpu = s.add_cpu_samples();
  cpu->set_callsite("tcp_recvmsg");
  cpu->set_syscall("ffffffff81000010");
  cpu->set_step("object");
  cpu->set_samples(1);
  const std::string text = render(s);
  EXPECT_THAT(text, Not(HasSubstr("ffffffff")));
  EXPECT_THAT(text, Not(HasSubstr("FFFFFFFF")));
  const auto lines = text_lines(text);
  // Both unsymbolized call sites collapse into one series: a scrape must not carry duplicates.
  EXPECT_THAT(lines,
              Contains("usercopy_checks_total{callsite=\"[kernel address]\",syscall=\"read\","
                       "direction=\"to_user\"} 5"));
  EXPECT_THAT(lines,
              Contains("usercopy_checks_total{callsite=\"udp_recvmsg+0x1a\",syscall=\"read\","
                       "direction=\"to_user\"} 4"));
  EXPECT_THAT(lines, Contains("hucprof_probe_unavailable_info{target=\"__check_object_size\","
                              "reason=\"kprobe at [kernel address] refused\"} 1"));
}

TEST(SnapshotFamilies, EmptySnapshotStillDescribesEveryFamily) {
  const std::string text = render(v1::Snapshot());
  for (const char* family : {"usercopy_checks_total counter",
                             "usercopy_check_bytes_total counter",
                             "usercopy_checks_missed_total counter",
                             "hucprof_missed_runs_info gauge",
                             "usercopy_subchecks_total counter",
                             "usercopy_check_duration_seconds histogram",
                             "usercopy_cpu_samples_total counter",
                             "usercopy_sampled_cpu_samples_total counter",
                             "usercopy_excluded_cpu_samples_total counter",
                             "usercopy_cpu_seconds_total counter",
                             "usercopy_sampled_cpu_seconds_total counter",
                             "usercopy_hardened_enabled gauge",
                             "hucprof_probe_attached gauge",
                             "hucprof_probe_unavailable_info gauge",
                             "hucprof_probe_helper_calls_total counter",
                             "hucprof_probe_offset_mismatches_total counter",
                             "hucprof_dropped_total counter",
                             "hucprof_build_info gauge",
                             "hucprof_drains_total counter",
                             "hucprof_drain_duration_seconds gauge",
                             "hucprof_sample_frequency_hertz gauge",
                             "hucprof_bpf_map_memory_bytes gauge",
                             "hucprof_kallsyms_reloads_total counter"}) {
    EXPECT_THAT(text_lines(text), Contains(std::string("# TYPE ") + family)) << family;
  }
  // HELP is there and says something.
  for (const auto& line : text_lines(text)) {
    if (line.rfind("# HELP ", 0) == 0) {
      EXPECT_GT(line.size(), 30u) << line;
    }
  }
  EXPECT_THAT(text_lines(text), Contains("hucprof_drains_total 0"));
}

TEST(SnapshotCollectable, CollectServesTheLatestSnapshotAndProcessMetrics) {
  SnapshotCollectable collectable;
  collectable.update(udp_flood_snapshot());
  v1::Snapshot next = udp_flood_snapshot();
  next.set_intervals(43);
  collectable.update(next);
  const std::string text = render_text(collectable.Collect());
  const auto lines = text_lines(text);
  EXPECT_THAT(lines, Contains("hucprof_drains_total 43"));
  EXPECT_THAT(lines, Not(Contains("hucprof_drains_total 42")));
  EXPECT_THAT(lines, Contains("# TYPE process_cpu_seconds_total counter"));
  EXPECT_THAT(lines, Contains("# TYPE process_resident_memory_bytes gauge"));
  EXPECT_THAT(lines, Contains("# TYPE process_start_time_seconds gauge"));
  EXPECT_THAT(lines, Contains("# TYPE process_max_fds gauge"));
}

TEST(SnapshotFamilies, ExactChecksByWorkloadNameEachWorkloadAndItsKind) {
  v1::Snapshot snap;
  auto* w = snap.add_workload_checks();
  w->set_workload("nginx.service");
  w->set_workload_kind("unit");
  w->set_calls(3000);
  w->set_bytes(192000);
  const std::string text = render(snap);
  EXPECT_THAT(text, HasSubstr("# TYPE usercopy_workload_checks_total counter"));
  EXPECT_THAT(text, HasSubstr("usercopy_workload_checks_total{workload=\"nginx.service\","
                              "workload_kind=\"unit\"} 3000"));
  EXPECT_THAT(text, HasSubstr("usercopy_workload_check_bytes_total{workload=\"nginx.service\","
                              "workload_kind=\"unit\"} 192000"));
  EXPECT_THAT(render(v1::Snapshot()), Not(HasSubstr("usercopy_workload_checks_total{")));
}

}  // namespace
}  // namespace hucprof
