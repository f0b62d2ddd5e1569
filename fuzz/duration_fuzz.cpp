// --interval and the config's interval: Go-style durations.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cli/duration.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = hucprof::parse_duration(text);
  if (const auto* error = std::get_if<std::string>(&parsed)) {
    HUC_FUZZ_CHECK(!error->empty(), "an error says why");
    return 0;
  }
  const auto duration = std::get<std::chrono::milliseconds>(parsed);
  HUC_FUZZ_CHECK(duration.count() >= 0, "durations are not negative");
  // What messages and --help print parses back to the same duration.
  auto again = hucprof::parse_duration(hucprof::format_duration(duration));
  HUC_FUZZ_CHECK(std::holds_alternative<std::chrono::milliseconds>(again), "format parses");
  HUC_FUZZ_CHECK(std::get<std::chrono::milliseconds>(again) == duration, "format round-trips");
  return 0;
}
