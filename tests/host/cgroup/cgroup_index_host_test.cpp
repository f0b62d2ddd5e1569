// The cgroup index on this machine's unified hierarchy (root): a cgroup the test makes, with a
// process of its own in it, is found under the id the kernel gives it, also 50 levels deep with
// a path longer than PATH_MAX.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cgroup_host_test.h"
#include "core/workload/workload_rules.h"
#include "workload/cgroup_index.h"

namespace hucprof {
namespace {

using namespace std::chrono_literals;

// In a child: moves itself into the cgroup whose cgroup.procs is `procs` (relative to `dir`; "0"
// is the writer), then spins so that a CPU-clock sample finds it running. Only
// async-signal-safe calls.
[[noreturn]] void join_and_spin(int dir, const char* procs) {
  const int fd = ::openat(dir, procs, O_WRONLY);
  if (fd < 0 || ::write(fd, "0", 1) != 1) ::_exit(1);
  ::close(fd);
  for (;;) asm volatile("" ::: "memory");
}

void kill_and_reap(pid_t child) {
  if (child <= 0) return;
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}

// A cgroup below the unified root with one busy child process in it; both go away with it.
class CgroupWithProcess {
 public:
  explicit CgroupWithProcess(const std::string& root)
      : relative_("/hucprof-test-" + std::to_string(::getpid())), path_(root + relative_) {
    if (::mkdir(path_.c_str(), 0755) != 0) {
      error_ = path_ + ": " + std::strerror(errno);
      return;
    }
    const std::string procs = path_ + "/cgroup.procs";
    child_ = ::fork();
    if (child_ == 0) {
      join_and_spin(AT_FDCWD, procs.c_str());
    }
  }
  ~CgroupWithProcess() {
    kill_and_reap(child_);
    // The cgroup is empty once its last task is reaped; the kernel may take a moment to see it.
    for (int i = 0; i < 100 && ::rmdir(path_.c_str()) != 0 && errno == EBUSY; ++i) {
      std::this_thread::sleep_for(10ms);
    }
  }

  const std::string& error() const { return error_; }
  pid_t pid() const { return child_; }
  const std::string& relative() const { return relative_; }
  const std::string& path() const { return path_; }

 private:
  std::string relative_, path_, error_;
  pid_t child_ = -1;
};

// A chain of cgroups below the unified root, `levels` deep with names of 100 bytes (its path is
// longer than PATH_MAX from 40 levels on), made one below the other by descriptor, and one busy
// child process in the deepest; all removed again, deepest first.
class DeepCgroupWithProcess {
 public:
  DeepCgroupWithProcess(const std::string& root, int levels) {
    const std::string top = "hucprof-test-deep-" + std::to_string(::getpid());
    relative_ = "/" + top;
    int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    std::string name = top;
    for (int level = 0; level <= levels && fd >= 0; ++level) {
      if (level > 0) {
        name = "level" + std::to_string(level) + "-";
        name += std::string(100 - name.size(), 'x');
        relative_ += "/" + name;
      }
      if (::mkdirat(fd, name.c_str(), 0755) != 0) {
        error_ =
            "mkdir " + name + " at level " + std::to_string(level) + ": " + std::strerror(errno);
        break;
      }
      dirs_.push_back({fd, name});
      fd = ::openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    }
    if (fd < 0 && error_.empty()) error_ = std::string("openat: ") + std::strerror(errno);
    if (!error_.empty()) {
      if (fd >= 0) ::close(fd);
      return;
    }
    deepest_ = fd;
    child_ = ::fork();
    if (child_ == 0) {
      join_and_spin(deepest_, "cgroup.procs");
    }
  }
  ~DeepCgroupWithProcess() {
    kill_and_reap(child_);
    if (deepest_ >= 0) ::close(deepest_);
    for (auto it = dirs_.rbegin(); it != dirs_.rend(); ++it) {
      for (int i = 0;
           i < 100 && ::unlinkat(it->parent, it->name.c_str(), AT_REMOVEDIR) != 0 && errno == EBUSY;
           ++i) {
        std::this_thread::sleep_for(10ms);
      }
      ::close(it->parent);
    }
  }

