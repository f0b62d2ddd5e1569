// tcp_rr PAIRS N SIZE: a TCP request/response load over loopback, like a key-value server and its
// benchmark client: PAIRS connections, each served by a server process of its own and driven by a
// client process of its own, which sends N requests of SIZE bytes and reads a SIZE-byte response
// to each (the server echoes what it read). Every process makes exactly N send() and N recv()
// calls of SIZE bytes that succeed in full (SIZE is at most one segment's worth, and TCP_NODELAY
// is set), so a check on the send and the receive path runs N times per process. More pairs than
// CPUs put several tasks in the checks on every CPU at once, the case the VM tier provokes
// (tests/vm/README.md, "Checks the program never saw"). Prints "tcp_rr: pid N" for every process
// it starts, so that a per-pid reference can add up the workload's checks. Exit 0 when every pair
// finished, non-zero on any short or failed call.
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what) {
  fprintf(stderr, "tcp_rr: %s: %s\n", what, strerror(errno));
  exit(1);
}

// One call that moves exactly size bytes, or the process fails: a short transfer would change
// the number of checks.
static void exact(ssize_t got, size_t size, const char *what, long i) {
  if (got != (ssize_t)size) {
    fprintf(stderr, "tcp_rr: %s #%ld: %zd of %zu bytes (%s)\n", what, i, got, size,
            got < 0 ? strerror(errno) : "short");
    exit(1);
  }
}

static void no_delay(int fd) {
  int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0) die("TCP_NODELAY");
}

// recv(MSG_WAITALL) of a SIZE that fits one segment returns it in one call on loopback; the
// flag only keeps a split arrival from turning into two calls.
static void serve(int fd, long n, size_t size, char *buf) {
  for (long i = 0; i < n; i++) {
    exact(recv(fd, buf, size, MSG_WAITALL), size, "server recv", i);
    exact(send(fd, buf, size, 0), size, "server send", i);
  }
}

static void drive(int fd, long n, size_t size, char *buf) {
  for (long i = 0; i < n; i++) {
    exact(send(fd, buf, size, 0), size, "client send", i);
    exact(recv(fd, buf, size, MSG_WAITALL), size, "client recv", i);
  }
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s PAIRS N SIZE\n", argv[0]);
    return 2;
  }
  long pairs = strtol(argv[1], NULL, 10), n = strtol(argv[2], NULL, 10);
  long size = strtol(argv[3], NULL, 10);
  if (pairs < 1 || pairs > 256 || n < 0 || size < 1 || size > 16384) {
    fprintf(stderr, "tcp_rr: PAIRS in 1..256, N >= 0, SIZE in 1..16384\n");
    return 2;
  }
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  if (listener < 0) die("socket");
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof(addr);
  if (bind(listener, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
      getsockname(listener, (struct sockaddr *)&addr, &len) < 0 || listen(listener, 256) < 0)
    die("bind/listen");
  char *buf = malloc(size);
  if (!buf) return 2;
  memset(buf, 'r', size);
  // Each pair starts as soon as it is connected: PAIRS busy connections at once.
  for (long p = 0; p < pairs; p++) {
    int client = socket(AF_INET, SOCK_STREAM, 0);
    if (client < 0 || connect(client, (struct sockaddr *)&addr, sizeof(addr)) < 0)
      die("connect");
    int server = accept(listener, NULL, NULL);
    if (server < 0) die("accept");
    no_delay(client);
    no_delay(server);
    for (int side = 0; side < 2; side++) {
      fflush(stdout);  // nothing buffered may be written twice by the child
      pid_t pid = fork();
      if (pid < 0) die("fork");
      if (pid == 0) {
        close(listener);
        close(side ? client : server);
        if (side)
          serve(server, n, size, buf);
        else
          drive(client, n, size, buf);
        _exit(0);
      }
      printf("tcp_rr: pid %d\n", (int)pid);
    }
    close(client);
    close(server);
  }
  int failed = 0, status;
  while (wait(&status) > 0) failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  return failed;
}
