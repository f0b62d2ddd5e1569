#pragma once
#include <functional>
#include <string>

#include "core/symbols/stack_profile.h"
#include "profile.pb.h"

namespace hucprof {

// A StackProfile as a pprof Profile: one sample per stack and label set, leaf first, with the
// metric labels as pprof labels; sample types samples/count + cpu/nanoseconds (sampling) and
// calls/count + bytes/bytes [+ latency/nanoseconds] + subchecks/count (probes). No kernel
// address: vmlinux locations carry their offset from _stext, everything else 0.
pprof::Profile to_pprof(const StackProfile& profile);

// What `GET /debug/pprof/usercopy` serves and `hucprof record` writes: the serialized profile,
// gzipped, as `go tool pprof` expects it.
// `pause`, if given, is called every few hundred samples and between gzip chunks, so the caller
// can step aside for a drain (DrainGate).
std::string encode_pprof_gzip(const StackProfile& profile, const std::function<void()>& pause = {});

}  // namespace hucprof
