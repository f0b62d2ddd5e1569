// libFuzzer target: a debuginfo file is outside input (a package's, a download's, a path the
// operator gave), and the daemon runs as root on every node. Whatever its bytes, opening it as
// vmlinux and as a module, reading its GNU build-id and looking inline chains up in its DWARF
// must not crash, hang or grow without bound; what is refused is named in one line (doctor
// prints it after the path).
// Whatever the DWARF says, what a lookup hands out is bounded (dwarf_lines.h, DwarfBounds): at
// most 32 inlined calls, names of at most 512 bytes of printable UTF-8, 4 KiB of names in all.
// A downloaded file (debuginfod) is handled by exactly this code once it is in the cache.
//   seeds: ELF files the build compiles from tests/unit/debuginfo/inline_chain.c (the
//          executable standing for vmlinux, the object file standing for a module, the
//          executable with zlib-compressed DWARF, the object file compressed whole with zstd)
//          and from tests/lib/hostile_dwarf.py (long and invalid names, an 80-level chain),
//          handed over by ctest in FUZZ_SEED_FILES; fuzz/corpus/debug_file/ holds inputs that
//          once failed.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/base/utf8.h"
#include "debuginfo/debug_file.h"
#include "debuginfo/dwarf_lines.h"
#include "fuzz_check.h"

namespace {

using namespace hucprof;

// One memory file for all inputs, opened by path as the daemon opens a debuginfo file.
const std::string& input_path(const uint8_t* data, size_t size) {
  static const int fd = memfd_create("huc-debug-file-fuzz", MFD_CLOEXEC);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  HUC_FUZZ_CHECK(fd >= 0, "memfd_create");
  HUC_FUZZ_CHECK(ftruncate(fd, 0) == 0, "ftruncate");
  for (size_t done = 0; done < size;) {
    const ssize_t n = pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    HUC_FUZZ_CHECK(n > 0, "pwrite");
    done += static_cast<size_t>(n);
  }
  return path;
}

bool is_hex(const std::string& s) {
  if (s.size() % 2 != 0) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

void check_refusal(const std::string& error) {
  HUC_FUZZ_CHECK(!error.empty() && one_line(error), "a refused file is named in one line");
}

void check_facts(const DebugFileFacts& facts, size_t size) {
  HUC_FUZZ_CHECK(is_hex(facts.build_id), "the build-id is lower-case hex");
  HUC_FUZZ_CHECK(facts.build_id.size() <= 2 * size, "the build-id comes from the file");
}

// Valid UTF-8 without C0, DEL or C1 controls: a label value and a proto3 string as it is.
bool printable(std::string_view text) {
  while (!text.empty()) {
    const size_t n = utf8_sequence_length(text);
    if (n == 0) return false;
    const auto c = static_cast<unsigned char>(text[0]);
    if (n == 1 && (c < 0x20 || c == 0x7f)) return false;
    if (n == 2 && c == 0xC2 && static_cast<unsigned char>(text[1]) < 0xA0) return false;
    text.remove_prefix(n);
  }
  return true;
}

void check_lines(const SourceLinesPtr& lines) {
  if (!lines) return;
  HUC_FUZZ_CHECK(!lines->empty(), "an answer has at least the frame's own function");
  HUC_FUZZ_CHECK(lines->size() <= DwarfBounds::kMaxInlineDepth + 1, "the chain is bounded");
  size_t total = 0;
  for (const SourceLine& l : *lines) {
    HUC_FUZZ_CHECK(!l.function.empty(), "every inline frame has a name");
    HUC_FUZZ_CHECK(l.function.size() <= DwarfBounds::kMaxNameBytes, "a function name is bounded");
    HUC_FUZZ_CHECK(l.file.size() <= DwarfBounds::kMaxNameBytes, "a file name is bounded");
    HUC_FUZZ_CHECK(printable(l.function) && printable(l.file), "names are printable UTF-8");
    total += l.function.size() + l.file.size();
  }
  HUC_FUZZ_CHECK(total <= DwarfBounds::kMaxChainNameBytes, "a chain's names are bounded");
}

// The seeds' functions lie within the first 0x200 bytes after _stext (and udp_recvmsg's first
// 0x80 bytes): every offset there reaches the inline chains; the ends of the address space
// reach the range arithmetic.
constexpr uint64_t kProbeSpan = 0x200;
constexpr uint64_t kFarOffsets[] = {~uint64_t{0}, ~uint64_t{0} - 1, uint64_t{1} << 63};

void look_up_vmlinux(const std::string& path, size_t size) {
  auto opened = VmlinuxFile::open(path);
  if (!opened.ok()) return check_refusal(opened.error().text);
  VmlinuxFile& file = *opened.value();
  check_facts(file.facts(), size);
  for (uint64_t offset = 0; offset < kProbeSpan; ++offset) check_lines(file.lines(offset));
  file.end_batch();  // the pages go, the parse stays: lookups after it must still work
  for (uint64_t offset : kFarOffsets) check_lines(file.lines(offset));
  check_lines(file.lines(kProbeSpan / 2));
  file.end_batch();
}

void look_up_module(const std::string& path, size_t size) {
  auto opened = ModuleFile::open(path);
  if (!opened.ok()) return check_refusal(opened.error().text);
  ModuleFile& file = *opened.value();
  check_facts(file.facts(), size);
  for (uint64_t offset = 0; offset < kProbeSpan / 4; ++offset) {
    check_lines(file.lines("udp_recvmsg", offset));
  }
  for (const char* symbol : {"__check_object_size", "_copy_to_iter", "main", ""}) {
    check_lines(file.lines(symbol, 0));
  }
  for (uint64_t offset : kFarOffsets) check_lines(file.lines("udp_recvmsg", offset));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = input_path(data, size);
  // The daemon opens a vmlinux candidate one way and a module's another: every input both ways.
  look_up_vmlinux(path, size);
  look_up_module(path, size);
  return 0;
}