  const std::string& error() const { return error_; }
  pid_t pid() const { return child_; }
  int deepest() const { return deepest_; }
  const std::string& relative() const { return relative_; }
  const std::string& last_name() const { return dirs_.back().name; }

  // Whether the child is listed in the deepest cgroup's cgroup.procs (it moves itself in).
  bool holds_child() const {
    for (int i = 0; i < 200; ++i) {
      const int fd = ::openat(deepest_, "cgroup.procs", O_RDONLY | O_CLOEXEC);
      std::string text(4096, '\0');
      const ssize_t n = fd < 0 ? -1 : ::read(fd, text.data(), text.size());
      if (fd >= 0) ::close(fd);
      if (n > 0 && std::stoi(text.substr(0, static_cast<size_t>(n))) == child_) return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }

 private:
  struct Dir {
    int parent;  // open
    std::string name;
  };
  std::vector<Dir> dirs_;
  std::string relative_, error_;
  int deepest_ = -1;
  pid_t child_ = -1;
};

// The child's line "0::<path>" of /proc/PID/cgroup, once it has moved itself in.
std::string unified_path_of(pid_t pid, const std::string& expected) {
  std::string path;
  for (int i = 0; i < 200; ++i) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
    for (std::string line; std::getline(in, line);) {
      if (line.starts_with("0::")) path = line.substr(3);
    }
    if (path == expected) break;
    std::this_thread::sleep_for(10ms);
  }
  return path;
}

// The kernel's file handle for a cgroup directory: kernfs_encode_fh writes the node id, 8 bytes
// of type FILEID_KERNFS (0xfe); 0 when it cannot be had.
uint64_t handle_id(const std::string& path, int* type, int dirfd = AT_FDCWD, int flags = 0) {
  struct Handle {
    file_handle header;
    unsigned char bytes[MAX_HANDLE_SZ];
  } handle{};
  handle.header.handle_bytes = MAX_HANDLE_SZ;
  int mount_id = 0;
  if (::name_to_handle_at(dirfd, path.c_str(), &handle.header, &mount_id, flags) != 0) return 0;
  *type = handle.header.handle_type;
  if (handle.header.handle_bytes != sizeof(uint64_t)) return 0;
  uint64_t id = 0;
  std::memcpy(&id, handle.header.f_handle, sizeof id);
  return id;
}

using CgroupIndexHost = test::UnifiedHierarchyTest;

TEST_F(CgroupIndexHost, TheKernelsIdForAProcessesCgroupResolvesToItsPath) {
  // Walked before the cgroup exists: the lookup must find it by refreshing on the miss.
  // No throttle at all: with the default multiple, a walk of a big tree (a CI machine's) makes
  // the next one wait longer than this test takes to make its cgroup.
  CgroupIndex index({.root = root_, .min_refresh = 0ms, .walk_time_multiple = 0, .clock = {}});
  index.refresh();
  CgroupWithProcess cgroup(root_);
  ASSERT_EQ(cgroup.error(), "");
  ASSERT_GT(cgroup.pid(), 0);
  ASSERT_EQ(unified_path_of(cgroup.pid(), cgroup.relative()), cgroup.relative());

  int type = 0;
  const uint64_t id = handle_id(cgroup.path(), &type);
  ASSERT_NE(id, 0u) << "name_to_handle_at(" << cgroup.path() << "): " << std::strerror(errno);
  EXPECT_EQ(type, 0xfe) << "FILEID_KERNFS";
  struct stat st {};
  ASSERT_EQ(::stat(cgroup.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_ino, id) << "the directory's inode number is the cgroup id";

  const auto path = index.path_of(id);
  EXPECT_EQ(index.stats().walks, 2u);
  ASSERT_EQ(path, cgroup.relative()) << index.stats().entries << " cgroups indexed";
  EXPECT_EQ(classify_cgroup(*path, WorkloadRules::defaults()).name, cgroup.relative());
}

// The id BPF sees for `pid`: bpftrace's `cgroup` builtin is bpf_get_current_cgroup_id(), read
// here from a CPU-clock sample of it (perf_event programs attach on this kernel); 0 and what
// bpftrace said when it gave none.
uint64_t bpf_cgroup_id_of(pid_t pid, std::string* said) {
  const std::string program = "profile:hz:199 /pid == " + std::to_string(pid) +
                              "/ { printf(\"cgroup=%llu\\n\", cgroup); exit(); }";
  const std::string command =
      "timeout 60 " + std::string(HUC_BPFTRACE) + " -e '" + program + "' 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> out(::popen(command.c_str(), "r"), ::pclose);
  if (!out) return 0;
  std::array<char, 512> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), out.get())) *said += buffer.data();
  const size_t at = said->find("cgroup=");
  return at == std::string::npos ? 0 : std::stoull(said->substr(at + 7));
}

