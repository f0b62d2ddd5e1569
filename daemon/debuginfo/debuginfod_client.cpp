#include "debuginfo/debuginfod_client.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

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

// Non-zero ends the transfer: how cancel() reaches a download in progress.
int progress(debuginfod_client* client, long, long) {
  const auto* self = static_cast<const DebuginfodClient*>(g_get_user_data(client));
  return self && self->cancelled() ? 1 : 0;
}

}  // namespace

Result<std::unique_ptr<DebuginfodClient>> DebuginfodClient::open() {
  const char* urls = std::getenv(DEBUGINFOD_URLS_ENV_VAR);
  if (urls == nullptr || *urls == '\0') {
    return Error{std::string(DEBUGINFOD_URLS_ENV_VAR) +
                 " is not set: no debuginfod server to ask (e.g. " DEBUGINFOD_URLS_ENV_VAR
                 "=https://debuginfod.debian.net)"};
  }
  std::unique_ptr<DebuginfodClient> self(new DebuginfodClient());
  self->urls_ = urls;
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
  a.set_progressfn(self->client_, progress);
  return self;
}

DebuginfodClient::~DebuginfodClient() {
  if (client_ && api_) api_->end(client_);
  if (library_) dlclose(library_);
}

Result<std::string> DebuginfodClient::fetch(std::string_view build_id_hex) {
  const std::string id(build_id_hex);
  char* path = nullptr;
  // A build-id length of 0: the id is given as a hex string.
  const int fd =
      api_->find_debuginfo(client_, reinterpret_cast<const unsigned char*>(id.c_str()), 0, &path);
  if (fd < 0) {
    if (cancelled_) return Error{"cancelled"};
    return Error{"no server in " DEBUGINFOD_URLS_ENV_VAR " (" + urls_ + ") gave build-id " + id +
                 ": " + std::strerror(-fd)};
  }
  ::close(fd);
  std::string fetched = path ? path : "";
  std::free(path);
  return fetched;
}

}  // namespace hucprof
