// The one reader of whole files: a regular file of at most N bytes, or why not in words.
#include "core/file_text.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace hucprof {
namespace {

class FileText : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("huc-file-text-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }

  std::filesystem::path dir_;
};

TEST_F(FileText, ReadsARegularFileWhole) {
  const std::string path = write("small", std::string("a\0b\n", 4) + std::string(100'000, 'x'));
  const Result<std::string> read = read_regular_file(path, 1 << 20);
  ASSERT_TRUE(read.ok()) << read.error().text;
  EXPECT_EQ(read.value().size(), 100'004u);
  EXPECT_EQ(read_file_text(path), read.value());
}

TEST_F(FileText, SaysWhyInWordsWithoutThePath) {
  const std::string missing = (dir_ / "missing").string();
  EXPECT_EQ(read_regular_file(missing, 10).error().text, "No such file or directory");
  EXPECT_EQ(read_regular_file(dir_.string(), 10).error().text, "Is a directory");
  EXPECT_EQ(read_regular_file("/dev/zero", 10).error().text, "not a regular file");
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(read_regular_file(fifo, 10).error().text, "not a regular file") << "never blocks";
  EXPECT_EQ(read_regular_file(write("big", "12345678901"), 10).error().text,
            "larger than 10 bytes");
  EXPECT_EQ(read_regular_file(missing, 10).error().exit_code, kExitBadInput);
  EXPECT_EQ(read_file_text(missing), std::nullopt);
}

TEST_F(FileText, NamesTheFileItRead) {
  const std::string path = write("profile", "x");
  FileIdentity identity;
  ASSERT_TRUE(read_regular_file(path, 10, &identity).ok());
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(identity,
            (FileIdentity{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)}));
}

TEST_F(FileText, ReadsProcfsWhoseSizeIsZero) {
  const auto stat = read_file_text("/proc/self/stat");
  ASSERT_TRUE(stat);
  EXPECT_FALSE(stat->empty());
}

}  // namespace
}  // namespace hucprof
