#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace hucprof {

// What a file compressed whole would inflate to, before anything inflates it: libdwfl inflates a
// compressed module file into memory whole, with no bound of its own, so a few megabytes of
// zeros could become gigabytes. Pure logic on the file's bytes.

// The compression a file's first bytes announce, as libdwfl would recognise it: "gzip", "xz",
// "bzip2", "zstd", or "" for none of them.
std::string_view compression_of(std::string_view head);

// The most a zstd file (RFC 8878) inflates to, from its block headers alone: a raw or RLE block
// holds what its header says, a compressed block at most 128 KiB (the format's block maximum),
// whatever its frame header claims (the decoder checks a frame's claimed size only at its end).
// nullopt when the frames do not parse.
std::optional<uint64_t> zstd_inflated_bound(std::string_view bytes);

}  // namespace hucprof
