#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <unordered_map>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream.h>

#include "export/pprof/pprof_reader.h"
#include "profile.pb.h"

namespace hucprof {

// Everything of a Profile but its samples, as the first pass over the file found it.
struct ProfileHeader {
  pprof::Profile profile;  // no samples; strings longer than max_name_bytes left empty
  size_t samples = 0;      // how many the file holds
  // The indices of those long strings and their lengths, refused where a name is taken.
  std::unordered_map<int64_t, size_t> oversized;
};

// The first pass, field by field as the bytes stream by (the caller's stream inflates them on
// the fly): only what the report uses is ever held. Fields pprof's schema does not have, and
// known ones of another wire type, are skipped unread (an unknown field of 200 MiB costs no
// memory); strings longer than max_name_bytes too; a string that is not UTF-8 and every
// message or count past its bound stop the pass at once. The error is that reason in words
// ("it has more than 5 strings"), or empty when the bytes are no protobuf message (or the
// stream failed: its own error says why).
Result<ProfileHeader> scan_profile_header(google::protobuf::io::ZeroCopyInputStream* stream,
                                          const ProfileReadLimits& limits);

// The second pass: each sample (at most max_message_bytes) handed to `on_sample` with the
// stream limited to it, everything else skipped. False when the bytes are no protobuf message
// or on_sample said to stop.
bool for_each_sample(google::protobuf::io::ZeroCopyInputStream* stream,
                     const ProfileReadLimits& limits,
                     const std::function<bool(google::protobuf::io::CodedInputStream&)>& on_sample);

}  // namespace hucprof
