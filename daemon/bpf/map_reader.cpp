#include "bpf/map_reader.h"

namespace hucprof {

StackFrames read_stack(int stack_map_fd, int32_t id, size_t depth) {
  StackFrames frames(depth);
  uint32_t key = static_cast<uint32_t>(id);
  if (bpf_map_lookup_elem(stack_map_fd, &key, frames.data()) != 0) return {};
  size_t n = 0;
  while (n < depth && frames[n] != 0) ++n;
  frames.resize(n);
  return frames;
}

}  // namespace hucprof
