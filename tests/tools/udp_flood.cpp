// A bounded UDP loopback flood, as in seed 003: a sender and a receiver that reads and drops,
// both on 127.0.0.1, for a fixed time. Drives the udp_sendmsg / udp_recvmsg usercopy paths.
//
//   huc_udp_flood [--seconds S] [--payload BYTES]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  double seconds = 5;
  size_t payload = 64;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--seconds") {
      seconds = std::atof(argv[i + 1]);
    } else if (flag == "--payload") {
      payload = static_cast<size_t>(std::atol(argv[i + 1]));
    } else {
      std::fprintf(stderr, "huc_udp_flood: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (seconds <= 0 || seconds > 600 || payload == 0 || payload > 65000) {
    std::fprintf(stderr, "huc_udp_flood: --seconds must be in (0, 600], --payload in [1, 65000]\n");
    return 2;
  }

  int rx = socket(AF_INET, SOCK_DGRAM, 0);
  int tx = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  timeval tv{0, 200000};  // the receiver wakes up to notice the end
  if (rx < 0 || tx < 0 || bind(rx, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(rx, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
      setsockopt(rx, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0) {
    std::perror("huc_udp_flood: socket setup");
    return 1;
  }

  std::atomic<bool> done{false};
  unsigned long long sent = 0, received = 0;
  std::thread receiver([&] {
    std::vector<char> buf(65536);
    while (!done.load(std::memory_order_relaxed)) {
      if (recvfrom(rx, buf.data(), buf.size(), 0, nullptr, nullptr) > 0) ++received;
    }
  });
  std::vector<char> msg(payload, 'x');
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    for (int i = 0; i < 64; ++i) {
      if (sendto(tx, msg.data(), msg.size(), 0, reinterpret_cast<sockaddr*>(&addr),
                 sizeof(addr)) > 0) {
        ++sent;
      }
    }
  }
  done = true;
  receiver.join();
  std::printf("sent %llu received %llu datagrams of %zu bytes in %.1f s\n", sent, received,
              payload, seconds);
  close(rx);
  close(tx);
  return 0;
}
