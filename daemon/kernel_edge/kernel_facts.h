#pragma once
#include <optional>
#include <string>

#include "core/kernel/kernel_support.h"
#include "core/kernel/page_layout.h"
#include "core/kernel/slab_marker.h"
#include "kernel_edge/libbpf_ptr.h"

namespace hucprof {

// What `run` and `doctor` learn about the running kernel: what it is, and what it lets the
// programs do (KernelSupport). Each answer carries the reason in words for logs and `doctor`.

struct KernelFacts {
  std::string release;                // uname -r
  std::string lockdown;               // "none", "integrity", "confidentiality", or "unknown (...)"
  std::optional<std::string> config;  // kernel config text, if readable
  std::string config_source;          // where it came from
  std::string cmdline;                // /proc/cmdline
  int perf_event_paranoid = 0;        // kernel.perf_event_paranoid, -99 when unreadable
  KernelSupport support;              // what the programs may do here: the attach plan's input

  static KernelFacts probe();
};

// The kernel's BTF (/sys/kernel/btf/vmlinux), parsed once for every question below; null when
// the kernel has none or it cannot be read (errno says why).
BtfPtr load_kernel_btf();

// Tries to load and attach a do-nothing fentry program to `function` (BTF name). Returns an
// empty string on success, else why not in words (e.g. "the kernel refused to attach fentry
// (EPERM: ftrace is locked down on this kernel)"). `kernel` may be null (no BTF).
std::string fentry_attach_error(const btf* kernel, const std::string& function);

// How the kernel marks slab pages, from its BTF: PGTY_slab in enum pagetype (6.12+) or PG_slab
// in enum pageflags. Unknown, with the reason, when `kernel` is null or names neither.
SlabMarker read_slab_marker(const btf* kernel);

// The fields sub-check classification reads (struct page, task_struct), from the kernel's BTF.
// `unreadable` says why when `kernel` is null.
PageLayout read_page_layout(const btf* kernel);

// The kernel config: /proc/config.gz, else the first of kernel_config_paths(release) that reads.
std::optional<std::string> read_kernel_config(const std::string& release, std::string& source);

// kernel.perf_event_paranoid, -99 when unreadable.
int read_perf_event_paranoid();

// Why perf_event_open(2) (sampling, kprobe attach) failed with err, with what to do about it
// when it is a permission problem: Debian's paranoid=3 refuses everyone but CAP_SYS_ADMIN.
std::string perf_permission_words(int err);

}  // namespace hucprof
