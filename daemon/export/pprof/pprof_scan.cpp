#include "export/pprof/pprof_scan.h"

#include <limits>
#include <utility>

#include "core/base/quoted_value.h"
#include "core/base/utf8.h"
#include "export/pprof/inflate_stream.h"

namespace hucprof {

namespace {

namespace pbio = google::protobuf::io;
using pprof::Profile;

enum Wire : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// A field that is not length-delimited, read whole (its number in `value`); false for groups,
// which pprof's schema does not have, or bytes that end early.
bool read_scalar(pbio::CodedInputStream& in, uint32_t wire, uint64_t* value) {
  uint32_t fixed32 = 0;
  switch (wire) {
    case kVarint:
      return in.ReadVarint64(value);
    case kFixed64:
      return in.ReadLittleEndian64(value);
    case kFixed32:
      return in.ReadLittleEndian32(&fixed32);
    default:
      return false;
  }
}

bool is_utf8(std::string_view text) {
  while (!text.empty()) {
    const size_t length = utf8_sequence_length(text);
    if (length == 0) return false;
    text.remove_prefix(length);
  }
  return true;
}

class HeaderScanner {
 public:
  HeaderScanner(pbio::ZeroCopyInputStream* stream, const ProfileReadLimits& limits)
      : in_(stream), limits_(limits) {
    in_.SetTotalBytesLimit(std::numeric_limits<int>::max());
  }

  Result<ProfileHeader> run() {
    while (const uint32_t tag = in_.ReadTag()) {
      if (!field(tag >> 3, tag & 7)) return Error{refusal_};
    }
    if (!in_.ConsumedEntireMessage()) return Error{""};
    return std::move(out_);
  }

 private:
  bool field(uint32_t number, uint32_t wire) {
    if (wire == kLengthDelimited) {
      uint32_t length = 0;
      return in_.ReadVarint32(&length) && bytes_field(number, length);
    }
    uint64_t value = 0;
    if (!read_scalar(in_, wire, &value)) return false;
    return wire != kVarint || number_field(number, static_cast<int64_t>(value));
  }

  bool number_field(uint32_t number, int64_t value) {
    Profile& p = out_.profile;
    switch (number) {
      case Profile::kDropFramesFieldNumber:
        p.set_drop_frames(value);
        break;
      case Profile::kKeepFramesFieldNumber:
        p.set_keep_frames(value);
        break;
      case Profile::kTimeNanosFieldNumber:
        p.set_time_nanos(value);
        break;
      case Profile::kDurationNanosFieldNumber:
        p.set_duration_nanos(value);
        break;
      case Profile::kPeriodFieldNumber:
        p.set_period(value);
        break;
      case Profile::kDefaultSampleTypeFieldNumber:
        p.set_default_sample_type(value);
        break;
      case Profile::kCommentFieldNumber:
        return comment(value);
      default:  // a field pprof's schema does not have
        break;
    }
    return true;
  }

  bool bytes_field(uint32_t number, uint32_t length) {
    Profile& p = out_.profile;
    switch (number) {
      case Profile::kSampleFieldNumber:
        return at_most(++out_.samples, limits_.max_samples, "samples") &&
               fits(length, "a sample") && skip(length);
      case Profile::kStringTableFieldNumber:
        return string(length);
      case Profile::kSampleTypeFieldNumber:
        return at_most(p.sample_type_size() + 1, limits_.max_sample_types, "sample types") &&
               message(p.add_sample_type(), length, "a sample type");
      case Profile::kPeriodTypeFieldNumber:
        return message(p.mutable_period_type(), length, "the period type");
      case Profile::kMappingFieldNumber:
        return at_most(p.mapping_size() + 1, limits_.max_mappings, "mappings") &&
               message(p.add_mapping(), length, "a mapping");
      case Profile::kFunctionFieldNumber:
        return at_most(p.function_size() + 1, limits_.max_functions, "functions") &&
               message(p.add_function(), length, "a function");
      case Profile::kLocationFieldNumber: {
        if (!at_most(p.location_size() + 1, limits_.max_locations, "locations")) return false;
        pprof::Location* location = p.add_location();
        return message(location, length, "a location") &&
               at_most(lines_ += location->line_size(), limits_.max_lines,
                       "lines in its locations");
      }
      case Profile::kCommentFieldNumber:
        return comments(length);
      default:  // a field pprof's schema does not have, or a known one of another type
        return skip(length);
    }
  }

