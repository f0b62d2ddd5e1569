// fentry_cycle FUNCTION N: attach and detach a do-nothing fentry program on FUNCTION N times
// (guest helper of attach_race.py: the trampoline churn of hucprof's attach, on one site).
// Prints "attached N"; exit 1 with the errno's text when the kernel refuses.
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: fentry_cycle FUNCTION N\n");
    return 2;
  }
  struct btf* vmlinux = btf__load_vmlinux_btf();
  if (!vmlinux) {
    fprintf(stderr, "no kernel BTF\n");
    return 1;
  }
  int id = btf__find_by_name_kind(vmlinux, argv[1], BTF_KIND_FUNC);
  btf__free(vmlinux);
  if (id < 0) {
    fprintf(stderr, "%s is not a BTF function\n", argv[1]);
    return 1;
  }
  const struct bpf_insn insns[] = {
      {BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0},  // r0 = 0
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
  };
  LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FENTRY,
              .attach_btf_id = (__u32)id);
  int prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, "race_fentry", "GPL", insns, 2, &opts);
  if (prog < 0) {
    fprintf(stderr, "load: %s\n", strerror(errno));
    return 1;
  }
  int n = atoi(argv[2]), done = 0;
  for (; done < n; done++) {
    int link = bpf_raw_tracepoint_open(NULL, prog);
    if (link < 0) {
      fprintf(stderr, "attach %d: %s\n", done, strerror(errno));
      return 1;
    }
    close(link);
  }
  printf("attached %d\n", done);
  return 0;
}
