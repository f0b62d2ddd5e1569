// libFuzzer target: --web.config.file text (exporter-toolkit's format) through the same parser
// the daemon uses at start and on every reload. Besides "no crash, no sanitizer report, bounded
// time and memory", a parsed config must be usable as parsed and an error must be one line.
//
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Idaemon \
//     fuzz/web_config_fuzz.cpp daemon/cli/web_config.cpp daemon/cli/safe_yaml.cpp \
//     daemon/cli/duration.cpp -lyaml-cpp -o web_config_fuzz
//   ./web_config_fuzz -max_total_time=60 fuzz/corpus/web_config
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cli/web_config.h"

namespace {

void check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = hucprof::parse_web_config(text, "fuzz.yml", "/etc/hucprof");
  if (const auto* error = std::get_if<std::string>(&parsed)) {
    // One line on stderr at start, one log line on reload.
    check(!error->empty() && error->find('\n') == std::string::npos &&
          error->find('\r') == std::string::npos);
    check(error->rfind("fuzz.yml:", 0) == 0);
    return 0;
  }
  const auto& config = std::get<hucprof::WebConfig>(parsed);
  if (config.tls) {
    const auto& tls = *config.tls;
    check(tls.cert_file.empty() != tls.cert.empty());
    check(tls.key_file.empty() != tls.key.empty());
    check(tls.client_ca_file.empty() || tls.client_ca.empty());
    check(tls.min_version <= tls.max_version);
    for (const std::string* file : {&tls.cert_file, &tls.key_file, &tls.client_ca_file}) {
      check(file->empty() || file->front() == '/');  // resolved against the base directory
    }
  }
  for (const auto& [user, hash] : config.basic_auth_users) {
    check(!user.empty() && user.find(':') == std::string::npos);
    check(hucprof::is_bcrypt_hash(hash));
  }
  for (const auto& [name, value] : config.headers) {
    check(value.find_first_of("\r\n") == std::string::npos);
  }
  check(config.rate_limit_interval.count() == 0 || config.rate_limit_burst >= 1);
  return 0;
}
