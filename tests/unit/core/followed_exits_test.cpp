#include <gtest/gtest.h>

#include "core/drain/followed_exits.h"

namespace hucprof {
namespace {

TEST(FollowedExits, OneProcessEndsTheRecordingWhenItExits) {
  FollowedExits exits({1234});
  EXPECT_EQ(exits.until_words(), "until PID 1234 exits");
  EXPECT_EQ(exits.note({}), std::nullopt);
  EXPECT_FALSE(exits.none_left());
  EXPECT_EQ(exits.note({1234}), "PID 1234 exited: stopping the recording");
  EXPECT_TRUE(exits.none_left());
  // Told again (the watch reports every exit it has seen): nothing new to say.
  EXPECT_EQ(exits.note({1234}), std::nullopt);
  EXPECT_TRUE(exits.none_left());
}

TEST(FollowedExits, SeveralEndTheRecordingOnlyWhenAllHaveExited) {
  FollowedExits exits({30, 7, 12});
  EXPECT_EQ(exits.until_words(), "until PIDs 7,12,30 have exited");
  EXPECT_EQ(exits.note({12}), "PID 12 exited; still recording PIDs 7,30");
  EXPECT_FALSE(exits.none_left());
  EXPECT_EQ(exits.note({12}), std::nullopt);
  EXPECT_EQ(exits.note({30, 12, 7}), "PIDs 7,30 exited: stopping the recording");
  EXPECT_TRUE(exits.none_left());
}

TEST(FollowedExits, ProcessesNotFollowedAreNoneOfItsBusiness) {
  FollowedExits exits({7, 7});
  EXPECT_EQ(exits.note({8, 70}), std::nullopt);
  EXPECT_FALSE(exits.none_left());
  EXPECT_EQ(exits.note({8, 7}), "PID 7 exited: stopping the recording");
}

TEST(FollowedExits, NoProcessNamedNeverEndsARecording) {
  FollowedExits exits({});
  EXPECT_EQ(exits.note({1, 2}), std::nullopt);
  EXPECT_FALSE(exits.none_left());
}

}  // namespace
}  // namespace hucprof
