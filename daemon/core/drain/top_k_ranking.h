#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

namespace hucprof {

// The label every call site outside the top-K is summed into.
inline constexpr std::string_view kOtherCallsite = "other";

// Which call sites are exported by name: the top_k by cumulative cost since start. Ties go to
// the alphabetically first name so that the choice does not depend on arrival order.
class TopKRanking {
 public:
  // Workloads come and go without end (a container per CI job): past this many candidates, the
  // unnamed ones with the smallest totals are forgotten (down to half of it); one seen again
  // starts from 0, as a new one.
  static constexpr size_t kMaxCandidates = 4096;

  explicit TopKRanking(size_t top_k) : top_k_(top_k) {}

  // Adds cost to a call site's running total; a zero cost still makes it a candidate.
  // "other" itself never competes.
  void add(const std::string& callsite, uint64_t cost);
  // Takes effect at the next rerank(): call sites leaving the top-K freeze, as always.
  void set_top_k(size_t top_k) { top_k_ = top_k; }
  // Recomputes the named set from the running totals.
  void rerank();
  // The label an increment for this call site is exported under, as of the last rerank().
  std::string_view label(std::string_view callsite) const;
  size_t candidates() const { return cumulative_.size(); }

 private:
  size_t top_k_;
  std::map<std::string, uint64_t, std::less<>> cumulative_;
  std::set<std::string, std::less<>> named_;
};

}  // namespace hucprof
