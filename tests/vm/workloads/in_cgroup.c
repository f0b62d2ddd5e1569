// in_cgroup CGROUP_DIR COMMAND [ARG]...: COMMAND born in the cgroup v2 CGROUP_DIR
// (clone3's CLONE_INTO_CGROUP), so that every usercopy check its pid ever runs is that cgroup's:
// a task that moves itself in by writing cgroup.procs runs checks (that very write) in the old
// one first, which the kernel's per-pid count would include and a per-cgroup count would not.
// Prints "in_cgroup: pid N" for COMMAND's pid, then exits with COMMAND's status (125: could not
// start it).
#define _GNU_SOURCE
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
    execv(argv[2], argv + 2);
    perror(argv[2]);
    _exit(125);
  }
  printf("in_cgroup: pid %ld\n", pid);
  fflush(stdout);
  int status = 0;
  if (waitpid((pid_t)pid, &status, 0) < 0) {
    perror("waitpid");
    return 125;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
