#pragma once

namespace hucprof {

// Whether reading a BPF map through a descriptor already held needs a capability here: true on
// kernels that refuse every bpf() command without CAP_BPF or CAP_SYS_ADMIN while
// kernel.unprivileged_bpf_disabled is set (Debian's 5.10), false where only loading programs and
// creating maps need one. Found by trying it: a child process without capabilities reads a map
// the caller created. False when it cannot tell (no map, no fork), as before this probe existed.
// Forks: call while single-threaded.
bool map_reads_need_capability();

}  // namespace hucprof
