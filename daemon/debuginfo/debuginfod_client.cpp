#include "debuginfo/debuginfod_client.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "core/files/file_text.h"
#include "debuginfo/debug_file.h"

namespace hucprof {

// libdebuginfod's client interface (elfutils/debuginfod.h, stable since elfutils 0.178),
// declared here so that building hucprof needs no libdebuginfod-dev, for any architecture.
#define DEBUGINFOD_URLS_ENV_VAR "DEBUGINFOD_URLS"
#define DEBUGINFOD_SONAME "libdebuginfod.so.1"
using debuginfod_progressfn_t = int (*)(debuginfod_client*, long, long);

struct DebuginfodClient::Api {
  debuginfod_client* (*begin)() = nullptr;
  void (*end)(debuginfod_client*) = nullptr;
  // A build-id length of 0: the id is a NUL-terminated hex string.
  int (*find_debuginfo)(debuginfod_client*, const unsigned char*, int, char**) = nullptr;
  void (*set_progressfn)(debuginfod_client*, debuginfod_progressfn_t) = nullptr;
  void (*set_user_data)(debuginfod_client*, void*) = nullptr;
  void* (*get_user_data)(debuginfod_client*) = nullptr;
};

namespace {

template <typename F>
bool load(void* library, const char* name, F& into) {
  into = reinterpret_cast<F>(dlsym(library, name));
  return into != nullptr;
}

// The library is loaded once per process; its progress callback finds its client through this.
void* (*g_get_user_data)(debuginfod_client*) = nullptr;

int progress_of(debuginfod_client* client, long done, long total) {
  auto* self = static_cast<DebuginfodClient*>(g_get_user_data(client));
  return self ? self->progress(done, total) : 0;
}

// A positive whole number from the environment, read as libdebuginfod reads its limits (atol:
// the leading digits, "30s" is 30), so both apply the same one.
std::optional<uint64_t> positive_env(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr) return std::nullopt;
  while (*text == ' ' || *text == '\t') ++text;
  uint64_t value = 0;
  const auto [at, ec] = std::from_chars(text, text + std::strlen(text), value);
  if (ec != std::errc() || value == 0) return std::nullopt;
  return value;
}

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// "a FIFO", "a regular file": what st_mode says is at a path.
std::string file_kind_words(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a file";
}

std::string parent_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

DownloadLimits download_limits_from_environment() {
  DownloadLimits limits;
  if (const auto s = positive_env("DEBUGINFOD_MAXTIME")) limits.deadline = std::chrono::seconds(*s);
  if (const auto s = positive_env("DEBUGINFOD_TIMEOUT")) {
    limits.stall_window = std::chrono::seconds(*s);
  }
  limits.max_bytes =
      std::min(positive_env("DEBUGINFOD_MAXSIZE").value_or(kMaxDebugFileBytes), kMaxDebugFileBytes);
  return limits;
}

DebuginfodCache DebuginfodCache::from_environment() {
  DebuginfodCache cache;
  if (const std::string path = env_or_empty("DEBUGINFOD_CACHE_PATH"); !path.empty()) {
    cache.path = path;
    cache.named_by = "DEBUGINFOD_CACHE_PATH";
    return cache;
  }
  const std::string home = std::getenv("HOME") ? std::getenv("HOME") : "/";
  const std::string legacy = home + "/.debuginfod_client_cache";
  struct stat st {};
  if (::stat(legacy.c_str(), &st) == 0) {
    cache.path = legacy;
    cache.named_by = "HOME";
    return cache;
  }
  // libdebuginfod makes the XDG directory too, one level.
  cache.makeable = 2;
  if (const std::string xdg = env_or_empty("XDG_CACHE_HOME"); !xdg.empty()) {
    cache.path = xdg + "/debuginfod_client";
    cache.named_by = "XDG_CACHE_HOME";
  } else {
    cache.path = home + "/.cache/debuginfod_client";
    cache.named_by = "HOME";
  }
  return cache;
}

std::string DebuginfodCache::problem(std::string_view build_id_hex) const {
  const std::string what = "the debuginfod cache " + path + " (from " + named_by + ")";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return what + ": " + std::strerror(errno);
    // Missing: libdebuginfod makes it if the directory above what it makes is there.
    std::string above = path;
    for (int i = 0; i < makeable; ++i) above = parent_of(above);
    struct stat up {};
    if (::stat(above.c_str(), &up) != 0) {
      return what + " cannot be made: " + above + ": " + std::strerror(errno);
    }
    if (!S_ISDIR(up.st_mode))
      return what + " cannot be made: " + above + " is " + file_kind_words(up.st_mode);
    return "";
  }
  if (!S_ISDIR(st.st_mode))
    return what + " is " + file_kind_words(st.st_mode) + ", not a directory";
  if (::access(path.c_str(), W_OK | X_OK) != 0) return what + ": " + std::strerror(errno);
  const std::string entry = path + "/" + std::string(build_id_hex) + "/debuginfo";
  if (::stat(entry.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) {
      return entry + " in the debuginfod cache is " + file_kind_words(st.st_mode) + ", not a file";
    }
  } else if (errno != ENOENT) {
    return entry + " in the debuginfod cache: " + std::strerror(errno);
  }
  return "";
}

