#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include "core/base/result.h"
#include "core/symbols/stack_profile.h"
#include "export/pprof/pprof_format.h"

namespace hucprof {

// What `hucprof report` takes from a file, so that a hostile one costs bounded memory and time
// and a large valid one costs memory in proportion to what the report shows (distinct stacks
// and call sites), not to its size. Beyond any of these the file is refused with the reason.
struct ProfileReadLimits {
  size_t max_inflated_bytes = kMaxProfileBytes;
  size_t max_name_bytes = 1024;  // a function, mapping, label or comment (kallsyms: 512)
  // The string table: longer strings are skipped unread (and refused only if used as a name).
  size_t max_strings = 524'288;
  size_t max_string_bytes = size_t{32} << 20;
  size_t max_samples = 4'000'000;
  // One sample, location, function, mapping or sample type, or the packed comments: ~10 KiB
  // for a sample of 1 024 frames. A larger one is refused before it is read.
  size_t max_message_bytes = 65'536;
  size_t max_sample_types = 64;  // hucprof writes at most 5, Go's profiles 4
  size_t max_comments = 4096;    // hucprof writes ~10
  size_t max_locations = 262'144;
  size_t max_lines = size_t{1} << 20;  // in all locations, inlined calls included
  size_t max_functions = 262'144;
  size_t max_mappings = 65'536;
  size_t max_stack_frames = 1024;  // frames in one stack (the kernel stops at 127)
  // Distinct stacks, the frames in them and the bytes of those frames' names: what the report
  // and the flame graph are made of. The daemon writes at most 16 385 stacks.
  size_t max_stacks = 65'536;
  size_t max_total_frames = size_t{1} << 20;
  size_t max_total_name_bytes = size_t{32} << 20;
  size_t max_label_sets = 65'536;
};

// A pprof file (gzipped, in one member or several, or not) back into a StackProfile, for
// `hucprof report`. Every index and id is checked before it is followed, every string is UTF-8
// and every sum of sample values fits in an int64: a corrupt, truncated, foreign or oversized
// file gives one line saying what is wrong, never a crash. Profiles from
// other tools are read as far as they carry hucprof's sample types (samples, cpu, calls, bytes,
// latency, subchecks). Samples with the same stack and labels are merged into one.
Result<StackProfile> read_pprof(std::string_view file_bytes, const ProfileReadLimits& limits = {});

}  // namespace hucprof
