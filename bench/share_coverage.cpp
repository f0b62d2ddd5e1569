// huc_share_coverage: does the 95 % interval of a sampled share hold what it claims?
//
// Given N recordings of one steady load (pprof files written by `hucprof record`, see
// bench/share_coverage.py), it reads each one's samples in the checks and busy samples as
// `hucprof report` does (summarize_cost), takes each recording's interval from
// core/cost/share_interval.h, pools all recordings' counts into the best estimate of the load's
// share there is, and counts the recordings whose interval contains that pooled share.
// Prints one line per recording and a summary; exits 0, or 2 on unreadable input.
//
// The recordings are profiles, which carry no drains: their intervals take the least design
// effect (kMinDesignEffect), as `hucprof report` does. The daemon's are never narrower (its
// design effect is at least that, more where its drains spread more), so a coverage shown here
// holds for /metrics too.
#include <cstdio>
#include <string>
#include <vector>

#include "core/cost/share_interval.h"
#include "core/cost/usercopy_cost.h"
#include "core/files/file_text.h"
#include "export/pprof/pprof_format.h"
#include "export/pprof/pprof_reader.h"

int main(int argc, char** argv) {
  using namespace hucprof;
  if (argc < 3) {
    std::fprintf(stderr, "usage: huc_share_coverage PROFILE PROFILE...\n");
    return 2;
  }
  struct Recording {
    std::string path;
    double k = 0, n = 0;
    ShareEstimate estimate;
  };
  std::vector<Recording> recordings;
  double pooled_k = 0, pooled_n = 0;
  for (int i = 1; i < argc; ++i) {
    Result<std::string> bytes = read_regular_file(argv[i], kMaxProfileBytes);
    if (!bytes.ok()) {
      std::fprintf(stderr, "%s: %s\n", argv[i], bytes.error().text.c_str());
      return 2;
    }
    Result<StackProfile> profile = read_pprof(bytes.value());
    if (!profile.ok()) {
      std::fprintf(stderr, "%s: %s\n", argv[i], profile.error().text.c_str());
      return 2;
    }
    const UsercopyCost cost = summarize_cost(profile.value(), 0);
    Recording r{argv[i],
                static_cast<double>(cost.check_samples),
                static_cast<double>(cost.busy_samples()),
                {}};
    r.estimate = estimate_share(r.k, r.n);
    pooled_k += r.k;
    pooled_n += r.n;
    recordings.push_back(r);
  }
  if (pooled_n <= 0) {
    std::fprintf(stderr, "no busy samples in any recording\n");
    return 2;
  }
  const double pooled = pooled_k / pooled_n;
  int covered = 0, decided = 0;
  for (const Recording& r : recordings) {
    const bool in = r.estimate.interval.lower <= pooled && pooled <= r.estimate.interval.upper;
    covered += in;
    decided += r.estimate.decided;
    std::printf("%-40s %5.0f of %6.0f  %6.3f %%  [%6.3f, %6.3f] %%  %s%s\n", r.path.c_str(), r.k,
                r.n, 100 * r.estimate.share, 100 * r.estimate.interval.lower,
                100 * r.estimate.interval.upper, in ? "holds" : "MISSES",
                r.estimate.decided ? "" : " (collecting)");
  }
  const ShareEstimate all = estimate_share(pooled_k, pooled_n);
  std::printf(
      "pooled: %.0f of %.0f busy samples, %.3f %% [%.3f, %.3f]; %zu recordings, %d decided\n"
      "coverage: %d of %zu intervals (%.1f %%) contain the pooled share\n",
      pooled_k, pooled_n, 100 * pooled, 100 * all.interval.lower, 100 * all.interval.upper,
      recordings.size(), decided, covered, recordings.size(),
      100.0 * covered / static_cast<double>(recordings.size()));
  return 0;
}