  // A string of the table: kept when it can be a name, else skipped unread (and refused only
  // where a name is taken from it), so the table's indices stay those of the file.
  bool string(uint32_t length) {
    const auto index = static_cast<int64_t>(out_.profile.string_table_size());
    if (static_cast<size_t>(index) >= limits_.max_strings) {
      return refuse("it has more than " + std::to_string(limits_.max_strings) + " strings");
    }
    std::string* text = out_.profile.add_string_table();
    if (length > limits_.max_name_bytes) {
      out_.oversized.emplace(index, length);
      return skip(length);
    }
    if ((string_bytes_ += length) > limits_.max_string_bytes) {
      return refuse("it has more than " + byte_size_words(limits_.max_string_bytes) +
                    " of strings");
    }
    if (!in_.ReadString(text, static_cast<int>(length))) return false;
    if (!is_utf8(*text)) {
      return refuse("string " + std::to_string(index) + " (\"" + printable_name(*text) +
                    "\") is not UTF-8");
    }
    return true;
  }

  // A message of the Profile, parsed straight from the stream once its size is known to fit.
  bool message(google::protobuf::MessageLite* into, uint32_t length, const char* what) {
    if (!fits(length, what)) return false;
    const auto limit = in_.PushLimit(static_cast<int>(length));
    const bool whole = into->MergePartialFromCodedStream(&in_) && in_.BytesUntilLimit() == 0;
    in_.PopLimit(limit);
    return whole;
  }

  // The comments as protobuf packs a repeated number: varints one after another.
  bool comments(uint32_t length) {
    if (!fits(length, "the comments")) return false;
    const auto limit = in_.PushLimit(static_cast<int>(length));
    while (in_.BytesUntilLimit() > 0) {
      uint64_t index = 0;
      if (!in_.ReadVarint64(&index) || !comment(static_cast<int64_t>(index))) return false;
    }
    in_.PopLimit(limit);
    return true;
  }

  bool comment(int64_t index) {
    if (!at_most(out_.profile.comment_size() + 1, limits_.max_comments, "comments")) return false;
    out_.profile.add_comment(index);
    return true;
  }

  bool skip(uint32_t length) { return in_.Skip(static_cast<int>(length)); }

  bool fits(uint32_t length, const char* what) {
    if (length <= limits_.max_message_bytes) return true;
    return refuse(std::string(what) + " is " + std::to_string(length) +
                  " bytes long, more than the " + std::to_string(limits_.max_message_bytes) +
                  " hucprof reads");
  }

  bool at_most(size_t n, size_t max, const char* what) {
    if (n <= max) return true;
    return refuse("it has at least " + std::to_string(n) + " " + what + ", more than the " +
                  std::to_string(max) + " hucprof reads");
  }

  bool refuse(std::string why) {
    refusal_ = std::move(why);
    return false;
  }

  pbio::CodedInputStream in_;
  const ProfileReadLimits& limits_;
  ProfileHeader out_;
  size_t string_bytes_ = 0, lines_ = 0;
  std::string refusal_;
};

}  // namespace

Result<ProfileHeader> scan_profile_header(pbio::ZeroCopyInputStream* stream,
                                          const ProfileReadLimits& limits) {
  return HeaderScanner(stream, limits).run();
}

bool for_each_sample(pbio::ZeroCopyInputStream* stream, const ProfileReadLimits& limits,
                     const std::function<bool(pbio::CodedInputStream&)>& on_sample) {
  pbio::CodedInputStream in(stream);
  in.SetTotalBytesLimit(std::numeric_limits<int>::max());
  while (const uint32_t tag = in.ReadTag()) {
    const uint32_t number = tag >> 3, wire = tag & 7;
    if (wire != kLengthDelimited) {
      uint64_t value = 0;
      if (!read_scalar(in, wire, &value)) return false;
      continue;
    }
    uint32_t length = 0;
    if (!in.ReadVarint32(&length)) return false;
    if (number != Profile::kSampleFieldNumber) {
      if (!in.Skip(static_cast<int>(length))) return false;
      continue;
    }
    if (length > limits.max_message_bytes) return false;  // the first pass refused it
    const auto limit = in.PushLimit(static_cast<int>(length));
    if (!on_sample(in) || in.BytesUntilLimit() != 0) return false;
    in.PopLimit(limit);
  }
  return in.ConsumedEntireMessage();
}

}  // namespace hucprof