// The same, with bpftrace to ask.
class CgroupIndexBpf : public test::UnifiedHierarchyTest {
 protected:
  void SetUp() override {
    test::UnifiedHierarchyTest::SetUp();
    const std::string bpftrace = HUC_BPFTRACE;
    if (bpftrace.empty() || ::access(bpftrace.c_str(), X_OK) != 0) {
      GTEST_SKIP() << "bpftrace not found at configure time (scripts/install-deps.sh installs it)";
    }
  }
};

TEST_F(CgroupIndexBpf, BpfGetCurrentCgroupIdIsTheIdTheIndexResolves) {
  CgroupWithProcess cgroup(root_);
  ASSERT_EQ(cgroup.error(), "");
  ASSERT_EQ(unified_path_of(cgroup.pid(), cgroup.relative()), cgroup.relative());

  std::string said;
  const uint64_t bpf_id = bpf_cgroup_id_of(cgroup.pid(), &said);
  ASSERT_NE(bpf_id, 0u) << said;
  CgroupIndex index({.root = root_, .clock = {}});
  EXPECT_EQ(index.path_of(bpf_id), cgroup.relative()) << "bpf_get_current_cgroup_id() = " << bpf_id;
}

// A tenant with a delegated subtree can nest cgroups past PATH_MAX (the kernel's
// cgroup.max.depth is unlimited by default): no path to the deepest can be opened, and
// /proc/PID/cgroup of its process cuts the path at PATH_MAX, yet the index names it.
constexpr int kDeepLevels = 50;

TEST_F(CgroupIndexHost, ACgroupFiftyLevelsDeepResolvesToItsPath) {
  DeepCgroupWithProcess cgroup(root_, kDeepLevels);
  ASSERT_EQ(cgroup.error(), "");
  ASSERT_GT(cgroup.relative().size(), static_cast<size_t>(PATH_MAX));
  ASSERT_TRUE(cgroup.holds_child()) << "the child is in the deepest cgroup";

  struct stat st {};
  ASSERT_EQ(::fstat(cgroup.deepest(), &st), 0);
  int type = 0;
  EXPECT_EQ(handle_id("", &type, cgroup.deepest(), AT_EMPTY_PATH), st.st_ino)
      << "the kernfs file handle of the deepest cgroup is its inode number";
  CgroupIndex index({.root = root_, .min_refresh = 0ms, .walk_time_multiple = 0, .clock = {}});
  const auto path = index.path_of(st.st_ino);
  ASSERT_EQ(path, cgroup.relative()) << index.stats().entries << " cgroups indexed";
  // The workload's name is the path's tail (at most 128 bytes): the deepest cgroup's own name.
  const Workload workload = classify_cgroup(*path, WorkloadRules::defaults());
  EXPECT_EQ(workload.name, ".../" + cgroup.last_name());
}

TEST_F(CgroupIndexBpf, BpfGetCurrentCgroupIdFiftyLevelsDeepIsTheIdTheIndexResolves) {
  DeepCgroupWithProcess cgroup(root_, kDeepLevels);
  ASSERT_EQ(cgroup.error(), "");
  ASSERT_TRUE(cgroup.holds_child());
  std::string said;
  const uint64_t bpf_id = bpf_cgroup_id_of(cgroup.pid(), &said);
  ASSERT_NE(bpf_id, 0u) << said;
  CgroupIndex index({.root = root_, .clock = {}});
  EXPECT_EQ(index.path_of(bpf_id), cgroup.relative()) << "bpf_get_current_cgroup_id() = " << bpf_id;
}

}  // namespace
}  // namespace hucprof
