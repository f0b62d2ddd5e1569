// What hucprof makes of the environment libdebuginfod reads: its limits, and the cache it
// downloads into, named as what it is when it cannot be one (a file, a FIFO, a link loop, a
// directory that cannot be made) instead of "no server gave build-id".
#include "debuginfo/debuginfod_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "config_file_fixture.h"
namespace hucprof {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Sets variables for one test and puts them back after.
class Environment {
 public:
  void set(const char* name, const char* value) {
    if (!saved_.contains(name)) {
      const char* old = std::getenv(name);
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~Environment() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

constexpr const char* kBuildId = "6a2b4ac77585b8cf102cba771300e573c8489b69";

struct DebuginfodCacheTest : ConfigFileTest {
  std::string problem_with(const fs::path& cache) {
    env.set("DEBUGINFOD_CACHE_PATH", cache.c_str());
    return DebuginfodCache::from_environment().problem(kBuildId);
  }
  Environment env;
};

TEST_F(DebuginfodCacheTest, ADirectoryOrOneThatCanBeMadeIsUsable) {
  fs::create_directories(dir_ / "cache");
  EXPECT_EQ(problem_with(dir_ / "cache"), "");
  EXPECT_EQ(problem_with(dir_ / "new"), "") << "libdebuginfod makes the last directory";
  fs::create_directories(dir_ / "cache" / kBuildId);
  std::ofstream(dir_ / "cache" / kBuildId / "debuginfo") << "an earlier download";
  EXPECT_EQ(problem_with(dir_ / "cache"), "");
}

TEST_F(DebuginfodCacheTest, WhatCannotBeACacheIsNamedAsWhatItIs) {
  std::ofstream(dir_ / "file") << "x";
  EXPECT_EQ(problem_with(dir_ / "file"), "the debuginfod cache " + (dir_ / "file").string() +
                                             " (from DEBUGINFOD_CACHE_PATH) is a regular file, "
                                             "not a directory");
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  EXPECT_THAT(problem_with(dir_ / "fifo"), HasSubstr(" is a FIFO, not a directory"));
  fs::create_symlink(dir_ / "loop", dir_ / "loop");
  EXPECT_EQ(problem_with(dir_ / "loop"), "the debuginfod cache " + (dir_ / "loop").string() +
                                             " (from DEBUGINFOD_CACHE_PATH): Too many levels of "
                                             "symbolic links");
  EXPECT_EQ(problem_with(dir_ / "missing/cache"),
            "the debuginfod cache " + (dir_ / "missing/cache").string() +
                " (from DEBUGINFOD_CACHE_PATH) cannot be made: " + (dir_ / "missing").string() +
                ": No such file or directory");
  EXPECT_THAT(problem_with(dir_ / "file/cache"),
              HasSubstr("(from DEBUGINFOD_CACHE_PATH): Not a directory"));
}

TEST_F(DebuginfodCacheTest, AnEntryThatIsNotAFileIsNamedBeforeLibdebuginfodOpensIt) {
  fs::create_directories(dir_ / "cache" / kBuildId);
  ASSERT_EQ(::mkfifo((dir_ / "cache" / kBuildId / "debuginfo").c_str(), 0600), 0);
  EXPECT_EQ(problem_with(dir_ / "cache"), (dir_ / "cache" / kBuildId / "debuginfo").string() +
                                              " in the debuginfod cache is a FIFO, not a file");
}

TEST_F(DebuginfodCacheTest, WithoutTheVariableItIsWhereLibdebuginfodPutsIt) {
  env.set("DEBUGINFOD_CACHE_PATH", nullptr);
  env.set("HOME", (dir_ / "home").c_str());
  env.set("XDG_CACHE_HOME", (dir_ / "xdg").c_str());
  DebuginfodCache cache = DebuginfodCache::from_environment();
  EXPECT_EQ(cache.path, (dir_ / "xdg/debuginfod_client").string());
  EXPECT_EQ(cache.named_by, "XDG_CACHE_HOME");
  EXPECT_EQ(cache.problem(kBuildId), "") << "both levels are made";
  env.set("XDG_CACHE_HOME", nullptr);
  EXPECT_EQ(DebuginfodCache::from_environment().path,
            (dir_ / "home/.cache/debuginfod_client").string());
  // An existing cache of the old name wins.
  fs::create_directories(dir_ / "home/.debuginfod_client_cache");
  EXPECT_EQ(DebuginfodCache::from_environment().path,
            (dir_ / "home/.debuginfod_client_cache").string());
}

TEST(DownloadLimitsFromEnvironment, AreLibdebuginfodsVariablesWithinHucprofsBounds) {
  Environment env;
  env.set("DEBUGINFOD_MAXTIME", nullptr);
  env.set("DEBUGINFOD_TIMEOUT", nullptr);
  env.set("DEBUGINFOD_MAXSIZE", nullptr);
  DownloadLimits limits = download_limits_from_environment();
  EXPECT_EQ(limits.deadline, std::chrono::seconds(600));
  EXPECT_EQ(limits.stall_window, std::chrono::seconds(90));
  EXPECT_EQ(limits.max_bytes, uint64_t{4} << 30);
  env.set("DEBUGINFOD_MAXTIME", "30s");  // libdebuginfod's atol reads 30
  env.set("DEBUGINFOD_TIMEOUT", "5");
  env.set("DEBUGINFOD_MAXSIZE", "1000000");
  limits = download_limits_from_environment();
  EXPECT_EQ(limits.deadline, std::chrono::seconds(30));
  EXPECT_EQ(limits.stall_window, std::chrono::seconds(5));
  EXPECT_EQ(limits.max_bytes, 1000000u);
  // Larger than a debuginfo file may be, or not a positive number: the bound, the defaults.
  env.set("DEBUGINFOD_MAXSIZE", "99999999999999");
  env.set("DEBUGINFOD_MAXTIME", "0");
  env.set("DEBUGINFOD_TIMEOUT", "soon");
  limits = download_limits_from_environment();
  EXPECT_EQ(limits.max_bytes, uint64_t{4} << 30);
  EXPECT_EQ(limits.deadline, std::chrono::seconds(600));
  EXPECT_EQ(limits.stall_window, std::chrono::seconds(90));
}

}  // namespace
}  // namespace hucprof
