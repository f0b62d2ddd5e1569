#include "core/kernel/kernel_params.h"

#include <gtest/gtest.h>

namespace hucprof {
namespace {

TEST(FindKernelParam, FindsValue) {
  EXPECT_EQ(find_kernel_param("ro quiet hardened_usercopy=off", "hardened_usercopy"), "off");
  EXPECT_EQ(find_kernel_param("hardened_usercopy=1\n", "hardened_usercopy"), "1");
  EXPECT_EQ(find_kernel_param("\thardened_usercopy=on\tquiet", "hardened_usercopy"), "on");
}

TEST(FindKernelParam, Absent) {
  EXPECT_EQ(find_kernel_param("", "hardened_usercopy"), std::nullopt);
  EXPECT_EQ(find_kernel_param("ro quiet", "hardened_usercopy"), std::nullopt);
  // A flag without '=' is not this parameter, nor is a longer or shorter name.
  EXPECT_EQ(find_kernel_param("hardened_usercopy", "hardened_usercopy"), std::nullopt);
  EXPECT_EQ(find_kernel_param("hardened_usercopy_x=1", "hardened_usercopy"), std::nullopt);
  EXPECT_EQ(find_kernel_param("my.hardened_usercopy=1", "hardened_usercopy"), std::nullopt);
}

TEST(FindKernelParam, LastOccurrenceWins) { EXPECT_EQ(find_kernel_param("a=1 b=2 a=3", "a"), "3"); }

TEST(FindKernelParam, StopsAtDoubleDash) {
  EXPECT_EQ(find_kernel_param("a=1 -- a=2", "a"), "1");
  EXPECT_EQ(find_kernel_param("-- a=2", "a"), std::nullopt);
}

TEST(FindKernelParam, QuotedValues) {
  EXPECT_EQ(find_kernel_param("dyndbg=\"file a.c +p\" a=1", "dyndbg"), "file a.c +p");
  EXPECT_EQ(find_kernel_param("\"dyndbg=file a.c +p\" a=1", "dyndbg"), "file a.c +p");
  EXPECT_EQ(find_kernel_param("dyndbg=\"file a.c +p\" a=1", "a"), "1");
}

TEST(FindKernelParam, DashAndUnderscoreAreTheSame) {
  EXPECT_EQ(find_kernel_param("hardened-usercopy=0", "hardened_usercopy"), "0");
}

TEST(KernelStrtobool, AcceptedSpellings) {
  for (const char* v : {"1", "y", "Y", "yes", "on", "On", "ON", "1xyz"}) {
    EXPECT_EQ(kernel_strtobool(v), true) << v;
  }
  for (const char* v : {"0", "n", "N", "no", "off", "Off", "OFF", "offline"}) {
    EXPECT_EQ(kernel_strtobool(v), false) << v;
  }
}

TEST(KernelStrtobool, Rejected) {
  for (const char* v : {"", "o", "ox", "2", "true", "false", "enable", " 1"}) {
    EXPECT_EQ(kernel_strtobool(v), std::nullopt) << '"' << v << '"';
  }
}

}  // namespace
}  // namespace hucprof
