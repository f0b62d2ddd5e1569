#pragma once

namespace hucprof {

// What `hucprof run` attaches (--mode) and how probes attach (--probe.attach). Here rather than
// in the CLI so that the attach plan (daemon/core) decides with the user's own words.
enum class Mode { Auto, Probe, Sample };
// How probe mode attaches: fentry where the kernel allows, else kprobe (auto); or forced.
enum class ProbeAttach { Auto, Fentry, Kprobe };
// How probe mode counts the sub-checks (--probe.subchecks): a program at each sub-check's entry
// (attach), or decided inside the check's own program from the object's address (classify).
enum class SubcheckCounting { Attach, Classify };
// classify reads x86_64's kernel memory layout (bpf/usercopy_classify.bpf.h); other architectures
// probe each sub-check. It is the default where it exists: 4 program runs per UDP datagram
// instead of 12 (README, "What probe mode costs").
#if defined(__x86_64__)
inline constexpr bool kCanClassifySubchecks = true;
#else
inline constexpr bool kCanClassifySubchecks = false;
#endif
inline constexpr SubcheckCounting kDefaultSubcheckCounting =
    kCanClassifySubchecks ? SubcheckCounting::Classify : SubcheckCounting::Attach;

}  // namespace hucprof
