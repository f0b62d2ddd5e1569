// hucvm_debuginfod: hucprof's own debuginfo search with --debuginfo.debuginfod, for a kernel
// that is not running here (its notes given as a file), as debuginfo_vm.py drives it against a
// real debuginfod server:
//   hucvm_debuginfod --notes FILE --release RELEASE --text-offset HEX --path DIR
// Prints "vmlinux accepted: PATH" (or why not) and the lines at _stext + HEX, one
// "line\tFUNCTION\tFILE\tLINE" each, innermost first. Exit 0 when accepted and resolved.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/symbols/debuginfo_search.h"
#include "debuginfo/kernel_debuginfo.h"

int main(int argc, char** argv) {
  hucprof::DebuginfoSettings settings;
  settings.debuginfod = true;
  uint64_t text_offset = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--notes") settings.kernel_notes = value;
    if (flag == "--release") settings.release = value;
    if (flag == "--text-offset") text_offset = std::strtoull(value.c_str(), nullptr, 16);
    if (flag == "--path") settings.path = value;
  }
  if (settings.release.empty() || text_offset == 0) {
    std::fprintf(stderr, "usage: %s --notes FILE --release R --text-offset HEX --path DIR\n",
                 argv[0]);
    return 2;
  }
  auto debuginfo = hucprof::KernelDebuginfo::find(settings, true);
  const hucprof::DebuginfoReport& r = debuginfo->report();
  if (!debuginfo->ready()) {
    std::printf("vmlinux not accepted: %s\n", r.debuginfod.c_str());
    for (const auto& c : r.looked) std::printf("looked at %s\n", describe(c, r.build_id).c_str());
    return 1;
  }
  std::printf("vmlinux accepted: %s\n%s\n", r.vmlinux.c_str(), r.debuginfod.c_str());
  hucprof::SourceAddress at;
  at.text_offset = text_offset;
  const hucprof::SourceLinesPtr lines = debuginfo->lines(at);
  if (!lines) {
    std::printf("no lines at _stext + 0x%llx\n", static_cast<unsigned long long>(text_offset));
    return 1;
  }
  for (const auto& l : *lines) {
    std::printf("line\t%s\t%s\t%u\n", l.function.c_str(), l.file.c_str(), l.line);
  }
  return 0;
}
