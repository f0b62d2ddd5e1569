// /proc/cmdline and the kernel config text: hardened_usercopy= and CONFIG_HARDENED_USERCOPY*.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/kernel/hardened_state.h"
#include "core/kernel/kernel_params.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (const auto value = hucprof::find_kernel_param(text, "hardened_usercopy")) {
    HUC_FUZZ_CHECK(
        value->data() >= text.data() && value->data() + value->size() <= text.data() + text.size(),
        "the value is a view into the command line");
    hucprof::kernel_strtobool(*value);
  }
  // The same bytes as config text and as command line, with and without the symbol.
  for (const bool present : {false, true}) {
    const auto state = hucprof::evaluate_hardened_usercopy(text, text, present);
    HUC_FUZZ_CHECK(!state.reason.empty(), "the verdict has a reason");
    hucprof::evaluate_hardened_usercopy(std::nullopt, text, present);
  }
  return 0;
}
