#pragma once
#include <bpf/bpf.h>

#include <array>
#include <cstdint>
#include <vector>

#include "core/drain/raw_drain.h"

struct bpf_object;

namespace hucprof {

// Reads BPF maps into plain data.

inline uint8_t generation_of(const huc_site_key& key) { return key.generation; }
inline uint8_t generation_of(const huc_subcheck_key& key) { return key.site.generation; }
inline uint8_t generation_of(const huc_object_key& key) { return key.site.generation; }
inline uint8_t generation_of(const huc_latency_key& key) { return key.site.generation; }
inline uint8_t generation_of(const huc_sample_key& key) { return key.generation; }
inline uint8_t generation_of(const huc_busy_key& key) { return key.generation; }
inline uint8_t generation_of(const huc_stack_key& key) { return key.generation; }

// Every key of a hash map. Collected before anything is deleted: get_next_key from a key that
// is gone starts over at the first key.
template <typename Key>
std::vector<Key> map_keys(int map_fd) {
  std::vector<Key> keys;
  Key next{};
  const Key* prev = nullptr;
  while (bpf_map_get_next_key(map_fd, prev, &next) == 0) {
    keys.push_back(next);
    prev = &keys.back();
  }
  return keys;
}

// Reads and deletes every entry of a generational map that is not in the `live` generation.
// Only safe once no BPF program can still be writing those (ProgramBarrier): then nothing
// races with the delete and no count is lost.
template <typename Key, typename Value, typename Fn>
void drain_retired(int map_fd, uint8_t live, Fn&& fn) {
  for (const Key& key : map_keys<Key>(map_fd)) {
    if (generation_of(key) == live) continue;
    Value value{};
    if (bpf_map_lookup_elem(map_fd, &key, &value) == 0) fn(key, value);
    bpf_map_delete_elem(map_fd, &key);
  }
}

// drain_retired for maps of u64 counters.
template <typename Key>
void drain_retired_counts(int map_fd, uint8_t live, std::vector<RawCount<Key>>& out) {
  drain_retired<Key, uint64_t>(map_fd, live, [&](const Key& key, uint64_t count) {
    out.push_back({key, count});
  });
}

// Deletes every stack of a stack map that is not in the `live` generation.
void delete_retired_stacks(int map_fd, uint8_t live);

// One stack of a stack map (Stack: huc_stack or huc_short_stack) into `table`, unless it is
// there already or gone.
template <typename Stack>
void read_stack(int map_fd, uint64_t id, uint8_t generation, StackTable& table) {
  if (id == 0 || table.contains(id)) return;
  huc_stack_key key{};
  key.id = id;
  key.generation = generation;
  Stack stack{};
  if (bpf_map_lookup_elem(map_fd, &key, &stack) != 0) return;
  const size_t depth = std::min<size_t>(stack.depth, sizeof(stack.ips) / sizeof(stack.ips[0]));
  table.emplace(id, StackFrames(stack.ips, stack.ips + depth));
}

// Sums a per-CPU u64 array map into out (one slot per index). These stay cumulative: a slot per
// CPU and reason, never full.
template <size_t N>
void add_percpu_array(int map_fd, int possible_cpus, std::array<uint64_t, N>& out) {
  std::vector<uint64_t> values(static_cast<size_t>(possible_cpus));
  for (uint32_t i = 0; i < N; ++i) {
    if (bpf_map_lookup_elem(map_fd, &i, values.data()) != 0) continue;
    for (uint64_t v : values) out[i] += v;
  }
}

// Adds slots [0, slots) of a per-CPU u64 array map into per_cpu, per CPU (per_cpu holds one
// value per possible CPU). False when a slot cannot be read; per_cpu is then partly added.
bool add_percpu_slots_by_cpu(int map_fd, uint32_t slots, std::vector<uint64_t>& per_cpu);

// The memory the kernel charges for a map ("memlock" in /proc/self/fdinfo, what bpftool shows),
// under the map's kernel name.
MapMemory map_memory(int map_fd);
// map_memory of every map of a loaded object that was created.
void add_map_memory(const bpf_object* obj, std::vector<MapMemory>& out);
// What every drain reports about the object itself: its maps' memory and, when the drain asks
// for them (bpf_stats on), its programs' runs and run time.
void add_object_costs(const bpf_object* obj, RawDrain& out);

// Starts the next generation of a session's keys: its programs write `generation` into every key
// from their next run, so the keys of the one before can be drained while they run. They read it
// once per run; the program barrier that follows orders this write before those runs.
inline void retire_generation(uint8_t& generation, volatile uint8_t& program_generation) {
  program_generation = ++generation;
}

}  // namespace hucprof
