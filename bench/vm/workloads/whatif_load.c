// whatif_load MODE N SIZE: one of the seed workloads, timed around its loop only.
//
//   udp      N sendto()/recvfrom() pairs of SIZE bytes over one loopback UDP socket pair (seed 000,
//            the 64-byte UDP flood; one thread, so every datagram costs exactly one send + recv)
//   tcp      N write()s of SIZE bytes into a loopback TCP connection that a forked reader drains
//            with SIZE-byte read()s (seed 002, netperf TCP_STREAM-like with 16 KiB writes;
//            TCP_NODELAY so each write is sent at once, as netperf's sender does with -D)
//   netlink  N SIZE-byte NETLINK_USERSOCK messages sent to our own socket and received (seed 001:
//            above NLMSG_GOODSIZE the skb head is vmalloc'ed on 6.1, the find_vmap_area path)
//
// Prints one line, `whatif MODE ops=N bytes=B wall_ns=W cpu_ns=C busy_ns=K`, where
//   wall_ns  CLOCK_MONOTONIC around the loop (the guest clock: instructions under QEMU -icount)
//   cpu_ns   user + system time of this process and its reaped children (getrusage) in the loop
//   busy_ns  busy time of all CPUs from /proc/stat (user nice system irq softirq) in the loop:
//            also the softirq work rusage does not charge to the task
// Any short or failed call exits 1 (a workload that silently did less would fake a speed-up);
// bad usage exits 2.
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what) {
  fprintf(stderr, "whatif_load: %s: %s\n", what, strerror(errno));
  exit(1);
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t tv_ns(struct timeval tv) { return (int64_t)tv.tv_sec * 1000000000 + tv.tv_usec * 1000; }

static int64_t cpu_ns(void) {
  struct rusage self, children;
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  return tv_ns(self.ru_utime) + tv_ns(self.ru_stime) + tv_ns(children.ru_utime) +
         tv_ns(children.ru_stime);
}

// user nice system idle iowait irq softirq steal ...: busy = all but idle, iowait and steal.
static int64_t busy_ns(void) {
  FILE *f = fopen("/proc/stat", "r");
  unsigned long long v[8] = {0};
  if (!f || fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]) != 8)
    die("/proc/stat");
  fclose(f);
  return (int64_t)(v[0] + v[1] + v[2] + v[5] + v[6]) * (1000000000 / sysconf(_SC_CLK_TCK));
}

