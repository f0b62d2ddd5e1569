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

// A directory descriptor of the walk's, closed with it.
class DirFd {
 public:
  explicit DirFd(int fd = -1) : fd_(fd) {}
  DirFd(DirFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  DirFd& operator=(DirFd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ~DirFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_;
};

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// The directory `name` of `parent`, if it is still the one the walk saw (the inode `id`, on the
// hierarchy's device): a directory replaced since is not walked into.
DirFd open_child(int parent, const char* name, uint64_t id, dev_t dev) {
  DirFd dir(::openat(parent, name, kDirFlags));
  struct stat st {};
  if (!dir.ok() || ::fstat(dir.get(), &st) != 0 || st.st_ino != id || st.st_dev != dev) {
    return DirFd();
  }
  return dir;
}

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
  if (nodes_.contains(cgroup_id)) {
    if (auto path = path_to(cgroup_id)) return path;
  }
  const auto now = options_.clock();
  const auto interval = std::max<std::chrono::steady_clock::duration>(
      options_.min_refresh, last_walk_took_ * options_.walk_time_multiple);
  if (last_walk_ && now - *last_walk_ < interval) {
    ++stats_.misses;
    ++stats_.throttled;
    return std::nullopt;
  }
  refresh();
  if (nodes_.contains(cgroup_id)) {
    if (auto path = path_to(cgroup_id)) return path;
  }
  ++stats_.misses;
  return std::nullopt;
}

std::optional<std::string> CgroupIndex::path_to(uint64_t id) const {
  // Each node's parent was indexed before it, so this ends at the root; the bound is a second
  // guarantee of that.
  std::vector<const std::string*> names;
  for (size_t hops = 0; id != root_id_; ++hops) {
    const auto it = nodes_.find(id);
    if (it == nodes_.end() || hops > nodes_.size()) return std::nullopt;
    if (!it->second.name.empty()) names.push_back(&it->second.name);
    id = it->second.parent;
  }
  if (names.empty()) return "/";
  std::string path;
  for (auto name = names.rbegin(); name != names.rend(); ++name) path += "/" + **name;
  return path;
}

void CgroupIndex::made(uint64_t id, uint64_t parent, const std::string& name) {
  const auto up = nodes_.find(parent);
  if (up == nodes_.end() || nodes_.size() >= options_.max_entries || name.empty()) return;
  // As the walk names it: below max_named_depth by its own name, deeper as its ancestor there
  // (a parent deeper than that is named so already: its parent is that ancestor).
  Node node{parent, name, up->second.depth + 1};
  if (node.depth > options_.max_named_depth) {
    node.name.clear();
    if (up->second.depth > options_.max_named_depth) node.parent = up->second.parent;
  }
  if (nodes_.insert_or_assign(id, std::move(node)).second) ++stats_.learned;
  stats_.entries = nodes_.size();
}

void CgroupIndex::removed(uint64_t id) {
  if (id == root_id_ || !nodes_.contains(id)) return;
  if (options_.on_gone) {
    if (auto path = path_to(id)) options_.on_gone(id, *path);
  }
  nodes_.erase(id);
  stats_.entries = nodes_.size();
}

void CgroupIndex::refresh() {
  last_walk_ = options_.clock();
  ++stats_.walks;
  walk();
  last_walk_took_ = options_.clock() - *last_walk_;
}

void CgroupIndex::walk() {
  std::unordered_map<uint64_t, Node> found;
  DirFd fd(::open(options_.root.c_str(), kDirFlags & ~O_NOFOLLOW));
  struct stat root {};
  const bool stated = fd.ok() && ::fstat(fd.get(), &root) == 0;
  if (!stated) {
    stats_.last_error =
        options_.root + ": " + (errno == ENOTDIR ? "not a directory" : std::strerror(errno));
    nodes_.clear();
    stats_.entries = 0;
    return;
  }
  stats_.last_error.clear();
  root_id_ = root.st_ino;
  found.emplace(root_id_, Node{root_id_, "", 0});

  // Depth first, one directory open at a time: down by openat, back up by "..". A level keeps
  // the subdirectories still to visit; `named_as` is the cgroup its children are named below
  // (itself, or its ancestor at max_named_depth).
  struct Level {
    uint64_t id, named_as;
    std::vector<std::pair<std::string, uint64_t>> subdirs;
    size_t next = 0;
  };
  struct statfs fs {};
  const bool kernfs =
      ::fstatfs(fd.get(), &fs) == 0 && static_cast<uint64_t>(fs.f_type) == CGROUP2_SUPER_MAGIC;
  bool capped = false;
  // Reads the directory open in `fd` (the cgroup `level.id`, at `depth`) into the index.
  auto read = [&](Level& level, size_t depth) {
    const int copy = ::dup(fd.get());
    DIR* dir = copy >= 0 ? ::fdopendir(copy) : nullptr;
    if (dir == nullptr) {
      if (copy >= 0) ::close(copy);
      return;
    }
    const bool named = depth < options_.max_named_depth;
    while (const dirent* entry = ::readdir(dir)) {
      const std::string_view name = entry->d_name;
      if (name == "." || name == "..") continue;
      if (entry->d_type != DT_DIR && entry->d_type != DT_UNKNOWN) continue;
      struct stat st {};
      if (::fstatat(fd.get(), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      // Only this file system's directories: never into a mount below the root.
      if (!S_ISDIR(st.st_mode) || st.st_dev != root.st_dev) continue;
      if (found.size() >= options_.max_entries) {
        capped = true;
        break;
      }
      if (!found
               .emplace(st.st_ino, named ? Node{level.id, std::string(name), depth + 1}
                                         : Node{level.named_as, "", depth + 1})
               .second) {
        continue;
      }
      // kernfs gives a directory 2 + its subdirectories as link count: a cgroup with none has
      // nothing below it to read (most are leaves). Other file systems (a test's tree) may
      // count otherwise, so there every directory is read.
      if (!kernfs || st.st_nlink != 2) level.subdirs.emplace_back(name, st.st_ino);
    }
    ::closedir(dir);
  };

  std::vector<Level> levels;
  levels.push_back(Level{root_id_, root_id_, {}});
  read(levels.back(), 0);
  while (!levels.empty() && !capped) {
    Level& top = levels.back();
    if (top.next < top.subdirs.size()) {
      const auto& [name, id_ref] = top.subdirs[top.next++];
      const uint64_t id = id_ref;
      DirFd child = open_child(fd.get(), name.c_str(), id, root.st_dev);
      if (!child.ok()) continue;  // gone (or replaced) since it was read
      // The new level's depth is levels.size(): named down to max_named_depth.
      const uint64_t named_as = levels.size() <= options_.max_named_depth ? id : top.named_as;
      fd = std::move(child);
      levels.push_back(Level{id, named_as, {}});
      read(levels.back(), levels.size() - 1);
      continue;
    }
    levels.pop_back();
    if (levels.empty()) break;
    // Back to the parent. A cgroup cannot be moved to another parent (only renamed in place),
    // so ".." is the directory the walk came from; if it is not (a test tree moved under the
    // walk), the walk ends with what it found.
    DirFd parent = open_child(fd.get(), "..", levels.back().id, root.st_dev);
    if (!parent.ok()) break;
    fd = std::move(parent);
  }
  if (capped) ++stats_.capped_walks;
  // What the walk no longer found is gone; a capped walk cannot tell gone from left out.
  if (options_.on_gone && !capped) {
    for (const auto& [id, node] : nodes_) {
      if (found.contains(id)) continue;
      if (auto path = path_to(id)) options_.on_gone(id, *path);
    }
  }
  nodes_ = std::move(found);
  stats_.entries = nodes_.size();
}

}  // namespace hucprof
