// /proc/kallsyms text (KallsymsIndex::parse) and lookups in what it built.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>

#include "core/symbols/kallsyms_index.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  const hucprof::KallsymsIndex index = hucprof::KallsymsIndex::parse(in);
  // Addresses to resolve: the first bytes of the input, and the ends of the address space.
  uint64_t probe = 0;
  std::memcpy(&probe, data, size < sizeof(probe) ? size : sizeof(probe));
  for (const uint64_t address : {probe, uint64_t{0}, ~uint64_t{0}, probe + 1, probe - 1}) {
    if (const auto frame = index.resolve(address)) {
      HUC_FUZZ_CHECK(!frame->name.empty(), "a resolved symbol has a name");
      // The start of the symbol resolves to the same symbol, at offset 0.
      const auto start = index.resolve(address - frame->offset);
      HUC_FUZZ_CHECK(start && start->name == frame->name && start->offset == 0,
                     "a symbol's start resolves to itself");
    }
  }
  index.find_normalized("__check_object_size");
  return 0;
}
