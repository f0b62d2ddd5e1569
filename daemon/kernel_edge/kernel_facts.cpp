#include "kernel_edge/kernel_facts.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "core/files/file_text.h"
#include "core/kernel/kernel_release.h"
#include "core/kernel/preemption.h"
#include "kernel_edge/bpf_features.h"
#include "kernel_edge/btf_members.h"
#include "kernel_edge/errno_words.h"
#include "kernel_edge/libbpf_ptr.h"

namespace hucprof {

namespace {

bool exists(const char* path) { return access(path, F_OK) == 0; }

Capability probe_kprobes(const std::optional<std::string>& config) {
  if (exists("/sys/bus/event_source/devices/kprobe/type")) {
    return {true, "kprobe PMU present (/sys/bus/event_source/devices/kprobe)"};
  }
  if (exists("/sys/kernel/tracing/kprobe_events") ||
      exists("/sys/kernel/debug/tracing/kprobe_events")) {
    return {true, "legacy kprobe_events in tracefs"};
  }
  if (config && config->find("# CONFIG_KPROBES is not set") != std::string::npos) {
    return {false, "this kernel has no kprobes (CONFIG_KPROBES is not set)"};
  }
  return {false, "this kernel has no kprobe support (no kprobe PMU, no kprobe_events)"};
}

Capability probe_perf_events() {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.freq = 1;
  attr.sample_freq = 1;
  attr.disabled = 1;
  int fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC));
  if (fd < 0) {
    return {false, "perf_event_open(cpu-clock) failed: " + perf_permission_words(errno)};
  }
  close(fd);
  return {true, "perf_event_open(cpu-clock) works"};
}

// A feature's answer as the Capability the plan already takes: only a present feature is ok.
Capability capability_of(const BpfFeatureFacts& facts, const BpfFeature& feature,
                         std::string present_words) {
  auto it = facts.answers.find(feature.key());
  if (it == facts.answers.end()) return {false, feature.words() + ": not probed"};
  if (it->second.state == FeatureAnswer::State::Present) return {true, std::move(present_words)};
  return {false, feature.words() + ": " + it->second.detail};
}

std::string read_lockdown() {
  auto text = read_file_text("/sys/kernel/security/lockdown");
  if (!text) return "unknown (securityfs lockdown file not readable)";
  auto open = text->find('[');
  auto close = text->find(']');
  if (open == std::string::npos || close == std::string::npos) return "unknown";
  return text->substr(open + 1, close - open - 1);
}

// A kernel's config is ~300 kB inflated (compressed, ~60 kB); far past these it is not one.
constexpr uint64_t kMaxConfigGzBytes = uint64_t{16} << 20;
constexpr size_t kMaxConfigBytes = size_t{64} << 20;

std::optional<std::string> read_gzip(const char* path) {
  Result<RegularFile> opened = open_regular_file(path, kMaxConfigGzBytes);
  if (!opened.ok()) return std::nullopt;
  gzFile file = gzdopen(opened.value().fd.get(), "rb");
  if (!file) return std::nullopt;
  opened.value().fd.release();  // gzclose closes it
  std::string out;
  char buf[65536];
  int n = 0;
  while (out.size() <= kMaxConfigBytes && (n = gzread(file, buf, sizeof(buf))) > 0) {
    out.append(buf, static_cast<size_t>(n));
  }
  bool ok = n == 0 && out.size() <= kMaxConfigBytes;
  gzclose(file);
  if (!ok) return std::nullopt;
  return out;
}

// The value of enumerator `value` of `enum name` in the kernel BTF, if it has one.
std::optional<int64_t> btf_enum_value(const btf* kernel, const char* name, const char* value) {
  const int id = btf__find_by_name_kind(kernel, name, BTF_KIND_ENUM);
  if (id < 0) return std::nullopt;
  const btf_type* type = btf__type_by_id(kernel, static_cast<__u32>(id));
  const struct btf_enum* e = btf_enum(type);
  for (__u16 i = 0; i < btf_vlen(type); ++i, ++e) {
    if (std::strcmp(btf__name_by_offset(kernel, e->name_off), value) == 0) return e->val;
  }
  return std::nullopt;
}

