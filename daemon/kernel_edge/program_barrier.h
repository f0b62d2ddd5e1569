#pragma once
#include <string>
#include <vector>

#include "core/drain/raw_drain.h"
#include "kernel_edge/libbpf_ptr.h"

namespace hucprof {

// Waits until every BPF program that was running when wait() was called has returned: an RCU
// grace period, which user space cannot ask for directly. Updating a map-in-map is the way the
// kernel offers (its update waits with synchronize_rcu(), so that user space knows no program
// still uses the old inner map; the kernel's own selftests use it the same way). The drain needs
// it between moving to a new generation and deleting the old one's keys.
class ProgramBarrier {
 public:
  // An unusable barrier (map-in-map refused) waits by sleeping instead; error() says why.
  ProgramBarrier();
  void wait();
  const std::string& error() const { return error_; }
  // Its two small maps count towards hucprof's BPF memory too.
  void add_map_memory(std::vector<MapMemory>& out) const;

 private:
  UniqueFd inner_;
  UniqueFd outer_;
  std::string error_;
};

}  // namespace hucprof
