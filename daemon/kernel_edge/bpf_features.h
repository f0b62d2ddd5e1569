#pragma once
#include <string>
#include <string_view>

#include "core/kernel/bpf_features.h"

struct btf;

namespace hucprof {

// Probes every feature of bpf_feature_catalog() alone, as libbpf's own feature probes do: a
// program type by loading a do-nothing program of it, a helper by loading a program that calls
// it (the verifier names a helper it does not know: "invalid func" / "unknown func"), the map
// flag by a perf_event program using such a map, the kfunc in the kernel's BTF. fentry helpers
// are probed in a program aimed at a function of `kernel` (no BTF: unknown).
BpfFeatureFacts probe_bpf_features(const btf* kernel);

// The helper's id in the kernel's UAPI numbering (linux/bpf.h, as built), -1 when unknown, and
// the other way round (nullptr when the id is past the header's list).
int bpf_helper_id(std::string_view name);
const char* bpf_helper_name(int id);

}  // namespace hucprof
