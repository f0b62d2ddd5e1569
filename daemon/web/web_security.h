#pragma once
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <boost/asio/ssl/context.hpp>

#include "core/base/result.h"
#include "web/rate_limiter.h"
#include "web_input/basic_auth.h"
#include "web_input/web_config.h"

namespace hucprof {

// What the web server enforces, built from one version of the web config: the TLS context
// (certificates loaded), the authenticator and the rate limiter.
struct WebSecurity {
  WebConfig config;
  std::shared_ptr<boost::asio::ssl::context> tls;  // null: plain HTTP
  std::shared_ptr<BasicAuthenticator> auth;        // null: no basic_auth_users
  std::shared_ptr<RateLimiter> limiter;            // null: no rate_limit
  // What loads but weakens it (web_config_warnings, an expired certificate): logged at load.
  std::vector<std::string> warnings;

  static Result<std::shared_ptr<const WebSecurity>> build(WebConfig config);
};

// --web.config.file, kept current as exporter-toolkit keeps it (it re-reads the file per
// connection and per request): the file and the certificate, key and CA files it names are
// checked for changes once every kCheckPeriod, and a changed set is loaded anew. The server's
// timer does the checking, so no request waits for a stat or a reload. A new version that does
// not load is logged once and the last good one stays in force, so a half-written file or a bad
// certificate never takes /metrics down.
class WebSecuritySource {
 public:
  static constexpr std::chrono::seconds kCheckPeriod{1};

  // No file: plain HTTP, no authentication.
  WebSecuritySource();
  // The file as it is now; an error (one line naming the file) when it does not load.
  static Result<std::unique_ptr<WebSecuritySource>> load(const std::string& path);

  // The version in force: what each new connection and each request is served with.
  std::shared_ptr<const WebSecurity> current() const;
  // Stats the files and loads a changed set; called every kCheckPeriod from one thread at a time.
  void check_for_changes();
  // TLS or not is fixed at start, as in exporter-toolkit: a listener does not change protocol.
  bool tls() const { return tls_; }

 private:
  struct FileStamp {
    std::string path;
    bool exists = false;
    long long device = 0, inode = 0, size = 0, mtime_ns = 0, ctime_ns = 0;
    bool operator==(const FileStamp&) const = default;
  };
  static FileStamp stamp_file(const std::string& path);
  // The certificate, key and CA files a version of the config reads.
  static std::vector<std::string> named_files(const WebConfig& config);
  void reload(std::vector<FileStamp> now);
  void replace(std::shared_ptr<const WebSecurity> security);

  std::string path_;
  bool tls_ = false;
  mutable std::mutex mutex_;  // guards current_ only: a reload is built without it
  std::shared_ptr<const WebSecurity> current_;
  std::vector<FileStamp> stamps_;  // of the last version tried, good or not
};

}  // namespace hucprof
