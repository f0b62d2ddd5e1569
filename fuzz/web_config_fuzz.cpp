// libFuzzer target: --web.config.file text (exporter-toolkit's format) through the same parser
// the daemon uses at start and on every reload. Besides "no crash, no sanitizer report, bounded
// time and memory", a parsed config must be usable as parsed and an error must be one line.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "web_input/web_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = hucprof::parse_web_config(text, "fuzz.yml", "/etc/hucprof");
  if (!parsed.ok()) {
    // One line on stderr at start, one log line on reload.
    HUC_FUZZ_CHECK(!parsed.error().text.empty() && hucprof::one_line(parsed.error().text) &&
                       parsed.error().text.find('\r') == std::string::npos,
                   "an error is one line");
    HUC_FUZZ_CHECK(parsed.error().text.rfind("fuzz.yml:", 0) == 0, "an error names the file");
    return 0;
  }
  const auto& config = parsed.value();
  if (config.tls) {
    const auto& tls = *config.tls;
    HUC_FUZZ_CHECK(tls.cert_file.empty() != tls.cert.empty(), "one certificate: file or inline");
    HUC_FUZZ_CHECK(tls.key_file.empty() != tls.key.empty(), "one key: file or inline");
    HUC_FUZZ_CHECK(tls.client_ca_file.empty() || tls.client_ca.empty(),
                   "at most one client CA: file or inline");
    HUC_FUZZ_CHECK(tls.min_version <= tls.max_version, "min_version <= max_version");
    for (const std::string* file : {&tls.cert_file, &tls.key_file, &tls.client_ca_file}) {
      HUC_FUZZ_CHECK(file->empty() || file->front() == '/',
                     "files are resolved against the base directory");
    }
  }
  for (const auto& [user, hash] : config.basic_auth_users) {
    HUC_FUZZ_CHECK(!user.empty() && user.find(':') == std::string::npos,
                   "a user is non-empty without a colon");
    HUC_FUZZ_CHECK(hucprof::is_bcrypt_hash(hash), "a password is a bcrypt hash");
  }
  for (const auto& [name, value] : config.headers) {
    HUC_FUZZ_CHECK(value.find_first_of("\r\n") == std::string::npos, "a header value is one line");
  }
  HUC_FUZZ_CHECK(config.rate_limit_interval.count() == 0 || config.rate_limit_burst >= 1,
                 "a rate limit has a burst of at least 1");
  return 0;
}
