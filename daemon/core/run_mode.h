#pragma once

namespace hucprof {

// What `hucprof run` attaches (--mode) and how probes attach (--probe.attach). Here rather than
// in the CLI so that the attach plan (daemon/core) decides with the user's own words.
enum class Mode { Auto, Probe, Sample };
// How probe mode attaches: fentry where the kernel allows, else kprobe (auto); or forced.
enum class ProbeAttach { Auto, Fentry, Kprobe };

}  // namespace hucprof
