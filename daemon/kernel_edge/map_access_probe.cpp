#include "kernel_edge/map_access_probe.h"

#include <bpf/bpf.h>
#include <sys/capability.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace hucprof {
namespace {

// The child's verdict, as its exit status.
constexpr int kReadWorks = 0;
constexpr int kReadRefused = 1;
constexpr int kCannotTell = 2;

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

[[noreturn]] void read_without_capabilities(int map_fd) {
  cap_t none = cap_init();
  if (!none || cap_set_proc(none) != 0) _exit(kCannotTell);
  const uint32_t key = 0;
  uint64_t value = 0;
  if (bpf_map_lookup_elem(map_fd, &key, &value) == 0) _exit(kReadWorks);
  _exit(errno == EPERM ? kReadRefused : kCannotTell);
}

}  // namespace

bool map_reads_need_capability() {
  const Fd map(bpf_map_create(BPF_MAP_TYPE_ARRAY, "huc_cap_probe", sizeof(uint32_t),
                              sizeof(uint64_t), 1, nullptr));
  if (map.get() < 0) return false;
  const pid_t child = fork();
  if (child == 0) read_without_capabilities(map.get());
  if (child < 0) return false;
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == kReadRefused;
}

}  // namespace hucprof
