// What `hucprof top` prints: the screen fits the terminal, the plain table holds every row, and
// no name from outside reaches either unescaped.
#include "export/views/top_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace hucprof {
namespace {

using ::testing::HasSubstr;

TopRow row(std::string callsite, uint64_t samples, double busy) {
  TopRow r;
  r.callsite = std::move(callsite);
  r.syscall = "recvfrom";
  r.samples = samples;
  r.share = estimate_share(static_cast<double>(samples), busy);
  r.steps = {{"entry", samples}};
  return r;
}

TopView view_of(std::vector<TopRow> rows, double busy, bool cumulative = false) {
  TopView v;
  v.cumulative = cumulative;
  v.seconds = cumulative ? 30 : 1;
  v.sampling = true;
  v.sample_frequency_hz = 99;
  v.kernel = static_cast<uint64_t>(busy / 2);
  v.user = static_cast<uint64_t>(busy) - v.kernel;
  double k = 0;
  for (const TopRow& r : rows) k += static_cast<double>(r.samples);
  v.total = estimate_share(k, busy, v.seconds);
  for (TopRow& r : rows) r.answered = r.share.decided && v.total.decided;
  v.rows = std::move(rows);
  return v;
}

TopFrame frame_of(std::optional<TopView> view) {
  TopFrame f;
  f.source = "http://127.0.0.1:9478/metrics";
  f.time = "2026-12-06 05:36:16 UTC";
  f.view = std::move(view);
  f.terminal = true;
  return f;
}

TEST(TopTable, TheFirstScreenWaitsForTheSecondReading) {
  const TopScreen screen = top_screen(frame_of(std::nullopt), 80, 24);
  ASSERT_GE(screen.lines.size(), 2u);
  EXPECT_THAT(screen.lines[1], HasSubstr("waiting for the second drain"));
  EXPECT_FALSE(screen.header);
}

// A share that meets the verdict rule is printed with its interval and samples; one that does
// not says "collecting" in its place, with the interval still there.
TEST(TopTable, SharesOrCollectingWithTheirIntervals) {
  const TopView decided =
      view_of({row("udp_recvmsg", 400, 10000), row("udp_sendmsg", 30, 10000)}, 10000, true);
  ASSERT_TRUE(decided.total.decided);
  const std::string table = top_table(frame_of(decided));
  EXPECT_THAT(table, HasSubstr("4.3 % of busy CPU is in the checks (95 %: "));
  EXPECT_THAT(table, HasSubstr("430 of 10,000 busy samples"));
  EXPECT_THAT(table, ::testing::ContainsRegex("4\\.0 % +[0-9.]+–[0-9.]+ % +400  udp_recvmsg"));
  EXPECT_THAT(table, ::testing::ContainsRegex("collecting +[0-9.<]+–[0-9.]+ % +30  udp_sendmsg"));

  const TopView collecting = view_of({row("udp_recvmsg", 10, 500)}, 500, true);
  ASSERT_FALSE(collecting.total.decided);
  const std::string early = top_table(frame_of(collecting));
  EXPECT_THAT(early, HasSubstr("collecting: 10 samples in the checks (95 %: "));
  EXPECT_THAT(early, HasSubstr("more seconds at this rate"));
  EXPECT_THAT(early, ::testing::Not(HasSubstr("% of busy CPU is in the checks")));
  const TopView interval = view_of({row("udp_recvmsg", 10, 500)}, 500, false);
  EXPECT_THAT(top_table(frame_of(interval)), HasSubstr("at this rate (c: since start)"));
  TopFrame piped = frame_of(interval);
  piped.terminal = false;
  EXPECT_THAT(top_table(piped), HasSubstr("at this rate (-S: since start)"));
}

// Probe mode's counts are exact: no interval is claimed for them.
TEST(TopTable, ProbeCountsAreExact) {
  TopView v;
  v.probes = true;
  v.seconds = 1;
  TopRow r;
  r.callsite = "netlink_recvmsg";
  r.syscall = "recvmsg";
  r.calls = 12345;
  r.bytes = 3 << 20;
  v.rows = {r};
  v.calls = r.calls;
  v.bytes = r.bytes;
  const std::string table = top_table(frame_of(v));
  EXPECT_THAT(table, HasSubstr("12,345 checks, 3.0 MiB (exact counts: no interval)"));
  EXPECT_THAT(table, ::testing::ContainsRegex("12,345 +3\\.0 MiB  netlink_recvmsg  recvmsg"));
  EXPECT_THAT(table, ::testing::Not(HasSubstr("95 %")));
}

// Every line fits the terminal, whatever the names; rows that do not fit are counted.
TEST(TopTable, TheScreenFitsAnyTerminal) {
  std::vector<TopRow> rows;
  for (int i = 0; i < 40; ++i) {
    rows.push_back(
        row("a_rather_long_kernel_function_name_" + std::to_string(i) + std::string(100, 'x'),
            static_cast<uint64_t>(100 - i), 10000));
  }
  const TopView v = view_of(rows, 10000);
  for (const auto& [width, height] :
       {std::pair<size_t, size_t>{120, 40}, {80, 24}, {40, 10}, {10, 5}, {1, 1}, {300, 100}}) {
    const TopScreen screen = top_screen(frame_of(v), width, height);
    EXPECT_LE(screen.lines.size(), height);
    for (const std::string& line : screen.lines) {
      EXPECT_LE(terminal_columns(line), width) << width << "x" << height << ": " << line;
    }
  }
  const TopScreen screen = top_screen(frame_of(v), 120, 20);
  EXPECT_THAT(screen.lines.back(), HasSubstr("q quit"));
  EXPECT_THAT(screen.lines.back(), ::testing::ContainsRegex("\\([0-9]+ more call sites below\\)"));
  ASSERT_TRUE(screen.header);
  EXPECT_THAT(screen.lines[*screen.header], HasSubstr("call site"));
  EXPECT_THAT(screen.lines[*screen.header + 1], HasSubstr("…"));  // the long name, cut
}

// Names from a daemon's page are outside input: control bytes and invalid UTF-8 come out
// escaped, on the screen and in the table alike.
TEST(TopTable, NamesFromOutsideAreEscaped) {
  TopRow hostile = row(std::string("evil\x1b]0;owned\x07\x1b[2J\n\xff"), 5, 1000);
  hostile.syscall =
      "\x9b"
      "31m";
  hostile.steps = {{"\x1b[5m", 5}};
  TopFrame frame = frame_of(view_of({hostile}, 1000));
  frame.status = "GET x: HTTP 500 \x1b[31mred";
  frame.source = "http://h/\x1b";
  const std::string table = top_table(frame);
  for (const std::string& text : std::vector<std::string>{table, [&] {
                                                            std::string all;
                                                            for (const auto& line :
                                                                 top_screen(frame, 200, 30).lines)
                                                              all += line + "\n";
                                                            return all;
                                                          }()}) {
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
    EXPECT_EQ(text.find('\x07'), std::string::npos);
    EXPECT_EQ(text.find("\xc2\x9b"), std::string::npos);
    EXPECT_THAT(text, HasSubstr("evil\\x1b]0;owned\\x07\\x1b[2J\\x0a\\xff"));
  }
}

TEST(TopTable, ColumnsCountWideCharactersTwice) {
  EXPECT_EQ(terminal_columns("udp_recvmsg"), 11u);
  EXPECT_EQ(terminal_columns("é…–"), 3u);     // U+00E9, U+2026, U+2013: one each
  EXPECT_EQ(terminal_columns("ࠀ"), 1u);       // U+0800
  EXPECT_EQ(terminal_columns("\u1100"), 2u);  // Hangul choseong, wide
  EXPECT_EQ(terminal_columns("漢字"), 4u);
  EXPECT_EQ(terminal_columns("😀"), 2u);
  EXPECT_EQ(terminal_columns("\u2190"), 2u);  // an arrow: past the punctuation, counted wide
  EXPECT_EQ(fit_to_columns("漢字漢字", 5), "漢字…");
  EXPECT_EQ(fit_to_columns("abcdef", 4), "abc…");
  EXPECT_EQ(fit_to_columns("abc", 3), "abc");
}

}  // namespace
}  // namespace hucprof
