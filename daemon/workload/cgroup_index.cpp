#include "workload/cgroup_index.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

namespace hucprof {

// kernfs gives a directory the inode number kernfs_ino(kn) = kn->id when ino_t has 64 bits, and
// only the low 32 bits of it otherwise: there the inode number would not be the cgroup id.
static_assert(sizeof(ino_t) >= sizeof(uint64_t),
              "cgroup ids are inode numbers only on 64-bit ino_t");

namespace {

bool is_cgroup2(const std::string& path) {
  struct statfs fs {};
  return ::statfs(path.c_str(), &fs) == 0 &&
         static_cast<uint64_t>(fs.f_type) == CGROUP2_SUPER_MAGIC;
}

struct DirCloser {
  void operator()(DIR* dir) const { ::closedir(dir); }
};

}  // namespace

Result<std::string> find_unified_root(const std::string& mount) {
  if (is_cgroup2(mount)) return mount;
  const std::string hybrid = mount + "/unified";
  if (is_cgroup2(hybrid)) return hybrid;
  return Error{"no cgroup v2 hierarchy at " + mount + " or " + hybrid +
                   " (a cgroup v1-only host: samples cannot be named by workload)",
               kExitCannotRun};
}

CgroupIndex::CgroupIndex(Options options) : options_(std::move(options)) {
  if (!options_.clock) options_.clock = [] { return std::chrono::steady_clock::now(); };
}

std::optional<std::string> CgroupIndex::path_of(uint64_t cgroup_id) {
  if (auto it = paths_.find(cgroup_id); it != paths_.end()) return it->second;
  const auto now = options_.clock();
  const auto interval = std::max<std::chrono::steady_clock::duration>(
      options_.min_refresh, last_walk_took_ * options_.walk_time_multiple);
  if (last_walk_ && now - *last_walk_ < interval) {
    ++stats_.misses;
    ++stats_.throttled;
    return std::nullopt;
  }
  refresh();
  if (auto it = paths_.find(cgroup_id); it != paths_.end()) return it->second;
  ++stats_.misses;
  return std::nullopt;
}

void CgroupIndex::refresh() {
  last_walk_ = options_.clock();
  ++stats_.walks;
  walk();
  last_walk_took_ = options_.clock() - *last_walk_;
}

void CgroupIndex::walk() {
  std::unordered_map<uint64_t, std::string> found;
  struct stat root {};
  const bool stated = ::stat(options_.root.c_str(), &root) == 0;
  if (!stated || !S_ISDIR(root.st_mode)) {
    stats_.last_error = options_.root + ": " + (stated ? "not a directory" : std::strerror(errno));
    paths_.clear();
    stats_.entries = 0;
    return;
  }
  stats_.last_error.clear();
  found.emplace(root.st_ino, "/");

  // Depth first with an explicit stack: cgroup trees can be deep, and a cgroup that goes away
  // mid-walk (ENOENT on open) is just not there any more.
  std::vector<std::string> pending = {""};
  bool capped = false;
  while (!pending.empty() && !capped) {
    const std::string relative = std::move(pending.back());
    pending.pop_back();
    const std::string directory = options_.root + relative;
    std::unique_ptr<DIR, DirCloser> dir(::opendir(directory.c_str()));
    if (!dir) continue;
    const int dir_fd = ::dirfd(dir.get());
    while (const dirent* entry = ::readdir(dir.get())) {
      const std::string_view name = entry->d_name;
      if (name == "." || name == "..") continue;
      if (entry->d_type != DT_DIR && entry->d_type != DT_UNKNOWN) continue;
      struct stat st {};
      if (::fstatat(dir_fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      // Only this file system's directories: never into a mount below the root.
      if (!S_ISDIR(st.st_mode) || st.st_dev != root.st_dev) continue;
      if (found.size() >= options_.max_entries) {
        capped = true;
        break;
      }
      std::string path = relative + "/" + std::string(name);
      found.emplace(st.st_ino, path);
      pending.push_back(std::move(path));
    }
  }
  if (capped) ++stats_.capped_walks;
  paths_ = std::move(found);
  stats_.entries = paths_.size();
}

}  // namespace hucprof
