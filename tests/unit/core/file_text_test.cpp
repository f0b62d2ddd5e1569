// The one reader of whole files: a regular file of at most N bytes, or why not in words.
#include "core/files/file_text.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <istream>
#include <iterator>

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

TEST_F(FileText, OpensOnlyARegularFileAndNeverWaitsOnWhatIsNot) {
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // No writer ever comes: an open(O_RDONLY) without O_NONBLOCK would wait here for ever.
  EXPECT_EQ(open_regular_file(fifo, 10).error().text, "not a regular file");
  EXPECT_EQ(open_regular_file("/dev/null", 10).error().text, "not a regular file");
  EXPECT_EQ(open_regular_file(dir_.string(), 10).error().text, "Is a directory");
  const std::filesystem::path loop = dir_ / "loop";
  std::filesystem::create_symlink(loop, loop);
  EXPECT_EQ(open_regular_file(loop.string(), 10).error().text, "Too many levels of symbolic links");
  EXPECT_EQ(read_regular_file(loop.string(), 10).error().text, "Too many levels of symbolic links");
  // A link to a FIFO is the FIFO.
  std::filesystem::create_symlink(fifo, dir_ / "to-fifo");
  EXPECT_EQ(open_regular_file((dir_ / "to-fifo").string(), 10).error().text, "not a regular file");
  EXPECT_EQ(open_regular_file(write("big", "12345678901"), 10).error().text,
            "larger than 10 bytes");
}

TEST_F(FileText, HandsOutTheFileLookedAtOpenForReadingOnly) {
  const std::string path = write("data", "0123456789");
  Result<RegularFile> opened = open_regular_file(path, 10);
  ASSERT_TRUE(opened.ok()) << opened.error().text;
  const RegularFile& file = opened.value();
  EXPECT_EQ(file.size, 10u);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(file.identity,
            (FileIdentity{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)}));
  const int flags = ::fcntl(file.fd.get(), F_GETFL);
  EXPECT_EQ(flags & O_ACCMODE, O_RDONLY);
  EXPECT_NE(flags & O_NONBLOCK, 0);
  EXPECT_NE(::fcntl(file.fd.get(), F_GETFD) & FD_CLOEXEC, 0);
  char head[4] = {};
  EXPECT_EQ(::pread(file.fd.get(), head, 4, 0), 4);
  EXPECT_EQ(std::string(head, 4), "0123");
  // Replaced after it was opened: what is read is still the file looked at.
  std::filesystem::rename(write("other", "xxxxxxxxxx"), path);
  EXPECT_EQ(::pread(file.fd.get(), head, 4, 0), 4);
  EXPECT_EQ(std::string(head, 4), "0123");
}

TEST_F(FileText, AStreamOfAFileEndsAtItsBoundAndSaysSo) {
  const std::string text = "line one\nline two\n";
  auto read_all = [&](uint64_t bound, bool* exceeded) {
    Result<RegularFile> opened = open_regular_file(write("lines", text), 1 << 20);
    EXPECT_TRUE(opened.ok());
    FileStreamBuf bytes(std::move(opened).value(), bound);
    std::istream in(&bytes);
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    *exceeded = bytes.exceeded();
    EXPECT_EQ(bytes.error(), 0);
    return all;
  };
  bool exceeded = true;
  EXPECT_EQ(read_all(text.size(), &exceeded), text);
  EXPECT_FALSE(exceeded);
  EXPECT_EQ(read_all(5, &exceeded), "line ");
  EXPECT_TRUE(exceeded);
  // procfs reports no size: only the stream's bound holds.
  Result<RegularFile> proc = open_regular_file("/proc/self/maps", 1 << 20);
  ASSERT_TRUE(proc.ok()) << proc.error().text;
  FileStreamBuf maps(std::move(proc).value(), 16);
  std::istream in(&maps);
  std::string some((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(some.size(), 16u);
  EXPECT_TRUE(maps.exceeded());
}

TEST_F(FileText, ReadsProcfsWhoseSizeIsZero) {
  const auto stat = read_file_text("/proc/self/stat");
  ASSERT_TRUE(stat);
  EXPECT_FALSE(stat->empty());
}

}  // namespace
}  // namespace hucprof