Result<std::unique_ptr<DebuginfodClient>> DebuginfodClient::open() {
  const char* urls = std::getenv(DEBUGINFOD_URLS_ENV_VAR);
  if (urls == nullptr || *urls == '\0') {
    return Error{std::string(DEBUGINFOD_URLS_ENV_VAR) +
                 " is not set: no debuginfod server to ask (e.g. " DEBUGINFOD_URLS_ENV_VAR
                 "=https://debuginfod.debian.net)"};
  }
  std::unique_ptr<DebuginfodClient> self(new DebuginfodClient());
  self->urls_ = urls;
  self->limits_ = download_limits_from_environment();
  self->library_ = dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (self->library_ == nullptr) {
    const char* why = dlerror();
    return Error{std::string(why ? why : DEBUGINFOD_SONAME ": cannot be loaded") +
                 " (Debian: apt-get install libdebuginfod1)"};
  }
  self->api_ = std::make_unique<Api>();
  Api& a = *self->api_;
  if (!load(self->library_, "debuginfod_begin", a.begin) ||
      !load(self->library_, "debuginfod_end", a.end) ||
      !load(self->library_, "debuginfod_find_debuginfo", a.find_debuginfo) ||
      !load(self->library_, "debuginfod_set_progressfn", a.set_progressfn) ||
      !load(self->library_, "debuginfod_set_user_data", a.set_user_data) ||
      !load(self->library_, "debuginfod_get_user_data", a.get_user_data)) {
    return Error{DEBUGINFOD_SONAME " lacks the client functions hucprof uses"};
  }
  self->client_ = a.begin();
  if (self->client_ == nullptr) return Error{"debuginfod_begin failed"};
  g_get_user_data = a.get_user_data;
  a.set_user_data(self->client_, self.get());
  a.set_progressfn(self->client_, progress_of);
  return self;
}

DebuginfodClient::~DebuginfodClient() {
  if (client_ && api_) api_->end(client_);
  if (library_) dlclose(library_);
}

int DebuginfodClient::progress(long done, long total) {
  if (cancelled_) {
    gave_up_ = "cancelled";
    return 1;
  }
  if (!watch_) return 0;
  gave_up_ = watch_->progress(DownloadWatch::Clock::now(), done, total);
  return gave_up_.empty() ? 0 : 1;
}

Result<std::string> DebuginfodClient::fetch(std::string_view build_id_hex) {
  const std::string id(build_id_hex);
  if (cancelled_) return Error{"cancelled"};
  if (const std::string problem = DebuginfodCache::from_environment().problem(id);
      !problem.empty()) {
    return Error{problem};
  }
  watch_.emplace(limits_, DownloadWatch::Clock::now());
  gave_up_.clear();
  char* path = nullptr;
  // A build-id length of 0: the id is given as a hex string.
  const int fd =
      api_->find_debuginfo(client_, reinterpret_cast<const unsigned char*>(id.c_str()), 0, &path);
  if (fd < 0) {
    std::free(path);
    if (!gave_up_.empty()) return Error{gave_up_};
    const std::string from = "the servers in " DEBUGINFOD_URLS_ENV_VAR " (" + urls_ + ")";
    switch (-fd) {
      case ENOENT:
        return Error{"no server in " DEBUGINFOD_URLS_ENV_VAR " (" + urls_ + ") has build-id " + id};
      case ETIME:
        return Error{from + " timed out (DEBUGINFOD_TIMEOUT, DEBUGINFOD_MAXTIME)"};
      case EFBIG:
        return Error{from + " offer a file larger than DEBUGINFOD_MAXSIZE"};
      default:
        return Error{from + " gave no file for build-id " + id + ": " + std::strerror(-fd)};
    }
  }
  ::close(fd);
  std::string fetched = path ? path : "";
  std::free(path);
  return fetched;
}

}  // namespace hucprof
