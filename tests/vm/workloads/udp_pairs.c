// udp_pairs N PAYLOAD: exactly N sendto()/recvfrom() pairs of PAYLOAD bytes over one loopback UDP
// socket pair, then exit 0. Any short or failed call exits non-zero: the VM tier compares kernel
// call counts with N, so the workload must do precisely N of each and nothing else on UDP.
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int bound_socket(struct sockaddr_in *addr) {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) {
    perror("socket");
    exit(2);
  }
  socklen_t len = sizeof(*addr);
  memset(addr, 0, sizeof(*addr));
  addr->sin_family = AF_INET;
  addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, (struct sockaddr *)addr, sizeof(*addr)) < 0 ||
      getsockname(fd, (struct sockaddr *)addr, &len) < 0) {
    perror("bind/getsockname");
    exit(2);
  }
  return fd;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s N PAYLOAD\n", argv[0]);
    return 2;
  }
  long n = strtol(argv[1], NULL, 10);
  long payload = strtol(argv[2], NULL, 10);
  if (n < 0 || payload < 0 || payload > 65507) {
    fprintf(stderr, "bad N or PAYLOAD\n");
    return 2;
  }
  struct sockaddr_in a, b;
  int sa = bound_socket(&a);
  int sb = bound_socket(&b);
  char *sbuf = malloc(payload ? payload : 1);
  char *rbuf = malloc(payload + 1);
  if (!sbuf || !rbuf) return 2;
  memset(sbuf, 'u', payload);
  for (long i = 0; i < n; i++) {
    ssize_t s = sendto(sa, sbuf, payload, 0, (struct sockaddr *)&b, sizeof(b));
    if (s != payload) {
      fprintf(stderr, "sendto #%ld: %zd (%s)\n", i, s, strerror(errno));
      return 1;
    }
    struct sockaddr_in from;
    socklen_t fl = sizeof(from);
    ssize_t r = recvfrom(sb, rbuf, payload + 1, 0, (struct sockaddr *)&from, &fl);
    if (r != payload) {
      fprintf(stderr, "recvfrom #%ld: %zd (%s)\n", i, r, strerror(errno));
      return 1;
    }
  }
  printf("udp_pairs: %ld pairs of %ld bytes\n", n, payload);
  return 0;
}
