#pragma once
#include <bpf/btf.h>

#include <cstdint>
#include <string_view>

namespace hucprof {

// The type id (typedefs and modifiers resolved) of the member `name` of the struct or union
// `type_id`, looked for through anonymous members too (struct page keeps most fields in unions
// of anonymous structs), or 0 where it has none: how the daemon asks the running kernel's BTF
// whether a field its programs read is there.
uint32_t btf_member_type(const btf* types, uint32_t type_id, std::string_view name);

}  // namespace hucprof
