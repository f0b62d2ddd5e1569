#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <string_view>

#include "core/result.h"

struct debuginfod_client;  // elfutils' opaque client (C)

namespace hucprof {

// A debuginfod client (elfutils' libdebuginfod) asking the servers in DEBUGINFOD_URLS for a
// build-id's debuginfo. Loaded with dlopen only when --debuginfo.debuginfod asks for it, so the
// daemon does not depend on libdebuginfod (and libcurl) to run.
class DebuginfodClient {
 public:
  // The library and a client, or why not ("DEBUGINFOD_URLS is not set", "libdebuginfod.so.1:
  // cannot open shared object file").
  static Result<std::unique_ptr<DebuginfodClient>> open();
  ~DebuginfodClient();
  DebuginfodClient(const DebuginfodClient&) = delete;
  DebuginfodClient& operator=(const DebuginfodClient&) = delete;

  // Downloads (or finds in the client's cache: DEBUGINFOD_CACHE_PATH, else
  // $XDG_CACHE_HOME/debuginfod_client) the debuginfo of a build-id: the file's path, or why not.
  // Blocks for as long as the download takes; cancel() ends it.
  Result<std::string> fetch(std::string_view build_id_hex);
  // From any thread: the running fetch gives up at its next progress report.
  void cancel() { cancelled_ = true; }
  bool cancelled() const { return cancelled_; }
  const std::string& urls() const { return urls_; }

 private:
  DebuginfodClient() = default;
  struct Api;
  std::unique_ptr<Api> api_;
  void* library_ = nullptr;
  ::debuginfod_client* client_ = nullptr;
  std::atomic<bool> cancelled_{false};
  std::string urls_;
};

}  // namespace hucprof
