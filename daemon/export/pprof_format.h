#pragma once
#include <string_view>

#include "core/stack_profile.h"

namespace hucprof {

// How hucprof's profiles map onto pprof's conventions; shared by the writer and the reader so
// a profile reads back as it was written.
struct PprofSampleType {
  std::string_view type;  // as pprof names it: `pprof -sample_index=calls`
  std::string_view unit;
};

// pprof's name and unit of each ProfileValue; CPU time is an extra type derived from kSamples.
PprofSampleType pprof_sample_type(ProfileValue value);
inline constexpr PprofSampleType kCpuSampleType{"cpu", "nanoseconds"};

// The kernel image as a pprof mapping, named like perf names it; vmlinux frames carry their
// offset from _stext as address, module frames address 0 in a mapping named "[module]".
inline constexpr std::string_view kKernelMappingName = "[kernel.kallsyms]";

// Label keys of the metric contract.
inline constexpr std::string_view kLabelCallsite = "callsite";
inline constexpr std::string_view kLabelSyscall = "syscall";
inline constexpr std::string_view kLabelCheck = "check";
inline constexpr std::string_view kLabelDirection = "direction";
// With the kernel's debuginfo: the copy function the check was reached through.
inline constexpr std::string_view kLabelCopy = "copy";

// Comments (`pprof -comments`) carry what pprof has no field for, one "hucprof.<key>=<value>"
// each: the denominator above all, so `hucprof report` can give the share of kernel CPU.
inline constexpr std::string_view kCommentPrefix = "hucprof.";
inline constexpr std::string_view kCommentVersion = "version";
inline constexpr std::string_view kCommentKernel = "kernel";
inline constexpr std::string_view kCommentHardened = "hardened_usercopy";
inline constexpr std::string_view kCommentSampledPrefix = "sampled_cpu_samples.";  // + context
inline constexpr std::string_view kCommentLatency = "latency";  // "on" with --latency

// Largest profile `hucprof report` and the reader accept, inflated.
inline constexpr size_t kMaxProfileBytes = size_t{256} << 20;

}  // namespace hucprof
