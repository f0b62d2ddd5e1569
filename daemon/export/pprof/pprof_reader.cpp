#include "export/pprof/pprof_reader.h"

#include <optional>
#include <string>
#include <utility>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "export/pprof/gzip_codec.h"
#include "export/pprof/inflate_stream.h"
#include "export/pprof/pprof_scan.h"
#include "export/pprof/profile_from_pprof.h"
#include "profile.pb.h"

namespace hucprof {

namespace {

namespace pbio = google::protobuf::io;

constexpr const char* kNotAProfile = "not a pprof profile (the protobuf message does not parse)";
// Before every reason a file is refused for.
const std::string kNotValid = "not a valid pprof profile: ";

// The bytes of the file as protobuf reads them: inflated on the fly when gzipped, so a large
// profile is never held inflated. Each pass over the file makes a new one.
class FileStream {
 public:
  FileStream(std::string_view bytes, size_t max_inflated) {
    if (looks_gzipped(bytes)) {
      inflate_.emplace(bytes, max_inflated);
      stream_ = &*inflate_;
    } else {
      array_.emplace(bytes.data(), static_cast<int>(bytes.size()));
      stream_ = &*array_;
    }
  }
  pbio::ZeroCopyInputStream* get() { return stream_; }
  std::string error() const { return inflate_ ? inflate_->error() : ""; }

 private:
  std::optional<InflateStream> inflate_;
  std::optional<pbio::ArrayInputStream> array_;
  pbio::ZeroCopyInputStream* stream_ = nullptr;
};

}  // namespace

Result<StackProfile> read_pprof(std::string_view file_bytes, const ProfileReadLimits& limits) {
  if (file_bytes.empty()) return Error{"empty file"};
  if (!looks_gzipped(file_bytes) && file_bytes.size() > limits.max_inflated_bytes) {
    return Error{"larger than " + byte_size_words(limits.max_inflated_bytes)};
  }
  // Why a pass stopped: the stream's own error (gzip) first, then a bound the file crossed.
  auto stopped = [](const FileStream& stream, const std::string& refusal) {
    if (!stream.error().empty()) return Error{stream.error()};
    return Error{refusal.empty() ? kNotAProfile : kNotValid + refusal};
  };
  // Two passes over the file: everything but the samples first (they may come before the
  // locations and strings they name), then the samples one at a time.
  std::optional<ProfileHeader> header;
  {
    FileStream stream(file_bytes, limits.max_inflated_bytes);
    Result<ProfileHeader> scanned = scan_profile_header(stream.get(), limits);
    // A gzip error ends the stream where protobuf may see the end of a message: asked first.
    if (!scanned.ok() || !stream.error().empty()) {
      return stopped(stream, scanned.ok() ? "" : scanned.error().text);
    }
    header.emplace(std::move(scanned).value());
  }
  ProfileFromPprof reader(header->profile, limits, std::move(header->oversized));
  reader.read_header();
  if (reader.refused()) return Error{kNotValid + reader.refusal()};
  FileStream stream(file_bytes, limits.max_inflated_bytes);
  pprof::Sample sample;
  const bool parsed = for_each_sample(stream.get(), limits, [&](pbio::CodedInputStream& in) {
    sample.Clear();
    return sample.MergePartialFromCodedStream(&in) && reader.read_sample(sample);
  });
  if (reader.refused()) return Error{kNotValid + reader.refusal()};
  if (!parsed || !stream.error().empty()) return stopped(stream, "");
  return reader.take();
}

}  // namespace hucprof
