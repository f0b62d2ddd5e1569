// --web.listen-address, through its public parser. Host names are resolved: here by a stand-in
// for getaddrinfo(3), so the fuzzer neither waits on DNS nor sends queries.
#include <netdb.h>
#include <netinet/in.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "export/listen_address.h"
#include "fuzz_check.h"

// "localhost" resolves to 127.0.0.1, everything else is unknown: both paths get exercised.
extern "C" int getaddrinfo(const char* node, const char*, const struct addrinfo*,
                           struct addrinfo** res) {
  if (node == nullptr || std::strcmp(node, "localhost") != 0) return EAI_NONAME;
  auto* info = static_cast<addrinfo*>(std::calloc(1, sizeof(addrinfo) + sizeof(sockaddr_in)));
  auto* addr = reinterpret_cast<sockaddr_in*>(info + 1);
  addr->sin_family = AF_INET;
  addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  info->ai_family = AF_INET;
  info->ai_socktype = SOCK_STREAM;
  info->ai_addr = reinterpret_cast<sockaddr*>(addr);
  info->ai_addrlen = sizeof(sockaddr_in);
  *res = info;
  return 0;
}

extern "C" void freeaddrinfo(struct addrinfo* res) { std::free(res); }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = hucprof::parse_listen_address(text);
  if (const auto* error = std::get_if<std::string>(&parsed)) {
    HUC_FUZZ_CHECK(!error->empty(), "an error says why");
    return 0;
  }
  const auto& address = std::get<hucprof::ListenAddress>(parsed);
  HUC_FUZZ_CHECK((address.family == hucprof::ListenAddress::Family::Any) == address.host.empty(),
                 "only the wildcard has no host");
  return 0;
}
