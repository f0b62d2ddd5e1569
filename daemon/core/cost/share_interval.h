#pragma once
#include <cstdint>
#include <optional>
#include <span>

namespace hucprof {

// How sure a sampled share is, and whether it is sure enough to decide on: every view that shows
// a share of CPU from samples (the report, the web view, pprof's comments, /metrics) takes its
// interval and its verdict rule from here, so they cannot disagree about either.
//
// Each CPU-clock sample is in the checks or not: k of n. The interval is Wilson's score interval
// for a binomial proportion at 95 %, which stays inside [0, 1] and keeps its coverage with few
// hits (k = 0 included), where the textbook p ± 1.96 sqrt(p (1 - p) / n) claims certainty.
// Samples are not independent enough for that: independent recordings of one steady UDP flood
// spread 1.41 and 1.50 times the binomial variance (bench/share_coverage.py, docs/metrics.md), and
// plain Wilson intervals held the pooled share in 87 % of 12 s recordings. So n shrinks to the
// effective sample size n / d, with the design effect d at least kMinDesignEffect, and more where
// the counts come in batches (the drains of a window) whose spread says so.

// The two-sided 95 % normal quantile.
inline constexpr double kZ95 = 1.959963984540054;
// The least design effect any sampled share is taken with (measured, above).
inline constexpr double kMinDesignEffect = 1.5;

struct ShareInterval {
  double lower = 0, upper = 0;
  double width() const { return upper - lower; }
};

// Wilson's 95 % interval of k in n (k <= n; counts may be fractional, e.g. effective counts).
// [0, 1] when n is 0.
ShareInterval wilson_interval(double k, double n);

// What a set of batches of one measurement says about their own spread: their variance of the
// share (a ratio estimator's, from the batches' residuals k_i - p n_i) over the binomial
// variance of the pooled counts, at least 1; 1 with fewer than kMinBatches batches, or nothing
// in the checks, where the spread says nothing.
struct Batch {
  double k = 0, n = 0;
};
inline constexpr size_t kMinBatches = 8;
double design_effect(std::span<const Batch> batches);

// The verdict rule: a share is stated as an answer (a verdict, a prediction, the headline gauge)
// only when its interval is no wider than half the share (about 90 samples in the checks at the
// least design effect), or no wider than 0.2 percentage points (a share near 0 known to be near
// 0: about 2 900 busy samples and none in the checks). Below that it is "collecting".
inline constexpr double kMaxWidthOfShare = 0.5;
inline constexpr double kMaxWidthAbsolute = 0.002;
bool decided(double share, const ShareInterval& interval);

// The interval of a time measured by timing every check (probe mode's --latency): no sampling
// error, but each call is counted at its log2 bucket's midpoint (1.5 x its lower bound), so the
// true time lies between 2/3 and 4/3 of the counted one. For a share, or for seconds.
ShareInterval bucket_interval(double counted);

// One sampled share with everything a view prints about it.
struct ShareEstimate {
  double k = 0, n = 0;  // in the checks, of all counted (busy samples)
  double share = 0;     // k / n
  double design_effect = kMinDesignEffect;
  ShareInterval interval;  // of the effective counts k / d, n / d
  bool decided = false;
  // While collecting: the span of counting, at the rates seen so far, that would give a verdict
  // (at least `span`); unset once decided, and where the rates say nothing (no busy samples).
  std::optional<double> needed_span;
};

// k of n counted over `span` seconds (0: unknown, no needed_span), with a design effect d (taken
// as at least kMinDesignEffect).
ShareEstimate estimate_share(double k, double n, double span = 0,
                             double design_effect = kMinDesignEffect);

}  // namespace hucprof
