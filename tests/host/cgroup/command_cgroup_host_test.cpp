// record --only-command's cgroup on this machine's unified hierarchy (root): what COMMAND leaves
// running in it is moved out, alive, to this process's own cgroup, and the directory is removed.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "cgroup_host_test.h"
#include "workload/command_cgroup.h"

namespace hucprof {
namespace {

using namespace std::chrono_literals;

// The kernel's word for where a process is: the "0::" line of /proc/PID/cgroup.
std::string cgroup_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
  std::stringstream text;
  text << in.rdbuf();
  return unified_cgroup_path(text.str()).value_or("(none)");
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

class CommandCgroupHost : public test::UnifiedHierarchyTest {
 protected:
  void SetUp() override {
    test::UnifiedHierarchyTest::SetUp();
    // What COMMAND leaves behind is reparented to this process, so the test can reap it.
    ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  }
};

// `sh -c 'sleep 1000 & exit 0'`, in C: a child that joins the cgroup as ChildCommand's does,
// starts a grandchild that sleeps, and exits. Returns the grandchild's pid (read from a pipe).
pid_t command_leaving_a_process(int procs_fd) {
  int report[2];
  if (::pipe(report) != 0) return -1;
  const pid_t child = ::fork();
  if (child == 0) {
    if (::write(procs_fd, "0", 1) != 1) ::_exit(1);
    const pid_t grandchild = ::fork();
    if (grandchild == 0) {
      ::pause();
      ::_exit(0);
    }
    ::_exit(::write(report[1], &grandchild, sizeof grandchild) == sizeof grandchild ? 0 : 1);
  }
  ::close(report[1]);
  pid_t grandchild = -1;
  if (::read(report[0], &grandchild, sizeof grandchild) != sizeof grandchild) grandchild = -1;
  ::close(report[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? grandchild : -1;
}

TEST_F(CommandCgroupHost, WhatCommandLeftRunningIsMovedOutAliveAndTheCgroupRemoved) {
  auto made = CommandCgroup::make(root_);
  ASSERT_TRUE(made.ok()) << made.error().text;
  CommandCgroup& cgroup = *made.value();
  const std::string dir = root_ + cgroup.path();
  EXPECT_EQ(cgroup.path(), "/hucprof-record-" + std::to_string(::getpid()));

  const pid_t left = command_leaving_a_process(cgroup.procs_fd());
  ASSERT_GT(left, 0);
  EXPECT_EQ(cgroup_of(left), cgroup.path()) << "COMMAND's child runs in COMMAND's cgroup";
  ASSERT_NE(::rmdir(dir.c_str()), 0);
  EXPECT_EQ(errno, EBUSY) << "the kernel keeps a cgroup that holds a process";

  const auto released = cgroup.release();
  ASSERT_TRUE(released.ok()) << released.error().text;
  EXPECT_EQ(released.value().moved, 1u);
  const std::string own = cgroup_of(::getpid());
  EXPECT_EQ(released.value().to, own);
  EXPECT_FALSE(exists(dir)) << dir;
  EXPECT_EQ(::kill(left, 0), 0) << "the process COMMAND left still runs";
  EXPECT_EQ(cgroup_of(left), own) << "in this process's cgroup";
  ::kill(left, SIGKILL);
  EXPECT_EQ(::waitpid(left, nullptr, 0), left);

  const auto again = cgroup.release();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.value().moved, 0u);
}

TEST_F(CommandCgroupHost, AnEmptyCgroupIsRemovedWithNothingMoved) {
  std::string dir;
  {
    auto made = CommandCgroup::make(root_);
    ASSERT_TRUE(made.ok()) << made.error().text;
    dir = root_ + made.value()->path();
    ASSERT_TRUE(exists(dir));
    const auto released = made.value()->release();
    ASSERT_TRUE(released.ok()) << released.error().text;
    EXPECT_EQ(released.value().moved, 0u);
    EXPECT_FALSE(exists(dir));
  }
  {
    // The destructor alone does the same.
    auto made = CommandCgroup::make(root_);
    ASSERT_TRUE(made.ok()) << made.error().text;
    const pid_t left = command_leaving_a_process(made.value()->procs_fd());
    ASSERT_GT(left, 0);
    made = Error{"dropped"};
    EXPECT_FALSE(exists(dir));
    EXPECT_EQ(::kill(left, 0), 0);
    ::kill(left, SIGKILL);
    ::waitpid(left, nullptr, 0);
  }
}

// A recorder killed (SIGKILL) cannot remove its cgroup: the next one removes it, if empty.
TEST_F(CommandCgroupHost, TheEmptyCgroupOfARecorderThatIsGoneIsRemovedByTheNext) {
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(gone, nullptr, 0), gone);
  const std::string stale = root_ + "/hucprof-record-" + std::to_string(gone);
  ASSERT_EQ(::mkdir(stale.c_str(), 0755), 0) << stale << ": " << std::strerror(errno);
  // One of a recorder that still runs (this process's parent, as good as any running pid) stays.
  const std::string live = root_ + "/hucprof-record-" + std::to_string(::getppid());
  ASSERT_EQ(::mkdir(live.c_str(), 0755), 0) << live << ": " << std::strerror(errno);

  auto made = CommandCgroup::make(root_);
  ASSERT_TRUE(made.ok()) << made.error().text;
  EXPECT_FALSE(exists(stale));
  EXPECT_TRUE(exists(live));
  ::rmdir(live.c_str());
  ::rmdir(stale.c_str());
}

}  // namespace
}  // namespace hucprof
