#pragma once
#include <string>

struct bpf_object;

namespace hucprof {

// Compares every map's key/value size in an opened BPF object with the C++ view of
// hucprof_abi.h. A mismatch means the two compilers disagree on a struct: refuse to load
// rather than read garbage. Returns "" when all match, else which map differs and how.
std::string check_probe_abi(const bpf_object* obj);
std::string check_sampler_abi(const bpf_object* obj);

}  // namespace hucprof
