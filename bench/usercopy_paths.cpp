// huc_usercopy_paths: drives the kernel's hardened-usercopy checks through as many different
// kernel paths as a plain process can reach (sockets of several families, pipes, seq_file reads,
// select/poll, getsockopt, readlink, getcwd, getrandom, xattrs, netlink dumps), with sizes that
// vary, so a sampling profiler sees many distinct kernel stacks. For bench/many_stacks.py.
//
//   huc_usercopy_paths [--seconds N] [--threads N]
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <sys/random.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

// The calls run for the copies the kernel checks on their way; what they return is not needed
// (and _FORTIFY_SOURCE insists it is looked at).
template <typename T>
void copied(T) {}

// One pair of connected descriptors of a socket family, made once per thread.
struct Pair {
  int a = -1, b = -1;
};

Pair socket_pair(int domain, int type) {
  int fds[2];
  if (socketpair(domain, type, 0, fds) != 0) return {};
  return {fds[0], fds[1]};
}

Pair udp_pair() {
  Pair p{socket(AF_INET, SOCK_DGRAM, 0), socket(AF_INET, SOCK_DGRAM, 0)};
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(p.b, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      getsockname(p.b, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
      connect(p.a, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    return {};
  }
  return p;
}

Pair tcp_pair() {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(listener, reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(listener, 1) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return {};
  }
  Pair p{socket(AF_INET, SOCK_STREAM, 0), -1};
  if (connect(p.a, reinterpret_cast<sockaddr*>(&addr), len) != 0) return {};
  p.b = accept(listener, nullptr, nullptr);
  close(listener);
  return p;
}

// Reads whatever is there without blocking.
void drain(int fd, char* buf, size_t size) {
  while (recv(fd, buf, size, MSG_DONTWAIT) > 0) {
  }
}

class Paths {
 public:
  explicit Paths(unsigned seed) : rng_(seed) {
    pairs_ = {udp_pair(),
              tcp_pair(),
              socket_pair(AF_UNIX, SOCK_STREAM),
              socket_pair(AF_UNIX, SOCK_DGRAM),
              socket_pair(AF_UNIX, SOCK_SEQPACKET)};
    int fds[2];
    if (pipe(fds) == 0) pipe_ = {fds[0], fds[1]};
    nl_ = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    xattr_file_ = "/dev/shm/huc_usercopy_paths." + std::to_string(getpid()) + "." +
                  std::to_string(seed);
    int f = open(xattr_file_.c_str(), O_CREAT | O_RDWR, 0600);
    if (f >= 0) close(f);
    setxattr(xattr_file_.c_str(), "user.huc", buf_, 200, 0);
  }
  ~Paths() { unlink(xattr_file_.c_str()); }

  // One operation of the next path, with a size that varies.
  void step() {
    const size_t n = 1 + next() % 1400;
    switch (op_++ % 16) {
      case 0:  // send/recv on every socket family: a call site per protocol
        for (const Pair& p : pairs_) {
          if (send(p.a, buf_, n, MSG_DONTWAIT) > 0) drain(p.b, in_, sizeof(in_));
        }
        break;
      case 1: {  // sendmsg/recvmsg with several iovecs
        iovec iov[4] = {{buf_, n / 4 + 1}, {buf_, n / 3 + 1}, {buf_, n / 2 + 1}, {buf_, 7}};
        msghdr msg{};
        msg.msg_iov = iov;
        msg.msg_iovlen = 1 + next() % 4;
        for (const Pair& p : pairs_) {
          if (sendmsg(p.a, &msg, MSG_DONTWAIT) > 0) {
            iovec in{in_, sizeof(in_)};
            msghdr r{};
            r.msg_iov = &in;
            r.msg_iovlen = 1;
            recvmsg(p.b, &r, MSG_DONTWAIT);
          }
        }
        break;
      }
      case 2:  // pipe write/read, plain and vectored
        if (write(pipe_.b, buf_, n) > 0) copied(read(pipe_.a, in_, sizeof(in_)));
        break;
      case 3: {
        iovec iov[2] = {{buf_, n}, {buf_, n / 2 + 1}};
        if (writev(pipe_.b, iov, 2) > 0) copied(read(pipe_.a, in_, sizeof(in_)));
        break;
      }
      case 4:  // seq_file reads: small buffers from the slab, big ones from vmalloc
        for (const char* path : {"/proc/self/status", "/proc/self/maps", "/proc/meminfo",
                                 "/proc/self/stat", "/proc/net/dev", "/proc/interrupts"}) {
          int fd = open(path, O_RDONLY);
          if (fd < 0) continue;
          while (read(fd, in_, 1 + next() % sizeof(in_)) > 0) {
          }
          close(fd);
        }
        break;
      case 5: {  // select and poll copy in the caller's sets
        fd_set set;
        FD_ZERO(&set);
        FD_SET(pipe_.a, &set);
        timeval zero{};
        select(pipe_.a + 1 + static_cast<int>(next() % 64), &set, nullptr, nullptr, &zero);
        pollfd fds[8];
        for (auto& f : fds) f = {pipe_.a, POLLIN, 0};
        poll(fds, 1 + next() % 8, 0);
        break;
      }
      case 6: {  // getsockopt with lengths that vary
        for (const Pair& p : pairs_) {
          int value = 0;
          socklen_t len = 1 + next() % sizeof(value);
          getsockopt(p.a, SOL_SOCKET, SO_RCVBUF, &value, &len);
          char info[256];
          len = 1 + next() % sizeof(info);
          getsockopt(p.a, IPPROTO_TCP, TCP_INFO, info, &len);
        }
        break;
      }
      case 7: {
        char path[512];
        copied(readlink("/proc/self/exe", path, 1 + next() % sizeof(path)));
        copied(getcwd(path, sizeof(path)));
        break;
      }
      case 8:
        copied(getrandom(in_, 1 + next() % 512, GRND_NONBLOCK));
        break;
      case 9:
        getxattr(xattr_file_.c_str(), "user.huc", in_, sizeof(in_));
        setxattr(xattr_file_.c_str(), "user.huc", buf_, 1 + n % 512, 0);
        break;
      case 10:  // an rtnetlink dump: netlink_recvmsg
        netlink_dump(next() % 2 ? RTM_GETLINK : RTM_GETADDR);
        break;
      case 11: {
        cpu_set_t set;
        sched_getaffinity(0, 8 * (1 + next() % 16), &set);
        break;
      }
      case 12: {  // sendmmsg/recvmmsg on the UDP pair
        iovec iov{buf_, n};
        mmsghdr msgs[4] = {};
        for (auto& m : msgs) {
          m.msg_hdr.msg_iov = &iov;
          m.msg_hdr.msg_iovlen = 1;
        }
        sendmmsg(pairs_[0].a, msgs, 1 + next() % 4, MSG_DONTWAIT);
        iovec in{in_, sizeof(in_)};
        mmsghdr r[4] = {};
        for (auto& m : r) {
          m.msg_hdr.msg_iov = &in;
          m.msg_hdr.msg_iovlen = 1;
        }
        recvmmsg(pairs_[0].b, r, 4, MSG_DONTWAIT, nullptr);
        break;
      }
      case 13:  // sendto/recvfrom with addresses: move_addr_to_user
        for (const Pair& p : pairs_) {
          if (send(p.a, buf_, n, MSG_DONTWAIT) <= 0) continue;
          sockaddr_storage from;
          socklen_t len = sizeof(from);
          recvfrom(p.b, in_, sizeof(in_), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), &len);
        }
        break;
      case 14: {
        int fd = open("/dev/urandom", O_RDONLY);
        if (fd >= 0) {
          copied(read(fd, in_, 1 + next() % 4096));
          close(fd);
        }
        break;
      }
      default:
        for (const Pair& p : pairs_) {
          if (write(p.a, buf_, n) > 0) drain(p.b, in_, sizeof(in_));
        }
    }
  }

 private:
  uint32_t next() {
    rng_ = rng_ * 1664525u + 1013904223u;
    return rng_ >> 8;
  }

  void netlink_dump(uint16_t type) {
    if (nl_ < 0) return;
    struct {
      nlmsghdr nh;
      rtgenmsg gen;
    } req{};
    req.nh.nlmsg_len = sizeof(req);
    req.nh.nlmsg_type = type;
    req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    req.gen.rtgen_family = AF_UNSPEC;
    if (send(nl_, &req, sizeof(req), 0) < 0) return;
    for (;;) {
      ssize_t got = recv(nl_, in_, sizeof(in_), 0);
      if (got <= 0) return;
      for (auto* h = reinterpret_cast<nlmsghdr*>(in_); NLMSG_OK(h, static_cast<size_t>(got));
           h = NLMSG_NEXT(h, got)) {
        if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) return;
      }
    }
  }

  uint32_t rng_;
  unsigned op_ = 0;
  std::vector<Pair> pairs_;
  Pair pipe_;
  int nl_ = -1;
  std::string xattr_file_;
  char buf_[4096] = {};
  char in_[16384] = {};
};

}  // namespace

int main(int argc, char** argv) {
  double seconds = 10;
  unsigned threads = std::thread::hardware_concurrency();
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--seconds")) {
      seconds = std::atof(argv[i + 1]);
    } else if (!std::strcmp(argv[i], "--threads")) {
      threads = static_cast<unsigned>(std::atoi(argv[i + 1]));
    } else {
      std::fprintf(stderr, "usage: %s [--seconds N] [--threads N]\n", argv[0]);
      return 2;
    }
  }
  std::atomic<uint64_t> steps{0};
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < std::max(threads, 1u); ++t) {
    workers.emplace_back([&, t] {
      Paths paths(t + 1);
      uint64_t mine = 0;
      while (std::chrono::steady_clock::now() < end) {
        for (int i = 0; i < 64; ++i) paths.step();
        mine += 64;
      }
      steps += mine;
    });
  }
  for (auto& w : workers) w.join();
  std::printf("steps %llu in %.0f s on %u threads\n", static_cast<unsigned long long>(steps.load()),
              seconds, threads);
  return 0;
}
