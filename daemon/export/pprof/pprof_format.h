#pragma once
#include <string_view>

#include "core/symbols/stack_profile.h"

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
// The step of the checks a sample's time or a count is of (docs/metrics.md, the `step` label).
inline constexpr std::string_view kLabelStep = "step";
// Its name before 0.x (issue 38): profiles written then still read, as `step`.
inline constexpr std::string_view kLabelCheckBefore = "check";
inline constexpr std::string_view kLabelDirection = "direction";
// With the kernel's debuginfo: the copy function the check was reached through.
inline constexpr std::string_view kLabelCopy = "copy";
// Sampling: the workload (systemd unit, container, pod, cgroup) of the task, and its kind.
inline constexpr std::string_view kLabelWorkload = "workload";
inline constexpr std::string_view kLabelWorkloadKind = "workload_kind";
// The command (task comm) that ran the copy (sampling), and its process in recordings: a
// numeric label, as pprof's own perf converter writes it.
inline constexpr std::string_view kLabelComm = "comm";
inline constexpr std::string_view kLabelPid = "pid";

// The rest of busy CPU, as samples of their own (sampling profiles): one per context under the
// root frame kRestFrame, leaf kKernelRestFrame or kUserRestFrame, labelled context=kernel|user;
// kernel samples an interrupt took from a check are a kInterruptFrame leaf above
// kKernelRestFrame, labelled excluded=interrupt too. Then every pprof view divides by busy CPU
// (kernel + user): `-top` percentages are shares of busy CPU, and merged profiles and
// -diff_base keep each side's denominator, which comments would not. Idle CPU is not busy and
// stays a comment. With workloads, each workload's rest carries its workload labels too (what
// no workload was counted for goes without), so `-tagfocus=workload=X` divides by X's busy CPU.
inline constexpr std::string_view kRestFrame = "[not in the checks]";
inline constexpr std::string_view kKernelRestFrame = "[other kernel CPU]";
inline constexpr std::string_view kUserRestFrame = "[user CPU]";
inline constexpr std::string_view kInterruptFrame = "[interrupt in a check]";
inline constexpr std::string_view kLabelContext = "context";
inline constexpr std::string_view kLabelExcluded = "excluded";

// Comments (`pprof -comments`) carry what pprof has no field for, one "hucprof.<key>=<value>"
// each: the kernel, the checks' state, idle samples (older files: every context's samples), and
// for people reading `pprof -comments` the headline: the share of busy CPU in the checks with its
// 95 % interval, its samples and its window, or "collecting" (written, never read back).
inline constexpr std::string_view kCommentPrefix = "hucprof.";
inline constexpr std::string_view kCommentVersion = "version";
inline constexpr std::string_view kCommentKernel = "kernel";
inline constexpr std::string_view kCommentHardened = "hardened_usercopy";
inline constexpr std::string_view kCommentSampledPrefix = "sampled_cpu_samples.";  // + context
inline constexpr std::string_view kCommentLatency = "latency";  // "on" with --latency
// Checks the kernel skipped the check's program for (StackProfile::missed_checks): a count per
// reason, or why the kernel counts none.
inline constexpr std::string_view kCommentMissedPrefix = "missed_checks.";  // + reason
inline constexpr std::string_view kCommentMissedUncounted = "missed_checks_uncounted";
// Sampling: samples the sampler was owed and never ran for (StackProfile::skipped_samples), a
// count; absent where they were not counted.
inline constexpr std::string_view kCommentSkippedSamples = "skipped_samples";
inline constexpr std::string_view kCommentHeadline = "headline";
// Sampling: the costliest call sites' shares of busy CPU and their steps', each with its 95 %
// interval and samples (written, never read back).
inline constexpr std::string_view kCommentCallsitePrefix = "callsite.";  // + call site
inline constexpr size_t kCommentCallsites = 10;
inline constexpr std::string_view kCommentTarget = "target";  // StackProfile::target

// Largest profile `hucprof report` and the reader accept, inflated.
inline constexpr size_t kMaxProfileBytes = size_t{256} << 20;

}  // namespace hucprof
