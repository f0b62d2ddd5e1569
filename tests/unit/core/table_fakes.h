#pragma once
// Tables standing in for the kernel's symbols and the node's cgroup tree in the core tests.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "core/symbols/symbolizer.h"
#include "core/workload/workload_names.h"

namespace hucprof {

// A fixed address → name table standing in for kallsyms.
class TableSymbolizer : public Symbolizer {
 public:
  explicit TableSymbolizer(std::map<uint64_t, std::string> table) : table_(std::move(table)) {}
  std::optional<std::string> name(uint64_t addr) override {
    auto it = table_.find(addr);
    if (it == table_.end()) return std::nullopt;
    return it->second;
  }
  uint64_t generation() const override { return generation_; }
  // A module loaded: the address gets a name, and the generation moves if `announce`.
  void learn(uint64_t addr, std::string name, bool announce = true) {
    table_[addr] = std::move(name);
    if (announce) ++generation_;
  }

 private:
  std::map<uint64_t, std::string> table_;
  uint64_t generation_ = 0;
};

// cgroup id → workload, as the node's cgroup tree would say; counts the questions asked.
class TableWorkloads : public WorkloadNames {
 public:
  explicit TableWorkloads(std::map<uint64_t, Workload> table) : table_(std::move(table)) {}
  const Workload& workload_of(uint64_t id) override {
    ++asked;
    auto it = table_.find(id);
    return it == table_.end() ? kUnknownWorkload : it->second;
  }
  int asked = 0;

 private:
  std::map<uint64_t, Workload> table_;
};

// The two functions of a UDP receive check, as the fake kernel has them.
struct FakeKernel {
  static constexpr uint64_t kCheck = 0xffffffff81200010;
  static constexpr uint64_t kUdpRecvmsg = 0xffffffff81a00010;
  static TableSymbolizer symbols() {
    return TableSymbolizer({{kCheck, "__check_object_size"}, {kUdpRecvmsg, "udp_recvmsg"}});
  }
};

}  // namespace hucprof
