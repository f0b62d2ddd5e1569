#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bpf/libbpf_ptr.h"
#include "core/address_ranges.h"
#include "core/raw_drain.h"

struct sampler_bpf;

namespace hucprof {

// Sampling mode's kernel side: the perf_event CPU-clock program on every online CPU, with the
// check dispatchers' address ranges handed in before load.
class SamplingSession {
 public:
  struct Started {
    std::unique_ptr<SamplingSession> session;
    std::string error;  // why sampling is unavailable, in words
    size_t cpus = 0;    // CPUs sampled
  };
  static Started start(uint32_t frequency_hz, const AddressRanges& check_ranges);

  ~SamplingSession();
  SamplingSession(const SamplingSession&) = delete;
  SamplingSession& operator=(const SamplingSession&) = delete;

  void drain(RawDrain& out);

 private:
  SamplingSession() = default;
  sampler_bpf* skel_ = nullptr;
  std::vector<BpfLinkPtr> links_;  // each owns its perf event fd
  int possible_cpus_ = 1;
  std::map<int32_t, StackFrames> stack_cache_;
};

}  // namespace hucprof
