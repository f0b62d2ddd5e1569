#pragma once
#include <sys/types.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

#include "workload/cgroup_index.h"

namespace hucprof::test {

// A test of this machine's unified hierarchy: skipped, saying why, unless run as root on a host
// that has one; root_ is its mount point.
class UnifiedHierarchyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to make a cgroup";
    const auto root = find_unified_root();
    if (!root.ok()) GTEST_SKIP() << root.error().text;
    root_ = root.value();
  }
  std::string root_;
};

}  // namespace hucprof::test
