#include <gtest/gtest.h>

#include "core/text/cpu_list.h"
#include "core/workload/record_target.h"

namespace hucprof {
namespace {

const std::vector<int> kOnline = {0, 1, 2, 3};

RecordTarget planned(const RecordTargetFlags& flags) {
  auto target = plan_record_target(flags, kOnline);
  EXPECT_TRUE(target.ok()) << (target.ok() ? "" : target.error().text);
  return target.ok() ? target.value() : RecordTarget{};
}

std::string refused(const RecordTargetFlags& flags) {
  auto target = plan_record_target(flags, kOnline);
  if (target.ok()) return "(accepted)";
  EXPECT_EQ(target.error().exit_code, kExitBadInput);
  EXPECT_EQ(target.error().text.find('\n'), std::string::npos);
  return target.error().text;
}

TEST(RecordTarget, CommandAloneIsFollowedLikePerf) {
  const RecordTarget t = planned({.has_command = true});
  EXPECT_TRUE(t.follow_command);
  EXPECT_FALSE(t.deprecated_only_command);
  EXPECT_EQ(describe_record_target(t, "make -j2", ""), "`make -j2` and its children");
}

TEST(RecordTarget, OnlyCommandIsTheOldSpellingAndWarns) {
  const RecordTarget t = planned({.only_command = true, .has_command = true});
  EXPECT_TRUE(t.follow_command);
  EXPECT_TRUE(t.deprecated_only_command);
  EXPECT_EQ(refused({.only_command = true}), "--only-command: needs a COMMAND after --");
  EXPECT_NE(
      refused({.all_cpus = true, .only_command = true, .has_command = true}).find("--only-command"),
      std::string::npos);
}

TEST(RecordTarget, AllCpusWithCommandRecordsTheMachineWhileItRuns) {
  const RecordTarget t = planned({.all_cpus = true, .has_command = true});
  EXPECT_FALSE(t.follow_command);
  EXPECT_TRUE(t.whole_machine());
  EXPECT_EQ(describe_record_target(t, "sleep 3", ""), "the whole machine");
  // Nothing named, no COMMAND: the whole machine, as before -a existed.
  EXPECT_TRUE(planned({}).whole_machine());
}

TEST(RecordTarget, PidsAreSortedDistinctAndChecked) {
  const RecordTarget t = planned({.pids = "30,7,30"});
  EXPECT_EQ(t.pids, (std::vector<int>{7, 30}));
  EXPECT_FALSE(t.follow_command);
  EXPECT_EQ(describe_record_target(t, "", ""), "PIDs 7,30");
  EXPECT_EQ(describe_record_target(planned({.pids = "1234"}), "", ""), "PID 1234");
  for (const char* bad : {"", "0", "-1", "12x", "1,,2", "4194305", "99999999999999999999"}) {
    EXPECT_NE(refused({.pids = bad}).find("is not a process id"), std::string::npos) << bad;
  }
  std::string many;
  for (int pid = 1; pid <= 65; ++pid) many += (pid > 1 ? "," : "") + std::to_string(pid);
  EXPECT_NE(refused({.pids = many}).find("at most 64"), std::string::npos);
}

TEST(RecordTarget, CpusMustBeOnline) {
  const RecordTarget t = planned({.cpus = "0,2-3"});
  EXPECT_EQ(t.cpus, (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(describe_record_target(t, "", ""), "CPUs 0,2-3");
  EXPECT_EQ(refused({.cpus = "4"}), "-C \"4\": CPU 4 is not online (online: 0-3)");
  EXPECT_NE(refused({.cpus = "2,1"}).find("not a CPU list"), std::string::npos);
  EXPECT_NE(refused({.cpus = ""}).find("not a CPU list"), std::string::npos);
  // -C with a COMMAND: those CPUs while it runs, as perf -C does.
  const RecordTarget timed = planned({.cpus = "1", .has_command = true});
  EXPECT_FALSE(timed.follow_command);
  EXPECT_EQ(describe_record_target(timed, "sleep 1", ""), "CPU 1");
}

TEST(RecordTarget, CgroupNamesAPathBelowTheRootOrAUnit) {
  const CgroupName absolute = parse_cgroup_name("/sys/fs/cgroup//system.slice/a.service").value();
  EXPECT_EQ(absolute.path, "/sys/fs/cgroup/system.slice/a.service");
  EXPECT_TRUE(absolute.absolute);
  EXPECT_FALSE(parse_cgroup_name("system.slice/a.service").value().absolute);
  EXPECT_EQ(parse_cgroup_name("system.slice//a.service/").value().path, "/system.slice/a.service");
  EXPECT_EQ(parse_cgroup_name("/").value().path, "/");
  EXPECT_FALSE(parse_cgroup_name("/sys/fs/cgroupx").value().absolute);
  EXPECT_EQ(parse_cgroup_name("nginx.service").value().unit, "nginx.service");
  EXPECT_EQ(parse_cgroup_name("nginx.service").value().path, "");
  EXPECT_EQ(parse_cgroup_name("user.slice").value().unit, "user.slice");
  EXPECT_EQ(parse_cgroup_name("mygroup").value().path, "/mygroup");
  EXPECT_FALSE(parse_cgroup_name("").ok());
  EXPECT_FALSE(parse_cgroup_name("/sys/fs/cgroup/../../etc").ok());
  EXPECT_FALSE(parse_cgroup_name("a/./b").ok());

  const RecordTarget t = planned({.cpus = "0-1", .cgroup = "x.service", .has_command = true});
  EXPECT_FALSE(t.follow_command);
  EXPECT_EQ(describe_record_target(t, "sleep 1", "/system.slice/x.service"),
            "cgroup /system.slice/x.service on CPUs 0-1");
}

TEST(RecordTarget, CombinationsPerfRefusesAreRefused) {
  EXPECT_EQ(refused({.pids = "1", .cgroup = "/a"}),
            "-p and -G: name processes or a cgroup, not both");
  EXPECT_NE(refused({.pids = "1", .has_command = true}).find("-p and -- COMMAND"),
            std::string::npos);
  EXPECT_NE(refused({.all_cpus = true, .pids = "1"}).find("-p and -a"), std::string::npos);
  EXPECT_NE(refused({.pids = "1", .cpus = "0"}).find("-p and -C"), std::string::npos);
  // What perf allows: -a with -C or -G, -G with -C.
  EXPECT_EQ(planned({.all_cpus = true, .cpus = "1"}).cpus, std::vector<int>{1});
  EXPECT_TRUE(planned({.all_cpus = true, .cgroup = "/a"}).cgroup.has_value());
}

TEST(CpuList, FormatsRanges) {
  EXPECT_EQ(format_cpu_list({}), "");
  EXPECT_EQ(format_cpu_list({3}), "3");
  EXPECT_EQ(format_cpu_list({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
  EXPECT_EQ(format_cpu_list(*parse_cpu_list("0-3,8,10-11")), "0-3,8,10-11");
}

}  // namespace
}  // namespace hucprof
