// --web.listen-address, through its public parser (core/text/listen_address.h: spelling only, host
// names are resolved when the server starts, so the fuzzer never touches the network).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/text/listen_address.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = hucprof::parse_listen_address(text);
  if (!parsed.ok()) {
    HUC_FUZZ_CHECK(!parsed.error().text.empty(), "an error says why");
    HUC_FUZZ_CHECK(parsed.error().text.find('\n') == std::string::npos, "an error is one line");
    return 0;
  }
  const auto& address = parsed.value();
  HUC_FUZZ_CHECK((address.kind == hucprof::ListenAddress::Kind::Any) == address.host.empty(),
                 "only the wildcard has no host");
  // What the log and the landing page print must parse back to the same address.
  auto again = hucprof::parse_listen_address(address.text());
  HUC_FUZZ_CHECK(again.ok(), "text() parses again");
  const auto* back = &again.value();
  HUC_FUZZ_CHECK(
      back->kind == address.kind && back->host == address.host && back->port == address.port,
      "text() reads back the same address");
  return 0;
}
