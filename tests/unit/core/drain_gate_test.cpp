// Work beside the drain loop waits while a drain runs, and only then.
#include "core/drain/drain_gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

namespace hucprof {
namespace {

TEST(DrainGate, WaitsOnlyWhileADrainRuns) {
  DrainGate gate;
  gate.wait_while_draining();  // no drain: returns at once

  std::optional<DrainGate::Draining> draining;
  draining.emplace(gate);
  std::atomic<bool> passed{false};
  std::thread beside([&] {
    gate.wait_while_draining();
    passed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(passed) << "went on while a drain ran";
  draining.reset();
  beside.join();
  EXPECT_TRUE(passed);
}

}  // namespace
}  // namespace hucprof
