#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "export/metrics/prometheus_exporter.h"
#include "sample_snapshots.h"

namespace hucprof {
namespace {

// Prometheus' own linter over the whole scrape (contract families plus process_*): naming,
// units, HELP, histogram shape. promtool ships with the prometheus package; skipped without it.
TEST(PromtoolLint, ScrapePassesCheckMetrics) {
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "promtool not installed";
  }
  v1::Snapshot snapshot = udp_flood_snapshot();
  auto* latency = snapshot.add_latency();
  latency->set_callsite("udp_recvmsg");
  for (uint64_t slot = 0; slot < 32; ++slot) latency->add_bucket_counts(slot % 4);
  latency->set_sum_ns(123456);
  snapshot.set_busy_cpu_ns(7'000'000'000);
  add_callsite_share(add_prediction(snapshot, "sampling", 300, 0.04, 1 / 0.96), "udp_recvmsg", 0.04,
                     1 / 0.96);
  auto* probe = snapshot.add_probes();
  probe->set_target("__check_object_size");
  probe->set_reason("fentry: EPERM (ftrace locked)");
  snapshot.set_bpf_stats(v1::BPF_STATS_ON);
  auto* program = snapshot.add_bpf_programs();
  program->set_program("huc_sample");
  program->set_runs(4990);
  program->set_run_ns(12'500'000);
  SnapshotCollectable collectable;
  collectable.update(snapshot);

  const std::string path =
      ::testing::TempDir() + "/hucprof-scrape-" + std::to_string(getpid()) + ".txt";
  std::ofstream(path) << render_text(collectable.Collect());
  FILE* pipe = popen(("promtool check metrics < " + path + " 2>&1").c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[512];
  while (fgets(buffer, sizeof(buffer), pipe) != nullptr) output += buffer;
  const int status = pclose(pipe);
  std::remove(path.c_str());
  EXPECT_EQ(status, 0) << output;
  EXPECT_EQ(output, "");
}

}  // namespace
}  // namespace hucprof
