#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/base/result.h"

namespace hucprof {

inline constexpr const char* kCgroupMount = "/sys/fs/cgroup";

// Where the cgroup v2 (unified) hierarchy is mounted: `mount` itself on a pure v2 host,
// `mount`/unified on a hybrid one (systemd's layout with v1 controllers beside it). Told apart
// by the file system's magic (statfs f_type CGROUP2_SUPER_MAGIC), not by the directory names.
Result<std::string> find_unified_root(const std::string& mount = kCgroupMount);

// cgroup id → the cgroup's path below the unified root ("/system.slice/nginx.service"; the root
// itself is "/"). The id is bpf_get_current_cgroup_id()'s: the kernfs node id of the task's
// cgroup on the default hierarchy, which kernfs also makes the directory's inode number on
// 64-bit ino_t (see docs/design.md, "Which workload"). So a walk of the tree with stat() is the
// whole index; nothing is asked of BPF.
//
// The walk goes from directory to directory by descriptor (openat, fstatat, ".." back up), never
// by path, so a cgroup whose path is longer than PATH_MAX (anyone with a delegated subtree can
// nest that deep) is found like any other, and it holds at most two descriptors whatever the
// depth. A cgroup deeper than `max_named_depth` levels is named as its ancestor at that depth: a
// path is at most that many names (of at most 255 bytes each), and what is below is the same
// tenant's subtree.
//
// Cached: a miss walks the tree again, at most once per `min_refresh`, so a cgroup made since
// the last walk is found within a second, and never sooner than `walk_time_multiple` times the
// last walk took, so that ids that exist nowhere (a cgroup gone before its samples were read)
// cost at most 1% of a CPU on a node with a very large tree (a walk costs ~5 us a cgroup). At most
// `max_entries` cgroups are kept; a walk that finds more stops there and is counted in
// stats().capped_walks.
//
// Between walks the kernel's reports keep it current where they are available (made(),
// removed(): bpf/cgroup_names.bpf.c), and the path of every cgroup that leaves the index, by a
// report or because a walk no longer finds it, goes to `on_gone` first: it is named by what it
// was. Not thread-safe: one drain thread asks.
class CgroupIndex {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  using Gone = std::function<void(uint64_t cgroup_id, const std::string& path)>;
  struct Options {
    std::string root;  // the unified root (find_unified_root), or any tree in a test
    size_t max_entries = 16384;
    size_t max_named_depth = 64;
    std::chrono::milliseconds min_refresh{1000};
    unsigned walk_time_multiple = 100;
    Clock clock;  // steady_clock::now when empty
    Gone on_gone = nullptr;
  };
  struct Stats {
    uint64_t walks = 0;
    uint64_t capped_walks = 0;  // walks that stopped at max_entries
    uint64_t misses = 0;        // lookups that found no cgroup, even after a walk
    uint64_t throttled = 0;     // of those, misses that did not walk (one walked < min_refresh ago)
    size_t entries = 0;
    uint64_t learned = 0;    // cgroups made() added between walks
    std::string last_error;  // why the last walk could not read the root; "" when it could
  };

  explicit CgroupIndex(Options options);

  std::optional<std::string> path_of(uint64_t cgroup_id);
  // Walks now, whatever the time since the last walk.
  void refresh();
  // The kernel made the cgroup `id`, called `name`, below `parent`: indexed now (unless its
  // parent is not, or the index is full: then a miss walks as before).
  void made(uint64_t id, uint64_t parent, const std::string& name);
  // The kernel removed the cgroup `id`: its path goes to on_gone, then it leaves the index.
  void removed(uint64_t id);
  const Stats& stats() const { return stats_; }

 private:
  // A cgroup as the last walk found it: its name below its parent. Paths are put together on
  // lookup, so the index costs a name per cgroup, not a path.
  struct Node {
    uint64_t parent = 0;
    std::string name;  // "" for the root, and for a cgroup named as its ancestor (too deep)
    size_t depth = 0;  // the root's is 0
  };
  void walk();
  // nullopt when a cgroup on the way up is not indexed (a removal reported for its parent
  // while a report of its own was lost): no partial path is ever a name.
  std::optional<std::string> path_to(uint64_t id) const;

  Options options_;
  std::unordered_map<uint64_t, Node> nodes_;
  uint64_t root_id_ = 0;
  std::optional<std::chrono::steady_clock::time_point> last_walk_;
  std::chrono::steady_clock::duration last_walk_took_{};
  Stats stats_;
};

}  // namespace hucprof
