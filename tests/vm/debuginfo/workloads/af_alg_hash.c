// af_alg_hash N: N sha256 digests through the kernel's AF_ALG hash socket (modules af_alg and
// algif_hash), then exit 0. The debuginfo VM test's module workload: algif_hash's hash_recvmsg
// copies each digest to the user through memcpy_to_msg -> copy_to_iter, all inlined into the
// module, so its inline chain comes from the module's own debuginfo.
#include <linux/if_alg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef AF_ALG
#define AF_ALG 38
#endif

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s N\n", argv[0]);
    return 2;
  }
  long n = strtol(argv[1], NULL, 10);
  struct sockaddr_alg sa;
  memset(&sa, 0, sizeof(sa));
  sa.salg_family = AF_ALG;
  strcpy((char *)sa.salg_type, "hash");
  strcpy((char *)sa.salg_name, "sha256");
  int tfm = socket(AF_ALG, SOCK_SEQPACKET, 0);
  if (tfm < 0 || bind(tfm, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
    perror("AF_ALG socket/bind (modules af_alg, algif_hash?)");
    return 2;
  }
  int op = accept(tfm, NULL, 0);
  if (op < 0) {
    perror("accept");
    return 2;
  }
  char data[256], digest[32];
  memset(data, 'h', sizeof(data));
  for (long i = 0; i < n; ++i) {
    if (send(op, data, sizeof(data), 0) != (ssize_t)sizeof(data) ||
        read(op, digest, sizeof(digest)) != (ssize_t)sizeof(digest)) {
      perror("send/read");
      return 1;
    }
  }
  close(op);
  close(tfm);
  return 0;
}
