#pragma once
#include <stdlib.h>
#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace hucprof::test {

// A directory tree of the test's own below $TMPDIR, removed with it.
class TempTree {
 public:
  TempTree() {
    std::string pattern = (std::filesystem::temp_directory_path() / "huc-tree-XXXXXX").string();
    root_ = ::mkdtemp(pattern.data()) ? pattern : "";
  }
  ~TempTree() {
    std::error_code ignored;
    if (!root_.empty()) std::filesystem::remove_all(root_, ignored);
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
  uint64_t inode(const std::string& relative) const {
    struct stat st {};
    return ::stat((root_ + relative).c_str(), &st) == 0 ? st.st_ino : 0;
  }

 private:
  std::string root_;
};

}  // namespace hucprof::test
