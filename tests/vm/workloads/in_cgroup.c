// in_cgroup CGROUP_DIR COMMAND [ARG]...: COMMAND born in the cgroup v2 CGROUP_DIR
// (clone3's CLONE_INTO_CGROUP), so that every usercopy check its pid ever runs is that cgroup's:
// a task that moves itself in by writing cgroup.procs runs checks (that very write) in the old
// one first, which the kernel's per-pid count would include and a per-cgroup count would not.
// Prints "in_cgroup: pid N" for COMMAND's pid, then exits with COMMAND's status (125: could not
// start it). COMMAND starts only once that line is written: this process, which is not the
// workload's, then makes no more checks (waitpid and exit copy fixed sizes), so none of its checks
// runs on the workload's vCPU beside the workload's own (tests/vm/README.md, "Checks the program
// never saw": a check of another task there could be skipped and not be the workload's).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_clone3
#define SYS_clone3 435
#endif

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: in_cgroup CGROUP_DIR COMMAND [ARG]...\n");
    return 125;
  }
  int cgroup = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cgroup < 0) {
    perror(argv[1]);
    return 125;
  }
  // The child waits for the end of this pipe: EOF once the parent has written its line. Closing
  // it copies nothing, where writing a byte would be one more check.
  int go[2];
  if (pipe2(go, O_CLOEXEC) < 0) {
    perror("pipe2");
    return 125;
  }
  struct clone_args args;
  memset(&args, 0, sizeof(args));
  args.flags = CLONE_INTO_CGROUP;
  args.exit_signal = SIGCHLD;
  args.cgroup = (uint64_t)cgroup;
  fflush(stdout);
  long pid = syscall(SYS_clone3, &args, sizeof(args));
  if (pid < 0) {
    perror("clone3(CLONE_INTO_CGROUP)");
    return 125;
  }
  if (pid == 0) {
    char byte;
    close(go[1]);
    while (read(go[0], &byte, 1) < 0 && errno == EINTR) {
    }
    close(go[0]);
    execv(argv[2], argv + 2);
    perror(argv[2]);
    _exit(125);
  }
  close(go[0]);
  printf("in_cgroup: pid %ld\n", pid);
  fflush(stdout);
  close(go[1]);
  int status = 0;
  if (waitpid((pid_t)pid, &status, 0) < 0) {
    perror("waitpid");
    return 125;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
