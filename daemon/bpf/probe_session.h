#pragma once
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "bpf/kernel_facts.h"
#include "bpf/libbpf_ptr.h"
#include "core/kallsyms_index.h"
#include "core/raw_drain.h"
#include "hucprof.pb.h"

struct probe_bpf;

namespace hucprof {

enum class AttachPolicy { Auto, Fentry, Kprobe };

struct ProbeConfig {
  AttachPolicy policy = AttachPolicy::Auto;
  bool latency = false;
  // Copy-helper symbols (normalized) whose callers are the real call sites.
  std::vector<std::string_view> helper_symbols;
};

// Probe mode's kernel side: decides per target fentry / kprobe / unavailable, loads probe.bpf.c
// with only the programs that can attach, attaches them and reads their maps. Owns every libbpf
// object it creates.
class ProbeSession {
 public:
  struct Started {
    std::unique_ptr<ProbeSession> session;           // null when nothing could attach
    std::vector<hucprof::v1::ProbeStatus> statuses;  // one per target, attached or why not
    std::string error;                               // set when the object could not load at all
  };
  static Started start(const ProbeConfig& config, const KallsymsIndex& kallsyms,
                       const KernelFacts& facts);

  ~ProbeSession();
  ProbeSession(const ProbeSession&) = delete;
  ProbeSession& operator=(const ProbeSession&) = delete;

  void drain(RawDrain& out);

 private:
  ProbeSession() = default;
  probe_bpf* skel_ = nullptr;
  std::vector<BpfLinkPtr> links_;
  int possible_cpus_ = 1;
  std::map<int32_t, StackFrames> short_stack_cache_;
  std::set<int32_t> full_stacks_read_;
};

}  // namespace hucprof
