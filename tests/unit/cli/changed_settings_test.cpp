// What SIGHUP reports and applies: the settings that differ, and which of them can change while
// running (docs/configuration.md, "Signals and privileges").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/settings.h"
#include "parse_helpers.h"

namespace hucprof {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> keys(const std::vector<SettingChange>& changes) {
  std::vector<std::string> out;
  for (const auto& c : changes) out.emplace_back(c.setting->key);
  return out;
}

TEST(ChangedSettings, SameOptionsChangeNothing) {
  EXPECT_THAT(changed_settings(parse_run({"run"}), parse_run({"run"})), IsEmpty());
}

TEST(ChangedSettings, NamesEachChangeWithBothValuesAsWritten) {
  const RunOptions before = parse_run({"run", "--interval", "10s", "--mode", "auto"});
  const RunOptions after = parse_run({"run", "--interval", "1m30s", "--mode", "sample"});
  const auto changes = changed_settings(before, after);
  ASSERT_THAT(keys(changes), ElementsAre("mode", "interval"));
  EXPECT_EQ(changes[0].before, "auto");
  EXPECT_EQ(changes[0].after, "sample");
  EXPECT_EQ(changes[1].before, "10s");
  EXPECT_EQ(changes[1].after, "1m30s");
}

TEST(ChangedSettings, OnlyLoggingIntervalAndTopKApplyWhileRunning) {
  std::vector<std::string> live;
  for (const Setting& s : settings()) {
    if (s.on_reload == OnReload::Live) live.emplace_back(s.key);
  }
  // Everything else needs re-attaching probes or re-binding the port.
  EXPECT_THAT(live, ElementsAre("interval", "top-k", "log.level", "log.format"));
}

}  // namespace
}  // namespace hucprof