std::optional<__u32> struct_id(const btf* kernel, const char* name) {
  const int id = btf__find_by_name_kind(kernel, name, BTF_KIND_STRUCT);
  if (id < 0) return std::nullopt;
  return static_cast<__u32>(id);
}

}  // namespace

int read_perf_event_paranoid() {
  auto text = read_file_text("/proc/sys/kernel/perf_event_paranoid");
  if (!text) return -99;
  try {
    return std::stoi(*text);
  } catch (const std::exception&) {
    return -99;
  }
}

std::string perf_permission_words(int err) {
  std::string words = errno_words(err);
  if (err != EACCES && err != EPERM) return words;
  int paranoid = read_perf_event_paranoid();
  words += " (kernel.perf_event_paranoid=" + std::to_string(paranoid) + ")";
  if (paranoid >= 3) {
    words +=
        ": this kernel lets only CAP_SYS_ADMIN open perf events at paranoid >= 3 "
        "(CONFIG_SECURITY_PERF_EVENTS_RESTRICT); set kernel.perf_event_paranoid=2 to let "
        "CAP_PERFMON do it (see /usr/share/hucprof/sysctl/60-hucprof-perf-events.conf)";
  } else {
    words += ": needs CAP_PERFMON (or CAP_SYS_ADMIN)";
  }
  return words;
}

std::optional<std::string> read_kernel_config(const std::string& release, std::string& source) {
  if (auto text = read_gzip("/proc/config.gz")) {
    source = "/proc/config.gz";
    return text;
  }
  for (const std::string& path : kernel_config_paths(release)) {
    if (auto text = read_file_text(path)) {
      source = path;
      return text;
    }
  }
  source = "none (no /proc/config.gz";
  for (const std::string& path : kernel_config_paths(release)) source += ", no " + path;
  source += ")";
  return std::nullopt;
}

KernelFacts KernelFacts::probe() {
  KernelFacts facts;
  utsname uts{};
  if (uname(&uts) == 0) facts.release = uts.release;
  facts.support.btf = exists("/sys/kernel/btf/vmlinux")
                          ? Capability{true, "/sys/kernel/btf/vmlinux present"}
                          : Capability{false,
                                       "no /sys/kernel/btf/vmlinux (CONFIG_DEBUG_INFO_BTF off): "
                                       "CO-RE programs cannot load"};
  facts.config = read_kernel_config(facts.release, facts.config_source);
  facts.support.kprobes = probe_kprobes(facts.config);
  facts.support.perf_events = probe_perf_events();
  facts.lockdown = read_lockdown();
  facts.perf_event_paranoid = read_perf_event_paranoid();
  {
    const BtfPtr kernel = facts.support.btf.ok ? load_kernel_btf() : nullptr;
    facts.support.bpf_features = probe_bpf_features(kernel.get());
  }
  facts.support.on_demand_maps =
      capability_of(facts.support.bpf_features, no_prealloc_feature(),
                    "the kernel allocates hash map entries on use (bpf_mem_alloc)");
  facts.support.syscall_programs =
      capability_of(facts.support.bpf_features, classify_needs(BpfProgram::Kprobe).front(),
                    "the kernel runs syscall programs");
  if (auto cmdline = read_file_text("/proc/cmdline")) {
    facts.cmdline = cmdline->substr(0, cmdline->find('\n'));
  }
  // debugfs: root only, and not mounted everywhere; the config and cmdline answer otherwise.
  facts.support.preemption = evaluate_preemption(facts.config, facts.cmdline,
                                                 read_file_text("/sys/kernel/debug/sched/preempt"));
  return facts;
}

