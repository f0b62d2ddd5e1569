#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace hucprof {

// The GNU build-id of an ELF notes blob (the raw contents of a note section or of
// /sys/kernel/notes, /sys/module/M/notes/.note.gnu.build-id), as lowercase hex: what proves a
// debuginfo file belongs to the running kernel. nullopt when the blob holds no NT_GNU_BUILD_ID
// note (or is malformed).
std::optional<std::string> gnu_build_id(std::string_view notes);

// Bytes as lowercase hex: how build-ids are written.
std::string hex_bytes(std::string_view bytes);

// "ab/cdef…": the path of a build-id below a debug directory's .build-id/ (without ".debug").
std::string build_id_path(std::string_view build_id);

// The first 12 hex digits, for messages.
std::string short_build_id(std::string_view build_id);

}  // namespace hucprof
