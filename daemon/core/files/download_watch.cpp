#include "core/files/download_watch.h"

namespace hucprof {

namespace {

std::string seconds(std::chrono::seconds s) { return std::to_string(s.count()) + " s"; }

std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

DownloadWatch::DownloadWatch(const DownloadLimits& limits, Clock::time_point started)
    : limits_(limits), started_(started), window_start_(started) {}

std::string DownloadWatch::progress(Clock::time_point now, long done, long total) {
  if (now - started_ >= limits_.deadline) {
    return "gave up after " + seconds(limits_.deadline) +
           ", the deadline of a download (DEBUGINFOD_MAXTIME sets it)";
  }
  if (total > 0 && static_cast<uint64_t>(total) > limits_.max_bytes) {
    return "the server offers " + mib(static_cast<uint64_t>(total)) + ", more than the " +
           mib(limits_.max_bytes) + " hucprof takes (DEBUGINFOD_MAXSIZE lowers it)";
  }
  const uint64_t bytes = total != 0 && done > 0 ? static_cast<uint64_t>(done) : 0;
  if (bytes > limits_.max_bytes) {
    return "the server sent more than the " + mib(limits_.max_bytes) + " hucprof takes";
  }
  // Fewer bytes than before: a retry, or another server, started over.
  if (bytes < window_bytes_) window_bytes_ = bytes;
  if (now - window_start_ >= limits_.stall_window) {
    const uint64_t arrived = bytes - window_bytes_;
    if (arrived < DownloadLimits::kMinBytesPerWindow) {
      return "gave up: " + std::to_string(arrived) + " bytes arrived in " +
             seconds(limits_.stall_window) + ", less than the " +
             std::to_string(DownloadLimits::kMinBytesPerWindow >> 10) +
             " KiB a server must send in that time (DEBUGINFOD_TIMEOUT sets it)";
    }
    window_start_ = now;
    window_bytes_ = bytes;
  }
  return "";
}

}  // namespace hucprof
