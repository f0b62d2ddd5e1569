// Writes tests/lib/fixture_profile.h's profile through hucprof's pprof writer, for
// test_pprof_reads_profiles.py (Google's pprof) and test_flame_graph_browser.py (Chromium):
//   huc_profile_fixture [--with-source] OUT.pb.gz
// --with-source: the profile as hucprof records it with the kernel's debuginfo (inline frames,
// files and lines).
#include <cstdio>
#include <cstring>
#include <fstream>

#include "export/pprof_writer.h"
#include "fixture_profile.h"

int main(int argc, char** argv) {
  const bool with_source = argc == 3 && std::strcmp(argv[1], "--with-source") == 0;
  if (argc != 2 && !with_source) {
    std::fprintf(stderr, "usage: %s [--with-source] OUT.pb.gz\n", argv[0]);
    return 2;
  }
  hucprof::StackInterner interner;
  std::ofstream out(argv[argc - 1], std::ios::binary);
  out << hucprof::encode_pprof_gzip(with_source ? hucprof::fixture_profile_with_source(interner)
                                                : hucprof::fixture_profile(interner));
  return out.good() ? 0 : 1;
}
