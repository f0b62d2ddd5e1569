// libFuzzer target: a module's debuginfo file may be zstd-compressed whole (Ubuntu's .ko.zst), and
// a file from outside (a download, a path given) must not make libdwfl inflate gigabytes. The
// bound is read from the block headers alone: it must never read past the input (ASan), and
// frames are independent, so a file twice over inflates to at most twice the bound.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/files/compressed_size.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)hucprof::compression_of(bytes);
  const auto bound = hucprof::zstd_inflated_bound(bytes);
  if (!bound) return 0;
  const bool skippable = size >= 4 && (data[0] & 0xF0) == 0x50 && data[1] == 0x2A &&
                         data[2] == 0x4D && data[3] == 0x18;
  HUC_FUZZ_CHECK(hucprof::compression_of(bytes) == "zstd" || skippable,
                 "what has a bound starts with a zstd or skippable frame");
  const std::string twice = std::string(bytes) + std::string(bytes);
  HUC_FUZZ_CHECK(hucprof::zstd_inflated_bound(twice) == 2 * *bound, "frames add up");
  // At most a block (128 KiB) of output per 3 bytes of block header, and RLE/raw blocks say
  // their size in 21 bits: the bound cannot outgrow the input by more than that.
  HUC_FUZZ_CHECK(*bound <= (size / 3 + 1) * ((uint64_t{1} << 21)), "the bound follows the input");
  return 0;
}
