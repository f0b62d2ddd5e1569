#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace hucprof {

// When a debuginfod download is given up, whatever the server does: a silent or trickling
// server, or one offering gigabytes, cannot hold a doctor or a worker thread for ever.
struct DownloadLimits {
  // The whole fetch, from asking to the file in the cache, retries and every server included
  // (DEBUGINFOD_MAXTIME sets it): a 1 GB vmlinux at 2 MB/s takes 8 minutes.
  std::chrono::seconds deadline{600};
  // Less than kMinBytesPerWindow arriving within this long is a stalled server
  // (DEBUGINFOD_TIMEOUT sets it; libdebuginfod's default, and its rule for the first 100 KiB,
  // held for the whole transfer).
  std::chrono::seconds stall_window{90};
  static constexpr uint64_t kMinBytesPerWindow = uint64_t{100} << 10;
  // The file's size (DEBUGINFOD_MAXSIZE lowers it).
  uint64_t max_bytes = uint64_t{4} << 30;
};

// Judges a download from libdebuginfod's progress reports (at least one a second while it
// runs). Pure: the time is given.
class DownloadWatch {
 public:
  using Clock = std::chrono::steady_clock;
  DownloadWatch(const DownloadLimits& limits, Clock::time_point started);

  // One report: `total` is 0 until a server sends the file (then its size, or -1 when the
  // server does not say), and until then `done` counts reports, not bytes. "" to go on, else
  // why the download is given up, in words.
  std::string progress(Clock::time_point now, long done, long total);

 private:
  DownloadLimits limits_;
  Clock::time_point started_;
  Clock::time_point window_start_;
  uint64_t window_bytes_ = 0;
};

}  // namespace hucprof
