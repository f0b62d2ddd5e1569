// `hucprof top --from URL`, through its public parser (core/text/metrics_url.h: spelling only, the
// host is resolved when top fetches, so the fuzzer never touches the network).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/text/metrics_url.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = hucprof::parse_metrics_url(text);
  if (!parsed.ok()) {
    HUC_FUZZ_CHECK(!parsed.error().text.empty(), "an error says why");
    HUC_FUZZ_CHECK(hucprof::one_line(parsed.error().text), "an error is one line");
    return 0;
  }
  const auto& url = parsed.value();
  HUC_FUZZ_CHECK(!url.target.empty() && url.target.front() == '/', "a target is a path");
  HUC_FUZZ_CHECK(url.address.port > 0, "a port to connect to");
  // What messages and the screen show must read back as the same place (without the user).
  auto again = hucprof::parse_metrics_url(url.text());
  HUC_FUZZ_CHECK(again.ok(), "text() parses again");
  const auto& back = again.value();
  HUC_FUZZ_CHECK(back.tls == url.tls && back.address.host == url.address.host &&
                     back.address.port == url.address.port && back.target == url.target &&
                     back.user.empty(),
                 "text() reads back the same URL");
  return 0;
}
