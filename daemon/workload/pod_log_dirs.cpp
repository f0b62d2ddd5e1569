#include "workload/pod_log_dirs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace hucprof {

namespace {

struct DirCloser {
  void operator()(DIR* dir) const { ::closedir(dir); }
};

}  // namespace

PodLogDirs read_pod_log_dirs(const std::string& dir, size_t max_pods) {
  PodLogDirs result;
  std::unique_ptr<DIR, DirCloser> listing(::opendir(dir.c_str()));
  if (!listing) {
    if (errno != ENOENT) result.error = dir + ": " + std::strerror(errno);
    return result;
  }
  const int dir_fd = ::dirfd(listing.get());
  while (const dirent* entry = ::readdir(listing.get())) {
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    struct stat st {};
    const bool directory =
        ::fstatat(dir_fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
    auto parsed = directory ? parse_pod_log_dir(name) : std::nullopt;
    if (!parsed) {
      ++result.other;
      continue;
    }
    if (result.pods.size() >= max_pods) {
      ++result.over_cap;
      continue;
    }
    result.pods.emplace(std::move(parsed->uid), std::move(parsed->pod));
  }
  return result;
}

}  // namespace hucprof
