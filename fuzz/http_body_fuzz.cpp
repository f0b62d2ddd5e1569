// libFuzzer target: a chunked request body (chunk-size lines, extensions, data, the last chunk
// and its trailer section) read through RequestReader, the code every connection reads through.
// The input's first byte picks the bounds and how the bytes arrive; the rest follows a chunked
// request head. Small bounds let short inputs reach every bound's edge.
//
// Properties, for every input: the parser never throws (a throw aborted the daemon, issue 37's
// D1); the reader never leaves more unread than RequestBounds::pending_limit (the session's
// buffer holds no more); the outcome is the same whether the bytes come at once or in reads of
// any size; a refusal is a 400, 413 or 431 named in one line; a request read to its end keeps
// its head and trailers within the head bound and its body within the body bound.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "web_input/request_reader.h"

namespace {

using hucprof::RequestBounds;
using hucprof::RequestReader;
using Progress = RequestReader::Progress;

constexpr std::string_view kHead =
    "POST /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
constexpr std::array<size_t, 4> kHeadBounds = {kHead.size() + 8, kHead.size() + 64, 1024,
                                               16 * 1024};
constexpr std::array<size_t, 4> kBodyBounds = {16, 256, 4096, 64 * 1024};
constexpr std::array<size_t, 8> kReads = {1, 2, 3, 7, 64, 512, 4096, 0};  // 0: all at once

struct Read {
  Progress progress = Progress::NeedMore;
  int status = 0;
  size_t used = 0;
  RequestReader::Request request;
};

// As the session reads: each arrival appended to what the reader left unread.
Read read_arriving(std::string_view input, size_t read_size, const RequestBounds& bounds) {
  RequestReader reader(bounds);
  Read result;
  std::string unread;
  while (true) {
    const size_t arriving = read_size == 0 ? input.size() : std::min(read_size, input.size());
    unread.append(input.substr(0, arriving));
    input.remove_prefix(arriving);
    const RequestReader::Step step = reader.read(unread);
    HUC_FUZZ_CHECK(step.used <= unread.size(), "the reader takes only what it was given");
    unread.erase(0, step.used);
    result.used += step.used;
    result.progress = step.progress;
    HUC_FUZZ_CHECK(!reader.parser_threw(), "no input reaches a throw in the parser");
    if (step.progress == Progress::NeedMore) {
      HUC_FUZZ_CHECK(unread.size() <= bounds.pending_limit(),
                     "the reader leaves no more unread than the session's buffer holds");
      if (input.empty()) break;
      continue;
    }
    break;
  }
  if (result.progress == Progress::Refused) {
    const hucprof::ReadRefusal& refusal = reader.refusal();
    result.status = refusal.status;
    HUC_FUZZ_CHECK(refusal.status == 400 || refusal.status == 413 || refusal.status == 431,
                   "a refused body is a 400, 413 or 431");
    HUC_FUZZ_CHECK(!refusal.reason.empty() && hucprof::one_line(refusal.reason),
                   "a refusal is named in one line");
  }
  if (result.progress == Progress::Done) {
    HUC_FUZZ_CHECK(reader.head_bytes() <= bounds.head, "head and trailers fit the head bound");
    result.request = reader.release();
    for (const auto& field : result.request) {
      HUC_FUZZ_CHECK(field.name_string().size() + field.value().size() < bounds.head,
                     "every field fits the head bound");
    }
    HUC_FUZZ_CHECK(result.request.body().size() <= bounds.body, "the data fits the body bound");
  }
  return result;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t shape = data[0];
  RequestBounds bounds;
  bounds.head = kHeadBounds[shape & 3];
  bounds.body = kBodyBounds[(shape >> 2) & 3];
  const size_t read_size = kReads[(shape >> 4) & 7];
  std::string input(kHead);
  input.append(reinterpret_cast<const char*>(data) + 1, size - 1);

  const Read whole = read_arriving(input, 0, bounds);
  const Read arriving = read_arriving(input, read_size, bounds);
  HUC_FUZZ_CHECK(arriving.progress == whole.progress,
                 "the outcome does not depend on how the bytes arrive");
  HUC_FUZZ_CHECK(arriving.status == whole.status, "nor does the status of a refusal");
  if (whole.progress == Progress::Done) {
    HUC_FUZZ_CHECK(arriving.used == whole.used, "nor where the request ends");
    HUC_FUZZ_CHECK(arriving.request.body() == whole.request.body(), "nor the data read");
  }
  return 0;
}
