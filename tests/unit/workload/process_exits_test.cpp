#include "workload/process_exits.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <optional>
#include <string>
#include <thread>

#include "core/files/file_text.h"

namespace hucprof {
namespace {

using std::chrono::milliseconds;

// A child that waits to be killed; killed and reaped when the test ends whatever happened.
class Child {
 public:
  // `leader_exits`: its first thread exits while a second one goes on.
  explicit Child(bool leader_exits = false) {
    pid_ = fork();
    if (pid_ == 0) {
      if (leader_exits) {
        std::thread([] {
          while (true) pause();
        }).detach();
        syscall(SYS_exit, 0);  // this thread only
      }
      while (true) pause();
    }
  }
  ~Child() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      reap();
    }
  }
  int pid() const { return pid_; }
  void reap() {
    waitpid(pid_, nullptr, 0);
    reaped_ = true;
  }

 private:
  int pid_ = -1;
  bool reaped_ = false;
};

// The state letter of /proc/PID/stat: 'Z' for a thread that has exited.
char state_of(int pid) {
  const auto stat = read_file_text("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat ? stat->rfind(')') : std::string::npos;
  return paren == std::string::npos || paren + 2 >= stat->size() ? '?' : (*stat)[paren + 2];
}

// The watch's answer once it names something, or after 10 s (a generous bound for a loaded
// machine: the kernel reports an exit at once).
std::vector<int> first_exits(ProcessExits& watch) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::vector<int> exited = watch.exited();
  while (exited.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
    exited = watch.exited();
  }
  return exited;
}

Result<ProcessExits> watched(const std::vector<int>& pids, ExitWatch how) {
  auto watch = ProcessExits::watch(pids, how);
  EXPECT_TRUE(watch.ok()) << (watch.ok() ? "" : watch.error().text);
  return watch;
}

TEST(ProcessExits, APidfdSeesTheExitBeforeTheParentReaps) {
  Child child;
  ASSERT_GT(child.pid(), 0);
  auto watch = watched({child.pid(), getpid()}, ExitWatch::Pidfd);
  ASSERT_TRUE(watch.ok());
  EXPECT_TRUE(watch.value().exited().empty());
  kill(child.pid(), SIGKILL);
  EXPECT_EQ(first_exits(watch.value()), std::vector<int>{child.pid()});  // a zombie yet
  child.reap();
  EXPECT_EQ(watch.value().exited(), std::vector<int>{child.pid()});
}

TEST(ProcessExits, APidfdWaitsForEveryThread) {
  Child child(/*leader_exits=*/true);
  ASSERT_GT(child.pid(), 0);
  auto watch = watched({child.pid()}, ExitWatch::Pidfd);
  ASSERT_TRUE(watch.ok());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (state_of(child.pid()) != 'Z' && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  ASSERT_EQ(state_of(child.pid()), 'Z') << "the child's first thread did not exit";
  EXPECT_TRUE(watch.value().exited().empty()) << "its second thread still runs";
  kill(child.pid(), SIGKILL);
  EXPECT_EQ(first_exits(watch.value()), std::vector<int>{child.pid()});
}

TEST(ProcessExits, KillPollingSeesTheExitOnceReaped) {
  Child child;
  ASSERT_GT(child.pid(), 0);
  auto watch = watched({child.pid()}, ExitWatch::Kill);
  ASSERT_TRUE(watch.ok());
  EXPECT_TRUE(watch.value().exited().empty());
  kill(child.pid(), SIGKILL);
  child.reap();
  EXPECT_EQ(watch.value().exited(), std::vector<int>{child.pid()});
}

TEST(ProcessExits, AProcessGoneAlreadyIsRefused) {
  for (ExitWatch how : {ExitWatch::Pidfd, ExitWatch::Kill}) {
    Child child;
    ASSERT_GT(child.pid(), 0);
    kill(child.pid(), SIGKILL);
    child.reap();
    auto watch = ProcessExits::watch({getpid(), child.pid()}, how);
    ASSERT_FALSE(watch.ok());
    EXPECT_EQ(watch.error().text,
              "-p " + std::to_string(child.pid()) + ": no process runs with that id");
    EXPECT_EQ(watch.error().exit_code, kExitBadInput);
  }
}

}  // namespace
}  // namespace hucprof
