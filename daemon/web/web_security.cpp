#include "web/web_security.h"

#include <sys/stat.h>

#include <spdlog/spdlog.h>

#include "web/tls_context.h"

namespace hucprof {
namespace {

std::string describe(const WebConfig& config) {
  std::string what = config.tls ? "TLS" : "plain HTTP";
  if (config.tls && config.tls->client_auth == ClientAuth::RequireAndVerifyClientCert) {
    what += " with client certificates";
  }
  if (config.requires_auth()) {
    what += ", basic auth (" + std::to_string(config.basic_auth_users.size()) + " user" +
            (config.basic_auth_users.size() == 1 ? "" : "s") + ")";
  }
  if (config.rate_limit_interval.count() > 0) what += ", rate limited";
  return what;
}

void warn_about(const std::string& path, const WebSecurity& security) {
  for (const std::string& warning : security.warnings) {
    spdlog::warn("web config {}: {}", path, warning);
  }
}

}  // namespace

Result<std::shared_ptr<const WebSecurity>> WebSecurity::build(WebConfig config) {
  auto security = std::make_shared<WebSecurity>();
  security->warnings = web_config_warnings(config);
  if (config.tls) {
    auto context = make_tls_context(*config.tls, &security->warnings);
    if (!context.ok()) return context.error();
    security->tls = context.value();
  }
  if (config.requires_auth()) {
    security->auth = std::make_shared<BasicAuthenticator>(config.basic_auth_users);
  }
  if (config.rate_limit_interval.count() > 0) {
    security->limiter =
        std::make_shared<RateLimiter>(config.rate_limit_interval, config.rate_limit_burst);
  }
  security->config = std::move(config);
  return std::shared_ptr<const WebSecurity>(std::move(security));
}

WebSecuritySource::WebSecuritySource() : current_(std::make_shared<WebSecurity>()) {}

Result<std::unique_ptr<WebSecuritySource>> WebSecuritySource::load(const std::string& path) {
  std::unique_ptr<WebSecuritySource> source(new WebSecuritySource());
  source->path_ = path;
  // Each file is stamped before it is read: a change while loading is seen at the next check.
  std::vector<FileStamp> stamps{stamp_file(path)};
  auto config = load_web_config(path);
  if (!config.ok()) return config.error();
  for (const std::string& file : named_files(config.value())) stamps.push_back(stamp_file(file));
  auto security = WebSecurity::build(std::move(config).value());
  if (!security.ok()) return Error{path + ": " + security.error().text, security.error().exit_code};
  source->current_ = security.value();
  source->tls_ = source->current_->tls != nullptr;
  source->stamps_ = std::move(stamps);
  spdlog::info("web config {}: {}", path, describe(source->current_->config));
  warn_about(path, *source->current_);
  return source;
}

std::vector<std::string> WebSecuritySource::named_files(const WebConfig& config) {
  std::vector<std::string> files;
  if (config.tls) {
    for (const std::string* file :
         {&config.tls->cert_file, &config.tls->key_file, &config.tls->client_ca_file}) {
      if (!file->empty()) files.push_back(*file);
    }
  }
  return files;
}

WebSecuritySource::FileStamp WebSecuritySource::stamp_file(const std::string& path) {
  FileStamp s{path};
  struct stat st {};
  // stat, not lstat: a Kubernetes secret update swaps a symlink, the target changes.
  if (::stat(path.c_str(), &st) == 0) {
    s.exists = true;
    s.device = static_cast<long long>(st.st_dev);
    s.inode = static_cast<long long>(st.st_ino);
    s.size = static_cast<long long>(st.st_size);
    s.mtime_ns = st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec;
    s.ctime_ns = st.st_ctim.tv_sec * 1'000'000'000LL + st.st_ctim.tv_nsec;
  }
  return s;
}

std::shared_ptr<const WebSecurity> WebSecuritySource::current() const {
  if (path_.empty()) return current_;  // no file: never changes
  std::lock_guard lock(mutex_);
  return current_;
}

void WebSecuritySource::replace(std::shared_ptr<const WebSecurity> security) {
  std::lock_guard lock(mutex_);
  current_ = std::move(security);
}

void WebSecuritySource::check_for_changes() {
  if (path_.empty()) return;
  std::vector<FileStamp> stamps;
  for (const FileStamp& old : stamps_) stamps.push_back(stamp_file(old.path));
  if (stamps != stamps_) reload(std::move(stamps));
}

void WebSecuritySource::reload(std::vector<FileStamp> now) {
  // Remembered even when the new version fails, so it is reported once, not every second.
  stamps_ = std::move(now);
  auto config = load_web_config(path_);
  if (!config.ok()) {
    spdlog::error("web config changed but does not load, keeping the last good one: {}",
                  config.error().text);
    return;
  }
  // From now on, watch the files this version names.
  stamps_.resize(1);
  for (const std::string& file : named_files(config.value())) {
    stamps_.push_back(stamp_file(file));
  }
  if (config.value().tls.has_value() != tls_) {
    spdlog::error(
        "web config {} changed but does not load, keeping the last good one: tls_server_config "
        "can only be turned {} by a restart",
        path_, tls_ ? "off" : "on");
    return;
  }
  auto security = WebSecurity::build(std::move(config.value()));
  if (!security.ok()) {
    spdlog::error("web config changed but does not load, keeping the last good one: {}: {}", path_,
                  security.error().text);
    return;
  }
  const auto& loaded = security.value();
  spdlog::info("web config {} reloaded: {}", path_, describe(loaded->config));
  warn_about(path_, *loaded);
  replace(loaded);
}

}  // namespace hucprof
