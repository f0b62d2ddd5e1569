#pragma once
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace hucprof::test {

// A directory tree of the test's own below $TMPDIR, removed with it.
class TempTree {
 public:
  TempTree() {
    std::string pattern = (std::filesystem::temp_directory_path() / "huc-tree-XXXXXX").string();
    root_ = ::mkdtemp(pattern.data()) ? pattern : "";
  }
  ~TempTree() {
    if (root_.empty()) return;
    remove_below(AT_FDCWD, root_.c_str());
    ::rmdir(root_.c_str());
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  const std::string& root() const { return root_; }
  // Makes root/relative (and its parents); returns its inode number, the reference the tests
  // compare with.
  uint64_t mkdirs(const std::string& relative) const {
    std::filesystem::create_directories(root_ + relative);
    return inode(relative);
  }
  // Makes root/relative/names[0]/names[1]/... one directory at a time, relative to the last, so
  // the path may be longer than PATH_MAX; returns the deepest one's inode number (0 on failure).
  uint64_t mkdir_chain(const std::string& relative, const std::vector<std::string>& names) const {
    int fd = ::open((root_ + relative).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st {};
    for (const std::string& name : names) {
      const int next = fd < 0 || ::mkdirat(fd, name.c_str(), 0755) != 0
                           ? -1
                           : ::openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd >= 0) ::close(fd);
      fd = next;
    }
    const bool ok = fd >= 0 && ::fstat(fd, &st) == 0;
    if (fd >= 0) ::close(fd);
    return ok ? st.st_ino : 0;
  }
  uint64_t inode(const std::string& relative) const {
    struct stat st {};
    return ::stat((root_ + relative).c_str(), &st) == 0 ? st.st_ino : 0;
  }

 private:
  // Removes everything below `name` (relative to `parent`) by descriptor: a tree deeper than
  // PATH_MAX cannot be removed by path (std::filesystem::remove_all).
  static void remove_below(int parent, const char* name) {
    const int fd = ::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    DIR* dir = ::fdopendir(fd);
    if (dir == nullptr) {
      ::close(fd);
      return;
    }
    std::vector<std::string> entries;
    while (const dirent* e = ::readdir(dir)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..") entries.push_back(n);
    }
    for (const std::string& n : entries) {
      if (::unlinkat(fd, n.c_str(), 0) != 0) {
        remove_below(fd, n.c_str());
        ::unlinkat(fd, n.c_str(), AT_REMOVEDIR);
      }
    }
    ::closedir(dir);
  }

  std::string root_;
};

}  // namespace hucprof::test
