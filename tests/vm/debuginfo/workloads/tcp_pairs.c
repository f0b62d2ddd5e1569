// tcp_pairs N PAYLOAD: N send()/recv() pairs of PAYLOAD bytes over one loopback TCP connection,
// then exit 0; any short or failed call exits non-zero. The debuginfo VM test's TCP workload:
// tcp_sendmsg_locked copies in from the user, tcp_recvmsg_locked out to them.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void die(const char *what) {
  perror(what);
  exit(2);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s N PAYLOAD\n", argv[0]);
    return 2;
  }
  long n = strtol(argv[1], NULL, 10);
  long payload = strtol(argv[2], NULL, 10);
  if (n < 0 || payload <= 0 || payload > 65536) {
    fprintf(stderr, "bad N or PAYLOAD\n");
    return 2;
  }
  struct sockaddr_in addr;
  socklen_t len = sizeof(addr);
  memset(&addr, 0, sizeof(addr));
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  if (listener < 0) die("socket");
  if (bind(listener, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
      getsockname(listener, (struct sockaddr *)&addr, &len) < 0 || listen(listener, 1) < 0) {
    die("bind/listen");
  }
  int client = socket(AF_INET, SOCK_STREAM, 0);
  if (client < 0 || connect(client, (struct sockaddr *)&addr, sizeof(addr)) < 0) die("connect");
  int server = accept(listener, NULL, NULL);
  if (server < 0) die("accept");
  int one = 1;
  setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  char *buf = malloc((size_t)payload), *in = malloc((size_t)payload);
  if (!buf || !in) die("malloc");
  memset(buf, 'u', (size_t)payload);
  for (long i = 0; i < n; ++i) {
    if (send(client, buf, (size_t)payload, 0) != payload) die("send");
    long got = 0;
    while (got < payload) {
      ssize_t r = recv(server, in + got, (size_t)(payload - got), 0);
      if (r <= 0) die("recv");
      got += r;
    }
  }
  close(server);
  close(client);
  close(listener);
  return 0;
}
