#include "kernel_edge/btf_members.h"

namespace hucprof {
namespace {

// Anonymous members nest a few levels in real kernels; the bound keeps a corrupt BTF from
// recursing without end.
constexpr int kMaxAnonymousDepth = 8;

uint32_t member_type_within(const btf* types, uint32_t type_id, std::string_view name, int depth) {
  const btf_type* t = btf__type_by_id(types, type_id);
  if (!t || !btf_is_composite(t) || depth > kMaxAnonymousDepth) return 0;
  const btf_member* m = btf_members(t);
  for (uint16_t i = 0; i < btf_vlen(t); ++i, ++m) {
    const char* member = btf__name_by_offset(types, m->name_off);
    const int32_t resolved = btf__resolve_type(types, m->type);
    if (resolved <= 0) continue;
    if (member && name == member) return static_cast<uint32_t>(resolved);
    if (member && *member) continue;
    if (uint32_t found =
            member_type_within(types, static_cast<uint32_t>(resolved), name, depth + 1)) {
      return found;
    }
  }
  return 0;
}

}  // namespace

uint32_t btf_member_type(const btf* types, uint32_t type_id, std::string_view name) {
  return member_type_within(types, type_id, name, 0);
}

}  // namespace hucprof
