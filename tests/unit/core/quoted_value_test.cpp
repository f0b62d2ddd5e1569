// What comes back quoted in an error message: one line of valid UTF-8 that a terminal shows as
// text, whatever the flag or file held.
#include "core/base/quoted_value.h"

#include <gtest/gtest.h>

#include "core/base/utf8.h"

namespace hucprof {
namespace {

TEST(QuotedValue, ControlBytesAndBytesThatAreNotUtf8AreEscaped) {
  EXPECT_EQ(quoted_value("plain"), "\"plain\"");
  EXPECT_EQ(quoted_value("a\nb\x1b[31m"), "\"a\\x0ab\\x1b[31m\"");
  EXPECT_EQ(quoted_value("caf\xc3\xa9 \xe2\x82\xac"), "\"caf\xc3\xa9 \xe2\x82\xac\"")
      << "UTF-8 stays";
  // Invalid UTF-8 was echoed raw into messages before.
  EXPECT_EQ(quoted_value("k\xff\xfe"), "\"k\\xff\\xfe\"");
  EXPECT_EQ(quoted_value("\xc3"), "\"\\xc3\"") << "a sequence cut short";
  EXPECT_EQ(quoted_value("\xc0\xaf"), "\"\\xc0\\xaf\"") << "an overlong /";
  EXPECT_EQ(quoted_value("\xed\xa0\x80"), "\"\\xed\\xa0\\x80\"") << "a surrogate";
  // C1 controls (U+009B is CSI on some terminals) are escaped byte by byte.
  EXPECT_EQ(quoted_value("\xc2\x9b"), "\"\\xc2\\x9b\"");
  EXPECT_EQ(quoted_value("\x7f"), "\"\\x7f\"");
}

TEST(PrintableText, NoncharactersXmlForbidsAreEscaped) {
  EXPECT_EQ(printable_text("a\xef\xbf\xbe\xef\xbf\xbf\xef\xbf\xbd"),
            "a\\xef\\xbf\\xbe\\xef\\xbf\\xbf\xef\xbf\xbd")
      << "U+FFFE and U+FFFF escaped, U+FFFD (a character) kept";
}

// Whatever a name holds, what is shown of it is printable and at most kMaxNameBytes long; a cut
// falls after a whole character or escape and says so.
TEST(PrintableName, BoundedAtACharacterOrEscapeBoundary) {
  const std::string fits(kMaxNameBytes, 'a');
  EXPECT_EQ(printable_name(fits), fits);
  const std::string longer = printable_name(fits + "b");
  EXPECT_EQ(longer.size(), kMaxNameBytes);
  EXPECT_EQ(longer, std::string(kMaxNameBytes - 3, 'a') + "…");
  // 2-byte characters: the cut never splits one.
  std::string accents;
  for (int i = 0; i < 600; ++i) accents += "\xc3\xa9";
  const std::string cut = printable_name(accents);
  EXPECT_LE(cut.size(), kMaxNameBytes);
  EXPECT_TRUE(cut.ends_with("\xc3\xa9…"));
  // Escapes count in the bound and are never cut in half: 1 000 ESC bytes become 4 000 bytes
  // of "\x1b", of which whole ones are kept.
  const std::string escaped = printable_name(std::string(1000, '\x1b'));
  EXPECT_LE(escaped.size(), kMaxNameBytes);
  EXPECT_TRUE(escaped.ends_with("\\x1b…"));
  EXPECT_EQ((escaped.size() - 3) % 4, 0u);
  EXPECT_EQ(printable_text("abcdef", 5), "ab…");
}

TEST(PrintableText, ABoundCutsAfterAWholeCharacterOrEscapeAndMarksTheCut) {
  EXPECT_EQ(printable_text("short", 512), "short");
  EXPECT_EQ(printable_text(std::string(512, 'x'), 512), std::string(512, 'x')) << "fits exactly";
  EXPECT_EQ(printable_text(std::string(513, 'x'), 512), std::string(509, 'x') + "…");
  // An escape is never split: "ab\\x1b" is 6 bytes, more than the 5 before the marker.
  EXPECT_EQ(printable_text("ab\x1b"
                           "cdefgh",
                           8),
            "ab…");
  // Nor a character: "é" is 2 bytes.
  EXPECT_EQ(printable_text("abc\xc3\xa9"
                           "defgh",
                           7),
            "abc…");
  // A name of megabytes costs its bound, not its size.
  const std::string huge(4 << 20, 'n');
  EXPECT_EQ(printable_text(huge, 16).size(), 16u);
}

TEST(Utf8, SequenceLengthFollowsRfc3629) {
  EXPECT_EQ(utf8_sequence_length(""), 0u);
  EXPECT_EQ(utf8_sequence_length("a"), 1u);
  EXPECT_EQ(utf8_sequence_length("\xc3\xa9"), 2u);
  EXPECT_EQ(utf8_sequence_length("\xf0\x9f\x98\x80"), 4u);
  EXPECT_EQ(utf8_sequence_length("\xf4\x90\x80\x80"), 0u) << "above U+10FFFF";
  EXPECT_EQ(utf8_sequence_length("\x80"), 0u);
}

}  // namespace
}  // namespace hucprof