SlabMarker read_slab_marker(const btf* kernel) {
  SlabMarker marker;
  if (!kernel) {
    marker.detail = "no kernel BTF";
    return marker;
  }
  if (auto type = btf_enum_value(kernel, "pagetype", "PGTY_slab")) {
    marker.page_type = *type;
    marker.detail = "PGTY_slab = " + std::to_string(*type) + " in enum pagetype";
  } else if (auto bit = btf_enum_value(kernel, "pageflags", "PG_slab")) {
    marker.flag_bit = *bit;
    marker.detail = "PG_slab = " + std::to_string(*bit) + " in enum pageflags";
  } else {
    marker.detail =
        "neither PGTY_slab (enum pagetype) nor PG_slab (enum pageflags) in the kernel BTF";
  }
  return marker;
}

PageLayout read_page_layout(const btf* kernel) {
  PageLayout layout;
  if (!kernel) {
    layout.unreadable = "no kernel BTF";
    return layout;
  }
  if (auto page = struct_id(kernel, "page")) {
    layout.page_size = static_cast<uint32_t>(btf__resolve_size(kernel, *page));
    if (__u32 flags = btf_member_type(kernel, *page, "flags")) {
      const btf_type* type = btf__type_by_id(kernel, btf__resolve_type(kernel, flags));
      if (btf_is_int(type)) {
        layout.flags = PageLayout::Flags::Word;
      } else if (btf_is_composite(type) &&
                 btf_member_type(kernel, btf__resolve_type(kernel, flags), "f")) {
        layout.flags = PageLayout::Flags::Memdesc;
      }
    }
    for (const char* head : {"compound_head", "compound_info"}) {
      if (btf_member_type(kernel, *page, head)) {
        layout.head_field = head;
        break;
      }
    }
    layout.page_type = btf_member_type(kernel, *page, "page_type") != 0;
  }
  layout.hugetlb_vmemmap_optimize =
      btf__find_by_name_kind(kernel, "hugetlb_vmemmap_optimize_folio", BTF_KIND_FUNC) >= 0;
  if (auto task = struct_id(kernel, "task_struct")) {
    layout.task_stack = btf_member_type(kernel, *task, "stack") != 0;
    layout.task_pagefault_disabled = btf_member_type(kernel, *task, "pagefault_disabled") != 0;
  }
  return layout;
}

BtfPtr load_kernel_btf() { return BtfPtr(btf__load_vmlinux_btf()); }

std::string fentry_attach_error(const btf* kernel, const std::string& function) {
  if (!kernel) return "no kernel BTF, fentry needs it";
  int id = btf__find_by_name_kind(kernel, function.c_str(), BTF_KIND_FUNC);
  if (id < 0) return "not in kernel BTF (fentry needs a BTF function; kprobe can still attach)";

  // r0 = 0; exit
  const bpf_insn insns[] = {
      {BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0},
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
  };
  LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FENTRY,
              .attach_btf_id = static_cast<__u32>(id));
  UniqueFd prog(bpf_prog_load(BPF_PROG_TYPE_TRACING, "huc_fentry_probe", "GPL", insns, 2, &opts));
  if (!prog) {
    int err = errno;
    std::string why = "the kernel refused to load an fentry program (" + errno_words(err) + ")";
    if (err == EPERM || err == EACCES) {
      why += ": BPF trampolines are not allowed on this kernel (ftrace locked or lockdown)";
    }
    return why;
  }
  UniqueFd link(bpf_raw_tracepoint_open(nullptr, prog.get()));
  if (!link) {
    int err = errno;
    std::string why = "the kernel refused to attach fentry (" + errno_words(err) + ")";
    if (err == EPERM || err == EACCES) {
      why += ": BPF trampolines are not allowed here (ftrace locked or lockdown)";
    } else if (err == EOPNOTSUPP || err == 524 /* ENOTSUPP */) {
      why += ": no BPF trampoline support";
    }
    return why;
  }
  return "";
}

}  // namespace hucprof
