// The YAML config (--config FILE, re-read on SIGHUP): safe_yaml's screen, the flattener and every
// setting's validation, on text as it would come from the file.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cli/config_file.h"
#include "cli/settings.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = hucprof::parse_config_text(text, "fuzz.yaml");
  if (!parsed.ok()) {
    HUC_FUZZ_CHECK(hucprof::one_line(parsed.error().text), "config error is one line");
    return 0;
  }
  hucprof::RunOptions options;
  const auto error = hucprof::apply_config_entries(parsed.value(), "fuzz.yaml", options);
  if (error) {
    HUC_FUZZ_CHECK(hucprof::one_line(*error), "setting error is one line");
    return 0;
  }
  // What was accepted reads back the same: what --help and SIGHUP's messages show is what runs.
  // A repeatable setting shows its values joined by ',' (no listen address holds one).
  for (const hucprof::Setting& setting : hucprof::settings()) {
    hucprof::RunOptions again;
    const std::string shown = setting.show(options);
    bool accepted = true;
    size_t start = 0;
    for (int item = 0; accepted; ++item) {
      const size_t comma = setting.append ? shown.find(',', start) : std::string::npos;
      const std::string value = shown.substr(start, comma - start);
      const auto apply = item == 0 ? setting.apply : setting.append;
      accepted = apply(value, again).empty();
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    HUC_FUZZ_CHECK(accepted, "shown value is accepted");
    HUC_FUZZ_CHECK(setting.show(again) == shown, "shown value reads back the same");
  }
  return 0;
}
