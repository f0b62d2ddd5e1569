// huc_udp_flood: a bounded UDP flood over loopback, to make the kernel do hardened-usercopy
// checks on the seed's hot path (recvfrom -> udp_recvmsg -> copy_to_iter -> check_copy_size ->
// __check_object_size) while hucprof watches.
//
// One receiver thread recvfrom()s and drops every datagram; sender threads sendto() it as fast as
// they can. Loopback only (127.0.0.1, fixed: nothing here can be pointed elsewhere) and bounded in
// time (--seconds, at most 600). Prints one summary line and exits 0; exits 2 on bad usage.
//
//   huc_udp_flood --seconds 40 [--payload 1024] [--senders 1] [--port 0]
//                 [--receiver-cpu N] [--sender-cpu N]
//
// The CPU options pin the receiver or every sender to one CPU: with receive packet steering on
// lo pointed at the receiver's CPU, each batch of datagrams then reaches it as an IPI whose
// softirq runs on top of whatever the receiver was doing, its usercopy checks included (the host
// test of interrupts inside checks).
//
// Reused by the e2e tier (tests/e2e) and meant for the VM tier: a self-contained binary with no
// dependency beyond libc and threads.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

constexpr int kMaxSeconds = 600;
constexpr int kMaxPayload = 65507;  // largest UDP payload over IPv4
constexpr int kMaxSenders = 8;

struct Options {
  int seconds = 30;
  int payload = 1024;
  int senders = 1;
  int port = 0;  // 0: the kernel picks a free one
  int receiver_cpu = -1;  // -1: wherever the scheduler puts it
  int sender_cpu = -1;
};

constexpr int kMaxCpu = CPU_SETSIZE - 1;

// Pins the calling thread; a CPU that is not online is an error the caller reports.
bool pin_to(int cpu) {
  if (cpu < 0) return true;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

void usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--seconds N (1..%d)] [--payload BYTES (1..%d)] [--senders N (1..%d)] "
               "[--port P] [--receiver-cpu N] [--sender-cpu N]\n"
               "UDP flood over 127.0.0.1 only, bounded in time.\n",
               argv0, kMaxSeconds, kMaxPayload, kMaxSenders);
}

bool parse_int(const char* text, int lo, int hi, int& out) {
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi) return false;
  out = static_cast<int>(v);
  return true;
}

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "-h" || a == "--help") return false;
    if (i + 1 >= argc) return false;
    const char* v = argv[++i];
    bool good = false;
    if (a == "--seconds") good = parse_int(v, 1, kMaxSeconds, o.seconds);
    else if (a == "--payload") good = parse_int(v, 1, kMaxPayload, o.payload);
    else if (a == "--senders") good = parse_int(v, 1, kMaxSenders, o.senders);
    else if (a == "--port") good = parse_int(v, 0, 65535, o.port);
    else if (a == "--receiver-cpu") good = parse_int(v, 0, kMaxCpu, o.receiver_cpu);
    else if (a == "--sender-cpu") good = parse_int(v, 0, kMaxCpu, o.sender_cpu);
    if (!good) {
      std::fprintf(stderr, "bad value for %s: %s\n", argv[i - 1], v);
      return false;
    }
  }
  return true;
}

// Move-only socket fd.
class Socket {
 public:
  Socket() : fd_(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_;
};

sockaddr_in loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) {
    usage(argv[0]);
    return 2;
  }

  Socket rx;
  if (!rx.ok()) {
    std::perror("socket");
    return 1;
  }
  sockaddr_in addr = loopback(o.port);
  if (::bind(rx.fd(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::perror("bind 127.0.0.1");
    return 1;
  }
  socklen_t len = sizeof addr;
  ::getsockname(rx.fd(), reinterpret_cast<sockaddr*>(&addr), &len);
  // The receiver wakes up at least every 100 ms to notice the deadline.
  timeval tv{0, 100000};
  ::setsockopt(rx.fd(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  int rcvbuf = 4 << 20;
  ::setsockopt(rx.fd(), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.seconds);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> sent{0}, received{0}, bytes{0};
  std::atomic<bool> pinned{true};

  std::thread receiver([&] {
    if (!pin_to(o.receiver_cpu)) pinned = false;
    std::vector<char> buf(kMaxPayload);
    sockaddr_in from{};
    while (!stop.load(std::memory_order_relaxed)) {
      socklen_t flen = sizeof from;
      ssize_t n = ::recvfrom(rx.fd(), buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&from), &flen);
      if (n >= 0) {
        received.fetch_add(1, std::memory_order_relaxed);
        bytes.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
      }
    }
  });

  std::vector<std::thread> senders;
  for (int s = 0; s < o.senders; ++s) {
    senders.emplace_back([&] {
      if (!pin_to(o.sender_cpu)) pinned = false;
      Socket tx;
      if (!tx.ok()) return;
      std::vector<char> payload(static_cast<size_t>(o.payload), 'u');
      uint64_t n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        if (::sendto(tx.fd(), payload.data(), payload.size(), 0, reinterpret_cast<const sockaddr*>(&addr),
                     sizeof addr) >= 0)
          ++n;
        // ENOBUFS/EAGAIN when the receiver falls behind: keep going, the receive path is the point.
      }
      sent.fetch_add(n, std::memory_order_relaxed);
    });
  }

  while (std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  stop.store(true);
  for (auto& t : senders) t.join();
  receiver.join();
  if (!pinned) {
    std::fprintf(stderr, "huc_udp_flood: cannot pin to CPU %d or %d (not online?)\n",
                 o.receiver_cpu, o.sender_cpu);
    return 1;
  }

  std::printf("huc_udp_flood: %d s, port %d, payload %d B, %d sender(s): sent %llu, received %llu (%llu bytes)\n",
              o.seconds, ntohs(addr.sin_port), o.payload, o.senders, static_cast<unsigned long long>(sent.load()),
              static_cast<unsigned long long>(received.load()), static_cast<unsigned long long>(bytes.load()));
  return 0;
}
