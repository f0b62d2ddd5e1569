// The one error type: a value or an Error with its words and exit code, never both.
#include "core/base/result.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <variant>

namespace hucprof {
namespace {

Result<int> half(int n) {
  if (n % 2 != 0) return Error{std::to_string(n) + " is odd"};
  return n / 2;
}

TEST(Result, HoldsTheValueOrTheError) {
  const Result<int> good = half(8);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(good.value(), 4);

  const Result<int> bad = half(7);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().text, "7 is odd");
  EXPECT_EQ(bad.error().exit_code, kExitBadInput) << "what the user gave, unless said otherwise";
}

TEST(Result, AStringValueIsNeverTakenForAnError) {
  // variant<string, string> told them apart by index; here only Error{} is an error.
  const Result<std::string> text = std::string("cannot read");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text.value(), "cannot read");
  const Result<std::string> failed = Error{"cannot read", kExitCannotRun};
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().exit_code, kExitCannotRun);
}

TEST(Result, MovesItsValueOut) {
  Result<std::unique_ptr<int>> owned = std::make_unique<int>(3);
  ASSERT_TRUE(owned.ok());
  EXPECT_EQ(*owned.value(), 3);
  const std::unique_ptr<int> taken = std::move(owned).value();
  EXPECT_EQ(*taken, 3);
}

TEST(Result, ReadingTheWrongSideThrowsInsteadOfReadingGarbage) {
  const Result<int> bad = half(1);
  EXPECT_THROW((void)bad.value(), std::bad_variant_access);
  const Result<int> good = half(2);
  EXPECT_THROW((void)good.error(), std::bad_variant_access);
}

TEST(Result, VoidCarriesOnlyTheError) {
  const Result<void> fine;
  EXPECT_TRUE(fine.ok());
  EXPECT_THROW((void)fine.error(), std::bad_optional_access);
  const Result<void> failed = Error{"port taken", kExitCannotRun};
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().text, "port taken");
  EXPECT_EQ(failed.error().exit_code, kExitCannotRun);
}

}  // namespace
}  // namespace hucprof
