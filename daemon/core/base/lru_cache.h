#pragma once
#include <cstddef>
#include <list>
#include <map>
#include <optional>
#include <utility>

namespace hucprof {

// At most `capacity` entries; a full cache forgets the one used longest ago. For answers that
// are dear to compute and asked for again and again (one debuginfo lookup per address).
template <typename Key, typename Value>
class LruCache {
 public:
  explicit LruCache(size_t capacity) : capacity_(capacity ? capacity : 1) {}

  // The cached value, now the most recently used; nullptr when absent.
  const Value* find(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return &it->second->second;
  }
  const Value& put(const Key& key, Value value) {
    if (auto it = index_.find(key); it != index_.end()) {
      it->second->second = std::move(value);
      order_.splice(order_.begin(), order_, it->second);
      return it->second->second;
    }
    order_.emplace_front(key, std::move(value));
    index_.emplace(key, order_.begin());
    if (order_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    return order_.front().second;
  }
  // The value, now no longer cached; nullopt when absent.
  std::optional<Value> take(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return std::nullopt;
    std::optional<Value> value(std::move(it->second->second));
    order_.erase(it->second);
    index_.erase(it);
    return value;
  }
  void clear() {
    index_.clear();
    order_.clear();
  }
  size_t size() const { return order_.size(); }
  size_t capacity() const { return capacity_; }

 private:
  using Entries = std::list<std::pair<Key, Value>>;
  size_t capacity_;
  Entries order_;  // most recently used first
  std::map<Key, typename Entries::iterator> index_;
};

}  // namespace hucprof
