// What `record -o` and `report --flamegraph` do with what is at their path, decided from the
// file's kind alone (no device node is needed to test it).
#include "core/files/output_target.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace hucprof {
namespace {

using ::testing::HasSubstr;
using Kind = OutputFacts::Kind;
using Action = OutputDecision::Action;

OutputFacts plain(Kind kind, uint32_t major = 0, uint32_t minor = 0) {
  return {kind, false, kind, major, minor};
}

OutputFacts link_to(Kind kind, uint32_t major = 0, uint32_t minor = 0) {
  return {Kind::Missing, true, kind, major, minor};
}

// What does not depend on the content is decided alike for a profile and a flame graph.
OutputDecision decide(const OutputFacts& facts) {
  const OutputDecision binary = decide_output(facts, OutputContent::Binary);
  const OutputDecision text = decide_output(facts, OutputContent::Text);
  EXPECT_EQ(binary.action, text.action);
  return binary;
}

TEST(OutputTarget, FilesAreWrittenAtomicallyAndOnlyFiles) {
  EXPECT_EQ(decide(plain(Kind::Missing)).action, Action::Create);
  EXPECT_EQ(decide(plain(Kind::Regular)).action, Action::Replace);
  EXPECT_THAT(decide(plain(Kind::Directory)).why, HasSubstr("is a directory"));
  EXPECT_THAT(decide(plain(Kind::Socket)).why, HasSubstr("is a socket"));
}

TEST(OutputTarget, PipesFifosAndDevNullAreWrittenIntoNeverReplaced) {
  EXPECT_EQ(decide(plain(Kind::Fifo)).action, Action::WriteInto);
  EXPECT_EQ(decide(plain(Kind::CharDevice, 1, 3)).action, Action::WriteInto);
  // -o /dev/stdout: a symbolic link to a pipe, or to the file the shell redirected it to.
  EXPECT_EQ(decide(link_to(Kind::Fifo)).action, Action::WriteInto);
  EXPECT_EQ(decide(link_to(Kind::Regular)).action, Action::WriteInto);
}

TEST(OutputTarget, OtherDevicesAreRefused) {
  const OutputDecision disk = decide(plain(Kind::BlockDevice, 8, 0));
  EXPECT_EQ(disk.action, Action::Refuse);
  EXPECT_THAT(disk.why, HasSubstr("is a block device (8:0)"));
  for (const auto& [major, minor] : {std::pair{1u, 1u}, {1u, 5u}, {10u, 130u}, {240u, 0u}}) {
    const OutputDecision d = decide(plain(Kind::CharDevice, major, minor));
    EXPECT_EQ(d.action, Action::Refuse) << major << ":" << minor;
    EXPECT_THAT(d.why, HasSubstr("is a character device (" + std::to_string(major) + ":" +
                                 std::to_string(minor) + ")"));
  }
  EXPECT_THAT(decide(link_to(Kind::BlockDevice, 8, 1)).why, HasSubstr("leads to a block device"));
  EXPECT_THAT(decide(link_to(Kind::Directory)).why, HasSubstr("leads to a directory"));
}

// A terminal takes what it can show: the flame graph's SVG is text (it was refused as "gzipped
// binary" before), a gzipped profile is not, as gzip refuses to write one there.
TEST(OutputTarget, ATerminalTakesTextNeverBinary) {
  for (const auto& [major, minor] : {std::pair{4u, 1u}, {5u, 0u}, {5u, 1u}, {136u, 3u}}) {
    const OutputFacts tty = plain(Kind::CharDevice, major, minor);
    const OutputDecision binary = decide_output(tty, OutputContent::Binary);
    EXPECT_EQ(binary.action, Action::Refuse) << major << ":" << minor;
    EXPECT_THAT(binary.why, HasSubstr("is a terminal, and the profile is gzipped binary"));
    EXPECT_EQ(decide_output(tty, OutputContent::Text).action, Action::WriteInto)
        << major << ":" << minor;
    EXPECT_EQ(decide_output(link_to(Kind::CharDevice, major, minor), OutputContent::Text).action,
              Action::WriteInto)
        << "/dev/stdout on a terminal";
  }
  EXPECT_THAT(decide_output(plain(Kind::CharDevice, 10, 130), OutputContent::Text).why,
              HasSubstr("text is written only into a file, a pipe, a FIFO, /dev/null or a "
                        "terminal"));
}

TEST(OutputTarget, ADanglingSymlinkIsRefusedNotCreatedThrough) {
  const OutputDecision d = decide(link_to(Kind::Missing));
  EXPECT_EQ(d.action, Action::Refuse);
  EXPECT_THAT(d.why, HasSubstr("symbolic link to nothing"));
}

}  // namespace
}  // namespace hucprof
