#include <gtest/gtest.h>

#include <cerrno>
#include <thread>

#include "log/log_fields.h"

namespace hucprof {
namespace {

std::vector<std::string> keys() {
  std::vector<std::string> out;
  for (const LogField& f : current_log_fields()) out.push_back(f.key + "=" + f.value);
  return out;
}

TEST(LogFields, ScopesNestAndEndWithTheirBlock) {
  EXPECT_TRUE(current_log_fields().empty());
  {
    const LogFields outer{{"target", "__check_object_size"}};
    {
      const LogFields inner{{"reason", "refused"}};
      EXPECT_EQ(keys(), (std::vector<std::string>{"target=__check_object_size", "reason=refused"}));
    }
    EXPECT_EQ(keys(), (std::vector<std::string>{"target=__check_object_size"}));
  }
  EXPECT_TRUE(current_log_fields().empty());
}

TEST(LogFields, BelongToTheThreadThatSetThem) {
  const LogFields fields{{"target", "x"}};
  bool empty_elsewhere = false;
  std::thread([&] { empty_elsewhere = current_log_fields().empty(); }).join();
  EXPECT_TRUE(empty_elsewhere);
}

TEST(LogFields, ErrnoNamesAreGlibcs) {
  EXPECT_EQ(errno_number("EACCES"), EACCES);
  EXPECT_EQ(errno_number("EPERM"), EPERM);
  EXPECT_EQ(errno_number("ENOTSUP"), std::nullopt);  // glibc names 95 EOPNOTSUPP
  EXPECT_EQ(errno_number("EOPNOTSUPP"), EOPNOTSUPP);
  EXPECT_FALSE(errno_number("EOF"));
  EXPECT_FALSE(errno_number(""));
}

TEST(LogFields, ErrnoIsFoundAsAWordOfItsOwn) {
  // The shapes hucprof's reasons take (kernel_facts.cpp errno_words, perf_permission_words).
  EXPECT_EQ(errno_name_in("perf_event_open(cpu-clock) failed on every CPU: EACCES: Permission "
                          "denied (kernel.perf_event_paranoid=3): ..."),
            "EACCES");
  EXPECT_EQ(errno_name_in("the kernel refused to load it: EPERM: Operation not permitted"),
            "EPERM");
  EXPECT_EQ(errno_name_in("fentry refused (EINVAL)"), "EINVAL");
  // Not errno: config names, words, prefixes of longer names.
  EXPECT_FALSE(errno_name_in("CONFIG_EPERM is not set"));
  EXPECT_FALSE(errno_name_in("ENOENTS and EOF"));
  EXPECT_FALSE(errno_name_in("this kernel has no kprobes (CONFIG_KPROBES is not set)"));
  EXPECT_FALSE(errno_name_in(""));
}

TEST(LogFields, FailureFieldsCarryTargetReasonAndErrno) {
  const auto fields =
      failure_fields("cpu-clock", "perf_event_open failed: EACCES: Permission denied");
  ASSERT_EQ(fields.size(), 3u);
  EXPECT_EQ(fields[0].key, "target");
  EXPECT_EQ(fields[0].value, "cpu-clock");
  EXPECT_EQ(fields[1].key, "reason");
  EXPECT_EQ(fields[2].key, "errno");
  EXPECT_EQ(fields[2].value, "EACCES");
  EXPECT_EQ(failure_fields("check_heap_object", "not a real symbol").size(), 2u);
}

}  // namespace
}  // namespace hucprof
