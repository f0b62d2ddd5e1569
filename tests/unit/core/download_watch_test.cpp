// When a debuginfod download is given up, from libdebuginfod's progress reports as it makes them
// (elfutils 0.188 debuginfod-client.c: `done` counts the reports until a server sends the file,
// then its bytes; `total` is 0 until then, then Content-Length or -1), at the times given.
#include "core/files/download_watch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace hucprof {
namespace {

using std::chrono::seconds;
using ::testing::HasSubstr;
using Clock = DownloadWatch::Clock;

DownloadLimits limits() {
  DownloadLimits l;
  l.deadline = seconds(600);
  l.stall_window = seconds(90);
  l.max_bytes = uint64_t{4} << 30;
  return l;
}

TEST(DownloadWatch, ASilentServerIsGivenUpAfterTheStallWindow) {
  const Clock::time_point t0{};
  DownloadWatch watch(limits(), t0);
  for (long s = 1; s < 90; ++s) ASSERT_EQ(watch.progress(t0 + seconds(s), s, 0), "") << s;
  EXPECT_EQ(watch.progress(t0 + seconds(90), 90, 0),
            "gave up: 0 bytes arrived in 90 s, less than the 100 KiB a server must send in that "
            "time (DEBUGINFOD_TIMEOUT sets it)");
}

TEST(DownloadWatch, AServerTricklingBelowTheRateIsGivenUp) {
  const Clock::time_point t0{};
  DownloadWatch watch(limits(), t0);
  // 300 B/s, the attack: 27 000 bytes in 90 s.
  for (long s = 1; s < 90; ++s) ASSERT_EQ(watch.progress(t0 + seconds(s), 300 * s, -1), "");
  EXPECT_THAT(watch.progress(t0 + seconds(90), 27000, -1),
              HasSubstr("27000 bytes arrived in 90 s"));
}

TEST(DownloadWatch, ASteadyDownloadRunsUntilTheDeadline) {
  const Clock::time_point t0{};
  DownloadWatch watch(limits(), t0);
  // 2 kB/s is 180 kB a window: enough to go on, never enough to finish 600 MB.
  for (long s = 1; s < 600; ++s) {
    ASSERT_EQ(watch.progress(t0 + seconds(s), 2000 * s, 600'000'000), "") << s;
  }
  EXPECT_EQ(watch.progress(t0 + seconds(600), 1'200'000, 600'000'000),
            "gave up after 600 s, the deadline of a download (DEBUGINFOD_MAXTIME sets it)");
}

TEST(DownloadWatch, AFileLargerThanTheBoundIsRefusedAsSoonAsItIsOffered) {
  const Clock::time_point t0{};
  DownloadWatch watch(limits(), t0);
  EXPECT_EQ(watch.progress(t0 + seconds(1), 10, 5l << 30),
            "the server offers 5120 MiB, more than the 4096 MiB hucprof takes (DEBUGINFOD_MAXSIZE "
            "lowers it)");
  DownloadWatch unknown_size(limits(), t0);
  EXPECT_EQ(unknown_size.progress(t0 + seconds(1), (4l << 30) - 1, -1), "");
  EXPECT_EQ(unknown_size.progress(t0 + seconds(2), (4l << 30) + 1, -1),
            "the server sent more than the 4096 MiB hucprof takes");
}

TEST(DownloadWatch, ARetryStartsItsCountAgainWithinTheSameDeadline) {
  const Clock::time_point t0{};
  DownloadWatch watch(limits(), t0);
  EXPECT_EQ(watch.progress(t0 + seconds(50), 5'000'000, -1), "");
  // libdebuginfod retried: its count starts from 0, and 200 kB in the window is enough.
  EXPECT_EQ(watch.progress(t0 + seconds(60), 0, -1), "");
  EXPECT_EQ(watch.progress(t0 + seconds(90), 200'000, -1), "");
  EXPECT_THAT(watch.progress(t0 + seconds(180), 200'000, -1), HasSubstr("0 bytes arrived in 90 s"));
}

}  // namespace
}  // namespace hucprof