static struct sockaddr_in loopback_any(void) {
  struct sockaddr_in a;
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

static int bound(int type, struct sockaddr_in *addr) {
  int fd = socket(AF_INET, type, 0);
  socklen_t len = sizeof(*addr);
  *addr = loopback_any();
  if (fd < 0 || bind(fd, (struct sockaddr *)addr, sizeof(*addr)) < 0 ||
      getsockname(fd, (struct sockaddr *)addr, &len) < 0)
    die("socket/bind");
  return fd;
}

static void full_read(int fd, char *buf, long size, const char *what) {
  for (long got = 0; got < size;) {
    ssize_t r = read(fd, buf + got, size - got);
    if (r <= 0) {
      if (r == 0) errno = EPIPE;
      die(what);
    }
    got += r;
  }
}

static void udp(long n, long size, char *buf) {
  struct sockaddr_in a, b, from;
  int sa = bound(SOCK_DGRAM, &a), sb = bound(SOCK_DGRAM, &b);
  for (long i = 0; i < n; i++) {
    socklen_t fl = sizeof(from);
    if (sendto(sa, buf, size, 0, (struct sockaddr *)&b, sizeof(b)) != size) die("sendto");
    if (recvfrom(sb, buf, size + 1, 0, (struct sockaddr *)&from, &fl) != size) die("recvfrom");
  }
}

static int tcp_setup(pid_t *reader, long n, long size, char *buf) {
  struct sockaddr_in addr;
  int one = 1, lfd = bound(SOCK_STREAM, &addr);
  if (listen(lfd, 1) < 0) die("listen");
  int out = socket(AF_INET, SOCK_STREAM, 0);
  if (out < 0 || setsockopt(out, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0 ||
      connect(out, (struct sockaddr *)&addr, sizeof(addr)) < 0)
    die("connect");
  int in = accept(lfd, NULL, NULL);
  if (in < 0) die("accept");
  close(lfd);
  *reader = fork();
  if (*reader < 0) die("fork");
  if (*reader == 0) {
    close(out);
    for (long i = 0; i < n; i++) full_read(in, buf, size, "read");
    char extra;
    _exit(read(in, &extra, 1) == 0 ? 0 : 1);  // exactly n * size bytes, then EOF
  }
  close(in);
  return out;
}

static void tcp_run(int out, pid_t reader, long n, long size, char *buf) {
  for (long i = 0; i < n; i++) {
    for (long put = 0; put < size;) {
      ssize_t w = write(out, buf + put, size - put);
      if (w <= 0) die("write");
      put += w;
    }
  }
  shutdown(out, SHUT_WR);
  int status;
  if (waitpid(reader, &status, 0) != reader || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "whatif_load: tcp reader failed\n");
    exit(1);
  }
}

static void netlink(long n, long size, char *buf) {
  int fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_USERSOCK);
  if (fd < 0) die("socket(NETLINK_USERSOCK)");
  int sb = (int)(2 * size + 65536);
  // *FORCE (root in the guest) goes past net.core.[rw]mem_max; netlink_sendmsg needs len <
  // sk_sndbuf - 32.
  if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sb, sizeof(sb)) < 0 ||
      setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sb, sizeof(sb)) < 0)
    die("SO_*BUFFORCE");
  struct sockaddr_nl self = {.nl_family = AF_NETLINK};
  socklen_t len = sizeof(self);
  if (bind(fd, (struct sockaddr *)&self, sizeof(self)) < 0 ||
      getsockname(fd, (struct sockaddr *)&self, &len) < 0)
    die("bind netlink");
  struct nlmsghdr *nh = (struct nlmsghdr *)buf;
  memset(nh, 0, sizeof(*nh));
  nh->nlmsg_len = size;
  nh->nlmsg_type = NLMSG_MIN_TYPE;
  nh->nlmsg_pid = self.nl_pid;
  struct sockaddr_nl dst = {.nl_family = AF_NETLINK, .nl_pid = self.nl_pid};
  for (long i = 0; i < n; i++) {
    if (sendto(fd, buf, size, 0, (struct sockaddr *)&dst, sizeof(dst)) != size) die("sendto");
    if (recv(fd, buf + size + 1, size + 1, 0) != size) die("recv");
    nh->nlmsg_len = size;  // recv wrote the copy behind it; keep the header we send intact
  }
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s udp|tcp|netlink N SIZE\n", argv[0]);
    return 2;
  }
  const char *mode = argv[1];
  long n = strtol(argv[2], NULL, 10), size = strtol(argv[3], NULL, 10);
  if (n <= 0 || size < (long)NLMSG_HDRLEN || size > (64L << 20)) {
    fprintf(stderr, "whatif_load: bad N or SIZE\n");
    return 2;
  }
  char *buf = calloc(1, 2 * size + 2);
  if (!buf) return 2;
  memset(buf, 'w', size);
  int tcp_out = -1;
  pid_t reader = -1;
  if (strcmp(mode, "tcp") == 0) {
    tcp_out = tcp_setup(&reader, n, size, buf);
  } else if (strcmp(mode, "udp") != 0 && strcmp(mode, "netlink") != 0) {
    fprintf(stderr, "whatif_load: unknown mode %s\n", mode);
    return 2;
  } else if (strcmp(mode, "udp") == 0 && size > 65507) {
    fprintf(stderr, "whatif_load: UDP payload above 65507\n");
    return 2;
  }
  int64_t cpu0 = cpu_ns(), busy0 = busy_ns(), t0 = now_ns();
  if (tcp_out >= 0) tcp_run(tcp_out, reader, n, size, buf);
  else if (mode[0] == 'u') udp(n, size, buf);
  else netlink(n, size, buf);
  int64_t t1 = now_ns(), busy1 = busy_ns(), cpu1 = cpu_ns();
  printf("whatif %s ops=%ld bytes=%ld wall_ns=%lld cpu_ns=%lld busy_ns=%lld\n", mode, n, n * size,
         (long long)(t1 - t0), (long long)(cpu1 - cpu0), (long long)(busy1 - busy0));
  return 0;
}
