// Log messages carry outside text (file names, YAML keys, kernel symbols, libbpf's verifier log);
// in logfmt and json every message must still be exactly one line without raw control bytes.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "log/log_line.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view message(reinterpret_cast<const char*>(data), size);
  for (const auto format : {hucprof::LogFormat::Logfmt, hucprof::LogFormat::Json}) {
    const std::string line = hucprof::render_log_line(
        format, {std::chrono::system_clock::time_point{}, "info", message}, false);
    for (const char c : line) {
      HUC_FUZZ_CHECK(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f,
                     "no raw control byte in a structured log line");
    }
  }
  return 0;
}
