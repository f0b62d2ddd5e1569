#pragma once
#include <string_view>

#include "core/base/result.h"
#include "hucprof.pb.h"

namespace hucprof {

// What `hucprof top --from URL` reads of a daemon's /metrics, back into the Snapshot it was
// rendered from, so one model ranks a daemon's counters and top's own drains alike: the sampled
// CPU (usercopy_cpu_samples_total by call site, syscall and step; the denominator
// usercopy_sampled_cpu_samples_total by context), probe mode's exact checks and bytes
// (usercopy_checks_total, usercopy_check_bytes_total), the sampling frequency, what is attached,
// the build, whether the checks are on, and the drains made (hucprof_drains_total: whether the
// counters moved on since the last reading). Every other family is skipped unread.
//
// Counters must be whole numbers of at most 2^53 (a NaN, a negative or a fraction is no count),
// each series once; labels beyond those named are summed over, as `sum by` would. A page with
// neither sampled CPU nor probe status is no hucprof daemon's (the error says so).
Result<hucprof::v1::Snapshot> snapshot_from_metrics(std::string_view text);

}  // namespace hucprof
