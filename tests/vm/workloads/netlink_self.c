// netlink_self M [SIZE]: M times, send one SIZE-byte (default 64 KiB) NETLINK_USERSOCK message
// to our own socket and receive it. A unicast netlink message larger than NLMSG_GOODSIZE gets a
// vmalloc'ed skb head (netlink_alloc_large_skb), so on kernels that still do that, both the
// copy-in (netlink_sendmsg) and the copy-out (netlink_recvmsg) run hardened usercopy's vmalloc
// branch (find_vmap_area) -- the seed-001 path (6.1). Since netlink_alloc_large_skb switched to
// kvmalloc (6.12 has it) a 64 KiB head normally comes from the page allocator instead; a SIZE
// above KMALLOC_MAX_SIZE (4 MiB on x86-64) can only be vmalloc'ed, so e.g. 6 MiB reaches
// find_vmap_area on both.
#include <errno.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: %s M [SIZE]\n", argv[0]);
    return 2;
  }
  long m = strtol(argv[1], NULL, 10);
  long size = argc == 3 ? strtol(argv[2], NULL, 10) : 65536;
  if (m < 0 || size < (long)NLMSG_HDRLEN || size > (1L << 30)) return 2;
  int fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_USERSOCK);
  if (fd < 0) {
    perror("socket(NETLINK_USERSOCK)");
    return 2;
  }
  // netlink_sendmsg refuses len > sk_sndbuf - 32, so big messages need big buffers; the
  // *FORCE variants (CAP_NET_ADMIN, we are root in the guest) go past net.core.[rw]mem_max.
  int buf = (int)(2 * size + 65536);
  if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf)) < 0)
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)) < 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
  struct sockaddr_nl self = {.nl_family = AF_NETLINK};
  socklen_t len = sizeof(self);
  if (bind(fd, (struct sockaddr *)&self, sizeof(self)) < 0 ||
      getsockname(fd, (struct sockaddr *)&self, &len) < 0) {
    perror("bind/getsockname");
    return 2;
  }
  char *msg = calloc(1, size);
  char *in = malloc(size + 1);
  if (!msg || !in) return 2;
  struct nlmsghdr *nh = (struct nlmsghdr *)msg;
  nh->nlmsg_len = size;
  nh->nlmsg_type = NLMSG_MIN_TYPE;
  nh->nlmsg_pid = self.nl_pid;
  struct sockaddr_nl dst = {.nl_family = AF_NETLINK, .nl_pid = self.nl_pid};
  for (long i = 0; i < m; i++) {
    ssize_t s = sendto(fd, msg, size, 0, (struct sockaddr *)&dst, sizeof(dst));
    if (s != size) {
      fprintf(stderr, "sendto #%ld: %zd (%s)\n", i, s, strerror(errno));
      return 1;
    }
    ssize_t r = recv(fd, in, size + 1, 0);
    if (r != size) {
      fprintf(stderr, "recv #%ld: %zd (%s)\n", i, r, strerror(errno));
      return 1;
    }
  }
  printf("netlink_self: %ld messages of %ld bytes\n", m, size);
  return 0;
}
