#pragma once
#include <bpf/bpf.h>

#include <cstdint>
#include <vector>

#include "core/raw_drain.h"

namespace hucprof {

// Reads per-CPU maps into plain data. Keys are never deleted by the daemon (deleting races with
// in-flight increments and loses them); totals only grow and the daemon diffs them.
template <typename Key, typename Value, typename Fn>
void for_each_percpu_entry(int map_fd, int possible_cpus, Fn&& fn) {
  std::vector<Value> values(static_cast<size_t>(possible_cpus));
  Key key{}, next{};
  const Key* prev = nullptr;
  while (bpf_map_get_next_key(map_fd, prev, &next) == 0) {
    if (bpf_map_lookup_elem(map_fd, &next, values.data()) == 0) fn(next, values);
    key = next;
    prev = &key;
  }
}

// Reads a per-CPU hash of u64 counters, summed over CPUs, into out.
template <typename Key>
void read_percpu_counts(int map_fd, int possible_cpus, std::vector<RawCount<Key>>& out) {
  for_each_percpu_entry<Key, uint64_t>(map_fd, possible_cpus,
                                       [&](const Key& key, const std::vector<uint64_t>& values) {
                                         RawCount<Key> c{key, 0};
                                         for (uint64_t v : values) c.count += v;
                                         out.push_back(c);
                                       });
}

// Sums a per-CPU u64 array map into out (one slot per index).
template <size_t N>
void add_percpu_array(int map_fd, int possible_cpus, std::array<uint64_t, N>& out) {
  std::vector<uint64_t> values(static_cast<size_t>(possible_cpus));
  for (uint32_t i = 0; i < N; ++i) {
    if (bpf_map_lookup_elem(map_fd, &i, values.data()) != 0) continue;
    for (uint64_t v : values) out[i] += v;
  }
}

// A stack map entry, leaf first, without the zero padding; empty when the id is gone.
StackFrames read_stack(int stack_map_fd, int32_t id, size_t depth);

}  // namespace hucprof
