// --interval and the config's interval: Go-style durations.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/text/duration.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = hucprof::parse_duration(text);
  if (!parsed.ok()) {
    HUC_FUZZ_CHECK(!parsed.error().text.empty(), "an error says why");
    return 0;
  }
  const auto duration = parsed.value();
  HUC_FUZZ_CHECK(duration.count() >= 0, "durations are not negative");
  // What messages and --help print parses back to the same duration.
  auto again = hucprof::parse_duration(hucprof::format_duration(duration));
  HUC_FUZZ_CHECK(again.ok(), "format parses");
  HUC_FUZZ_CHECK(again.value() == duration, "format round-trips");
  return 0;
}
