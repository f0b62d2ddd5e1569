// Writes tests/lib/fixture_profile.h's profile through hucprof's pprof writer, for
// test_pprof_reads_profiles.py (Google's pprof) and test_flame_graph_browser.py (Chromium):
//   huc_profile_fixture OUT.pb.gz
#include <cstdio>
#include <fstream>

#include "export/pprof_writer.h"
#include "fixture_profile.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT.pb.gz\n", argv[0]);
    return 2;
  }
  hucprof::StackInterner interner;
  std::ofstream out(argv[1], std::ios::binary);
  out << hucprof::encode_pprof_gzip(hucprof::fixture_profile(interner));
  return out.good() ? 0 : 1;
}
