#pragma once
#include <cstddef>
#include <cstdint>
#include <map>

namespace hucprof {

// Kernel maps hold cumulative per-CPU sums that only grow; the daemon reads them every interval
// and needs what changed. DeltaTracker remembers the last total per key. A total that went down
// (the key was deleted and re-created in the kernel) counts from zero.
template <typename Key, typename Value = uint64_t>
class DeltaTracker {
 public:
  Value update(const Key& key, Value total) {
    auto [it, inserted] = last_.try_emplace(key, Value{});
    Value delta = total >= it->second ? total - it->second : total;
    it->second = total;
    return delta;
  }
  size_t size() const { return last_.size(); }

 private:
  std::map<Key, Value> last_;
};

}  // namespace hucprof
