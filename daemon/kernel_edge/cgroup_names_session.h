#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/drain/raw_drain.h"
#include "core/workload/cgroup_change.h"
#include "kernel_edge/libbpf_ptr.h"

struct cgroup_names_bpf;
struct ring_buffer;

namespace hucprof {

// The kernel's word on every cgroup made or removed on the unified hierarchy
// (bpf/cgroup_names.bpf.c: raw tracepoints cgroup_mkdir and cgroup_rmdir into a ring buffer),
// read at every drain, so that a cgroup that ran between two drains is named by what it was
// called, not looked for after it is gone. Attached at start, before capabilities are dropped;
// reading the ring needs none.
class CgroupNamesSession {
 public:
  struct Started {
    std::unique_ptr<CgroupNamesSession> session;
    std::string error;  // why it is not running, in words
  };
  static Started start();

  ~CgroupNamesSession();
  CgroupNamesSession(const CgroupNamesSession&) = delete;
  CgroupNamesSession& operator=(const CgroupNamesSession&) = delete;

  // Every change since the last read, in the order the kernel made them.
  std::vector<CgroupChange> read();
  // Changes the ring had no room for, since start.
  uint64_t lost() const;
  // Its maps' memory and programs' runs, as the other sessions report theirs.
  void add_costs(RawDrain& out) const;

 private:
  CgroupNamesSession() = default;
  cgroup_names_bpf* skel_ = nullptr;
  ring_buffer* ring_ = nullptr;
  std::vector<CgroupChange> read_;  // filled by the ring's callback during read()
};

}  // namespace hucprof
