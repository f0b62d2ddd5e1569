// `hucprof top --from URL` reads a page from the network: any bytes, through the public reader
// (core/drain/metrics_snapshot.h). Its errors are one line of words, and never carry the page's
// bytes to the terminal they are printed on.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/drain/metrics_snapshot.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto snapshot = hucprof::snapshot_from_metrics(text);
  if (snapshot.ok()) return 0;
  const std::string& error = snapshot.error().text;
  HUC_FUZZ_CHECK(!error.empty(), "an error says why");
  for (const char c : error) {
    const auto byte = static_cast<unsigned char>(c);
    HUC_FUZZ_CHECK(byte >= 0x20 && byte != 0x7f, "an error holds no control byte");
  }
  return 0;
}
