#pragma once
#include <cstdint>
#include <string>

namespace hucprof {

// A cgroup made or removed on the unified hierarchy, as the kernel reported it when it happened
// (bpf/cgroup_names.bpf.c): what lets a cgroup that ends before the drain keep its name.
struct CgroupChange {
  enum class Kind { Made, Removed };
  Kind kind = Kind::Made;
  uint64_t id = 0;      // the cgroup's id: bpf_get_current_cgroup_id()'s, its inode number
  uint64_t parent = 0;  // Made: its parent's id
  std::string name;     // Made: its own name below the parent (one path component)
};

}  // namespace hucprof
