// Writes tests/lib/fixture_profile.h's profile through hucprof's pprof writer, for
// test_pprof_reads_profiles.py (Google's pprof) and test_flame_graph_browser.py (Chromium):
//   huc_profile_fixture [--user-samples N] [--with-source] [--with-tasks] OUT.pb.gz
// --user-samples replaces the fixture's 400 user-mode samples: the same checks in more busy CPU
// are a smaller share of it (the checks-light side of a pprof -diff_base). --with-source: the
// profile as hucprof records it with the kernel's debuginfo (inline frames, files and lines).
// --with-tasks: as `hucprof record` writes it, each sampled stack labelled with a comm and a pid
// (fuzz/corpus/profile_reader/task_labels.pb.gz is this).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string_view>

#include "export/views/pprof_writer.h"
#include "fixture_profile.h"

int main(int argc, char** argv) {
  const char* out_path = nullptr;
  long user_samples = -1;
  bool with_source = false;
  bool with_tasks = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--user-samples" && i + 1 < argc) {
      char* end = nullptr;
      user_samples = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || user_samples < 0) user_samples = -2;
    } else if (arg == "--with-source") {
      with_source = true;
    } else if (arg == "--with-tasks") {
      with_tasks = true;
    } else if (!out_path && !arg.starts_with("-")) {
      out_path = argv[i];
    } else {
      out_path = nullptr;
      break;
    }
  }
  if (!out_path || user_samples == -2) {
    std::fprintf(stderr, "usage: %s [--user-samples N] [--with-source] [--with-tasks] OUT.pb.gz\n",
                 argv[0]);
    return 2;
  }
  hucprof::StackInterner interner;
  hucprof::StackProfile profile = with_source ? hucprof::fixture_profile_with_source(interner)
                                              : hucprof::fixture_profile(interner);
  if (user_samples >= 0) profile.sampled_by_context["user"] = static_cast<uint64_t>(user_samples);
  int64_t pid = 4242;
  for (hucprof::ProfileSample& s : profile.samples) {
    if (with_tasks && s.values[hucprof::kSamples] > 0) {
      s.labels = interner.with_task(s.labels, pid == 4242 ? "iperf3" : "ip", pid);
      pid += 1000;
    }
  }
  std::ofstream out(out_path, std::ios::binary);
  out << hucprof::encode_pprof_gzip(profile);
  return out.good() ? 0 : 1;
}
