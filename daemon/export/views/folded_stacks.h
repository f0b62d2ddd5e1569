#pragma once
#include <string>

#include "core/symbols/stack_profile.h"

namespace hucprof {

// `hucprof report --folded`: the profile as folded stacks, the text format of Brendan Gregg's
// stackcollapse scripts that flamegraph.pl, inferno and speedscope read: one line per distinct
// stack, its frames root first joined by ';', a space and its count. Frames are merged by
// function name as in the flame graph (core/profile/flame_tree.h); a call the compiler inlined ends
// in
// "_[i]", flamegraph.pl's mark for it. A name's ';' becomes ':' so it cannot split a frame.
//
// Sampled profiles count samples, and also hold the rest of busy CPU under "[not in the
// checks]" (export/pprof/pprof_format.h, as hucprof's pprof files do): the counts then sum to the
// profile's busy samples, what `pprof -top` divides by, and a frame's width in a flame graph is
// its share of busy CPU. Profiles without sampling count the checks' calls.
std::string folded_stacks(const StackProfile& profile);

}  // namespace hucprof
