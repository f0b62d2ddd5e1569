#include "kernel_edge/bpf_features.h"

#include <linux/bpf.h>

#include <cerrno>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "core/base/unique_fd.h"
#include "kernel_edge/errno_words.h"

namespace hucprof {
namespace {

// The helpers' names in id order, from the UAPI header's own list (FN(name), ...).
#define HUC_HELPER_NAME(name) "bpf_" #name
constexpr const char* kHelperNames[] = {__BPF_FUNC_MAPPER(HUC_HELPER_NAME)};
#undef HUC_HELPER_NAME

FeatureAnswer present(std::string detail) {
  return {FeatureAnswer::State::Present, std::move(detail)};
}
FeatureAnswer missing(std::string detail) {
  return {FeatureAnswer::State::Missing, std::move(detail)};
}
FeatureAnswer unknown(std::string detail) {
  return {FeatureAnswer::State::Unknown, std::move(detail)};
}

bpf_prog_type prog_type_of(BpfProgram program) {
  switch (program) {
    case BpfProgram::Kprobe:
      return BPF_PROG_TYPE_KPROBE;
    case BpfProgram::PerfEvent:
      return BPF_PROG_TYPE_PERF_EVENT;
    case BpfProgram::Fentry:
      return BPF_PROG_TYPE_TRACING;
    case BpfProgram::Syscall:
      return BPF_PROG_TYPE_SYSCALL;
  }
  return BPF_PROG_TYPE_UNSPEC;
}

// A function fentry test programs can aim at: the check itself, else functions every kernel with
// BTF has. 0 without BTF.
__u32 fentry_target(const btf* kernel) {
  if (!kernel) return 0;
  for (const char* name : {"__check_object_size", "vfs_read", "schedule"}) {
    const int id = btf__find_by_name_kind(kernel, name, BTF_KIND_FUNC);
    if (id > 0) return static_cast<__u32>(id);
  }
  return 0;
}

// Loads insns as a program of `program`'s type; the verifier's log in *log (the first 64 KiB).
int load(BpfProgram program, const bpf_insn* insns, size_t count, __u32 fentry_btf_id,
         std::string* log) {
  std::vector<char> buf(64 * 1024, '\0');
  LIBBPF_OPTS(bpf_prog_load_opts, opts, .log_level = 1, .log_size = static_cast<__u32>(buf.size()),
              .log_buf = buf.data());
  if (program == BpfProgram::Fentry) {
    opts.expected_attach_type = BPF_TRACE_FENTRY;
    opts.attach_btf_id = fentry_btf_id;
  }
  if (program == BpfProgram::Syscall) opts.prog_flags = BPF_F_SLEEPABLE;
  const int fd = bpf_prog_load(prog_type_of(program), "huc_feature", "GPL", insns, count, &opts);
  const int err = errno;
  if (log) log->assign(buf.data(), strnlen(buf.data(), buf.size()));
  if (fd >= 0) close(fd);
  errno = err;
  return fd;
}

FeatureAnswer probe_program_type(BpfProgram program, __u32 fentry_btf_id) {
  if (program == BpfProgram::Fentry && !fentry_btf_id) {
    return unknown("cannot tell: no kernel BTF function to aim a test fentry program at");
  }
  // r0 = 0; exit
  const bpf_insn insns[] = {{BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0},
                            {BPF_JMP | BPF_EXIT, 0, 0, 0, 0}};
  std::string log;
  if (load(program, insns, std::size(insns), fentry_btf_id, &log) >= 0) {
    return present("a do-nothing program of this type loads");
  }
  const int err = errno;
  if (err == EINVAL) return missing("the kernel refused a do-nothing program of this type");
  return unknown("cannot tell: a do-nothing program of this type was refused (" + errno_words(err) +
                 ")");
}

FeatureAnswer probe_helper(BpfProgram program, std::string_view name, __u32 fentry_btf_id) {
  const int id = bpf_helper_id(name);
  if (id < 0) return unknown("cannot tell: this build does not know the helper's number");
  if (program == BpfProgram::Fentry && !fentry_btf_id) {
    return unknown("cannot tell: no kernel BTF function to aim a test fentry program at");
  }
  // call helper; r0 = 0; exit. The verifier looks the helper up before checking its arguments:
  // a refusal for any other reason means it knows the helper.
  const bpf_insn insns[] = {{BPF_JMP | BPF_CALL, 0, 0, 0, id},
                            {BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0},
                            {BPF_JMP | BPF_EXIT, 0, 0, 0, 0}};
  std::string log;
  if (load(program, insns, std::size(insns), fentry_btf_id, &log) >= 0) {
    return present("the verifier took a call of it");
  }
  const int err = errno;
  if (log.find("invalid func ") != std::string::npos ||
      log.find("unknown func ") != std::string::npos) {
    return missing("the verifier does not know it here (" + log.substr(0, log.find('\n')) + ")");
  }
  if (!log.empty()) return present("the verifier knows it (it refused only the test's arguments)");
  return unknown("cannot tell: the test program was refused before the verifier ran (" +
                 errno_words(err) + ")");
}

// Whether a perf_event program may use a hash map without preallocation: kernels since 6.1
// allocate such entries with bpf_mem_alloc, which is safe in any context; older ones refuse.
FeatureAnswer probe_no_prealloc() {
  LIBBPF_OPTS(bpf_map_create_opts, map_opts, .map_flags = BPF_F_NO_PREALLOC);
  UniqueFd map(bpf_map_create(BPF_MAP_TYPE_HASH, "huc_feature", 4, 8, 1, &map_opts));
  if (!map) {
    return unknown("cannot create a hash map without preallocation (" + errno_words(errno) + ")");
  }
  // *(u32 *)(r10 - 4) = 0; r1 = map; r2 = r10 - 4; call map_lookup_elem; r0 = 0; exit
  const bpf_insn insns[] = {
      {BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0},
      {BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map.get()},
      {0, 0, 0, 0, 0},
      {BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0},
      {BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4},
      {BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem},
      {BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0},
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
  };
  std::string log;
  if (load(BpfProgram::PerfEvent, insns, std::size(insns), 0, &log) >= 0) {
    return present("the kernel allocates hash map entries on use (bpf_mem_alloc)");
  }
  const int err = errno;
  if (err == EINVAL) {
    return missing("the kernel refused a perf_event program using such a map (" + errno_words(err) +
                   "); before 6.1 they must be preallocated there");
  }
  return unknown("cannot tell: " + errno_words(err));
}

// A sleepable syscall program must also run: sub-check classification reads the kernel's layout
// with one.
FeatureAnswer probe_syscall_program() {
  const bpf_insn insns[] = {{BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0},
                            {BPF_JMP | BPF_EXIT, 0, 0, 0, 0}};
  LIBBPF_OPTS(bpf_prog_load_opts, opts, .prog_flags = BPF_F_SLEEPABLE);
  UniqueFd prog(bpf_prog_load(BPF_PROG_TYPE_SYSCALL, "huc_feature", "GPL", insns, 2, &opts));
  if (!prog) {
    const int err = errno;
    if (err == EINVAL)
      return missing("the kernel refused a syscall program (" + errno_words(err) + ")");
    return unknown("cannot tell: a syscall program was refused (" + errno_words(err) + ")");
  }
  LIBBPF_OPTS(bpf_test_run_opts, run);
  if (bpf_prog_test_run_opts(prog.get(), &run) != 0) {
    return missing("the kernel loads but does not run a syscall program (" + errno_words(errno) +
                   ")");
  }
  return present("the kernel loads and runs syscall programs");
}

FeatureAnswer probe_kfunc(const btf* kernel, std::string_view name) {
  if (!kernel) return unknown("cannot tell: no kernel BTF");
  if (btf__find_by_name_kind(kernel, std::string(name).c_str(), BTF_KIND_FUNC) > 0) {
    return present("in the kernel's BTF");
  }
  return missing("not in the kernel's BTF");
}

}  // namespace

int bpf_helper_id(std::string_view name) {
  for (size_t id = 0; id < std::size(kHelperNames); ++id) {
    if (name == kHelperNames[id]) return static_cast<int>(id);
  }
  return -1;
}

const char* bpf_helper_name(int id) {
  if (id < 0 || static_cast<size_t>(id) >= std::size(kHelperNames)) return nullptr;
  return kHelperNames[id];
}

BpfFeatureFacts probe_bpf_features(const btf* kernel) {
  BpfFeatureFacts facts;
  const __u32 target = fentry_target(kernel);
  for (const BpfFeature& f : bpf_feature_catalog()) {
    FeatureAnswer answer;
    switch (f.kind) {
      case BpfFeatureKind::ProgramType:
        answer = f.program == BpfProgram::Syscall ? probe_syscall_program()
                                                  : probe_program_type(f.program, target);
        break;
      case BpfFeatureKind::Helper:
        answer = probe_helper(f.program, f.name, target);
        break;
      case BpfFeatureKind::MapFlag:
        answer = probe_no_prealloc();
        break;
      case BpfFeatureKind::Kfunc:
        answer = probe_kfunc(kernel, f.name);
        break;
    }
    facts.answers.emplace(f.key(), std::move(answer));
  }
  return facts;
}

}  // namespace hucprof
