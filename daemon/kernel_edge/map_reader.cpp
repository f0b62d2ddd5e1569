#include "kernel_edge/map_reader.h"

#include <bpf/libbpf.h>

#include <charconv>
#include <string>

#include "core/files/file_text.h"
#include "kernel_edge/program_stats.h"

namespace hucprof {

void delete_retired_stacks(int map_fd, uint8_t live) {
  for (const huc_stack_key& key : map_keys<huc_stack_key>(map_fd)) {
    if (key.generation != live) bpf_map_delete_elem(map_fd, &key);
  }
}

bool add_percpu_slots_by_cpu(int map_fd, uint32_t slots, std::vector<uint64_t>& per_cpu) {
  std::vector<uint64_t> values(per_cpu.size());
  for (uint32_t i = 0; i < slots; ++i) {
    if (bpf_map_lookup_elem(map_fd, &i, values.data()) != 0) return false;
    for (size_t cpu = 0; cpu < per_cpu.size(); ++cpu) per_cpu[cpu] += values[cpu];
  }
  return true;
}

MapMemory map_memory(int map_fd) {
  MapMemory out;
  bpf_map_info info{};
  __u32 length = sizeof(info);
  if (bpf_obj_get_info_by_fd(map_fd, &info, &length) == 0) out.map = info.name;
  const auto text = read_file_text("/proc/self/fdinfo/" + std::to_string(map_fd));
  if (!text) return out;
  constexpr std::string_view kField = "memlock:";
  const size_t at = text->find(kField);
  if (at == std::string::npos) return out;
  const char* begin = text->data() + at + kField.size();
  while (*begin == ' ' || *begin == '\t') ++begin;
  std::from_chars(begin, text->data() + text->size(), out.bytes);
  return out;
}

void add_map_memory(const bpf_object* obj, std::vector<MapMemory>& out) {
  const bpf_map* map;
  bpf_object__for_each_map(map, obj) {
    const int fd = bpf_map__fd(map);
    if (fd >= 0) out.push_back(map_memory(fd));
  }
}

void add_object_costs(const bpf_object* obj, RawDrain& out) {
  add_map_memory(obj, out.map_memory);
  if (out.program_costs.stats == BpfStats::on) add_program_costs(obj, out.program_costs.programs);
}

}  // namespace hucprof
