#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/result.h"
#include "core/files/download_watch.h"

struct debuginfod_client;  // elfutils' opaque client (C)

namespace hucprof {

// DownloadLimits from the environment, as libdebuginfod reads its own: DEBUGINFOD_MAXTIME,
// DEBUGINFOD_TIMEOUT, DEBUGINFOD_MAXSIZE (their leading digits, as atol reads them; zero or
// none keeps the default). The size is at most the 4 GiB a debuginfo file may have
// (kMaxDebugFileBytes).
DownloadLimits download_limits_from_environment();

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
  // $XDG_CACHE_HOME/debuginfod_client) the debuginfo of a build-id: the file's path, or why not
  // in one line (the cache is not a usable directory, the deadline passed, the server stalled
  // or offers too large a file, no server has it). Blocks until then; cancel() ends it within
  // a second (libdebuginfod asks its progress callback at least once a second).
  Result<std::string> fetch(std::string_view build_id_hex);
  // From any thread: the running fetch, and any later one, gives up.
  void cancel() { cancelled_ = true; }
  bool cancelled() const { return cancelled_; }
  const std::string& urls() const { return urls_; }
  const DownloadLimits& limits() const { return limits_; }

  // libdebuginfod's progress report: non-zero ends the transfer.
  int progress(long done, long total);

 private:
  DebuginfodClient() = default;
  struct Api;
  std::unique_ptr<Api> api_;
  void* library_ = nullptr;
  ::debuginfod_client* client_ = nullptr;
  std::atomic<bool> cancelled_{false};
  std::string urls_;
  DownloadLimits limits_;
  // The running fetch, for progress(): how it goes, and why it was given up.
  std::optional<DownloadWatch> watch_;
  std::string gave_up_;
};

// Where libdebuginfod keeps its downloads, as it works it out.
struct DebuginfodCache {
  std::string path;
  std::string named_by;  // the variable it comes from, for messages
  int makeable = 1;      // directories libdebuginfod makes when missing (the last ones)

  // DEBUGINFOD_CACHE_PATH, else $HOME/.debuginfod_client_cache if that exists, else
  // $XDG_CACHE_HOME/debuginfod_client, else $HOME/.cache/debuginfod_client.
  static DebuginfodCache from_environment();
  // Why it cannot hold a download, "" when it can: it must be a directory hucprof may write
  // (or one libdebuginfod can make), and the build-id's entry in it, if there is one, a regular
  // file (libdebuginfod opens it with a plain open(): a FIFO there would hang it).
  std::string problem(std::string_view build_id_hex) const;
};

}  // namespace hucprof
