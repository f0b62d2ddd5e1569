// CPU lists as the kernel prints them (/sys/devices/system/cpu/online): one perf event is opened
// per listed CPU, so a CPU listed twice would be sampled twice.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/text/cpu_list.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto cpus = hucprof::parse_cpu_list(text);
  if (!cpus) return 0;
  for (size_t i = 0; i < cpus->size(); ++i) {
    HUC_FUZZ_CHECK((*cpus)[i] >= 0 && (*cpus)[i] <= 65535, "CPU numbers in range");
    HUC_FUZZ_CHECK(i == 0 || (*cpus)[i - 1] < (*cpus)[i], "each CPU once, ascending");
  }
  return 0;
}
