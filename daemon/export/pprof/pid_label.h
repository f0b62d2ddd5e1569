#pragma once
#include <string>

#include "profile.pb.h"

namespace hucprof {

// Why a sample's numeric label pid (pprof_format.h) is not one hucprof reads, "" if it is or the
// sample has none: two on one sample, one with a string value (with a number or without), or a
// pid of 0 or below (a sample of no process has no pid label). Keys outside the string table are
// skipped: the reader refuses them itself.
std::string pid_label_problem(const pprof::Profile& profile, const pprof::Sample& sample);

}  // namespace hucprof
