// RequestReader: every part of a request within its bound, whatever the bytes and however they
// arrive. The expectations are RFC 9112's grammar (7.1: chunk-size, chunk-ext, trailer-section)
// and the bounds docs/web-server.md states.
#include "web_input/request_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace hucprof {
namespace {

using ::testing::HasSubstr;
using Progress = RequestReader::Progress;

const std::string kChunkedPostHead =
    "POST /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";

struct Outcome {
  Progress progress = Progress::NeedMore;
  int status = 0;  // when refused
  std::string reason;
  size_t used = 0;         // of the input, in all
  size_t most_unread = 0;  // the most bytes left unread while the reader waited
  bool threw = false;
  RequestReader::Request request;
};

// Feeds `input` as a connection delivers it, `piece` bytes per read, keeping what the reader
// leaves unread as the session's buffer does.
Outcome read_in_pieces(const std::string& input, size_t piece, RequestBounds bounds = {}) {
  RequestReader reader(bounds);
  Outcome outcome;
  std::string buffer;
  size_t offset = 0;
  while (true) {
    const size_t n = std::min(piece, input.size() - offset);
    buffer.append(input, offset, n);
    offset += n;
    const auto step = reader.read(buffer);
    buffer.erase(0, step.used);
    outcome.used += step.used;
    outcome.progress = step.progress;
    if (step.progress != Progress::NeedMore) break;
    outcome.most_unread = std::max(outcome.most_unread, buffer.size());
    if (offset == input.size()) break;
  }
  outcome.threw = reader.parser_threw();
  if (outcome.progress == Progress::Refused) {
    outcome.status = reader.refusal().status;
    outcome.reason = reader.refusal().reason;
  }
  if (outcome.progress == Progress::Done) outcome.request = reader.release();
  return outcome;
}

// Whole, in reads of 4 KiB (the session's) and byte by byte: the same outcome each way, and
// never more left unread than the session's buffer is sized for.
Outcome read_every_way(const std::string& input, RequestBounds bounds = {}) {
  const Outcome whole = read_in_pieces(input, input.size() + 1, bounds);
  for (size_t piece : {size_t{4096}, size_t{1}}) {
    SCOPED_TRACE("pieces of " + std::to_string(piece));
    const Outcome split = read_in_pieces(input, piece, bounds);
    EXPECT_EQ(split.progress, whole.progress);
    EXPECT_EQ(split.status, whole.status) << split.reason << " / " << whole.reason;
    if (whole.progress == Progress::Done) {
      EXPECT_EQ(split.used, whole.used);
    }
    EXPECT_LE(split.most_unread, bounds.pending_limit());
    EXPECT_FALSE(split.threw) << split.reason;
  }
  EXPECT_FALSE(whole.threw) << whole.reason;
  return whole;
}

std::string chunked(const std::string& body) { return kChunkedPostHead + body; }

TEST(RequestReader, AGetIsReadToItsEndAndWhatFollowsIsLeft) {
  const std::string first = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  const Outcome outcome = read_every_way(first + "GET / HTTP/1.1\r\n");
  ASSERT_EQ(outcome.progress, Progress::Done);
  EXPECT_EQ(outcome.used, first.size());
  EXPECT_EQ(outcome.request.target(), "/metrics");
  EXPECT_EQ(outcome.request.version(), 11u);
}

TEST(RequestReader, AChunkedBodyWithExtensionsAndTrailersIsReadToItsEnd) {
  const std::string request =
      chunked("5;name=value;q=\"x y\"\r\nhello\r\n0;last\r\nX-T: t\r\n\r\n");
  const Outcome outcome = read_every_way(request + "GET / HTTP/1.1\r\n");
  ASSERT_EQ(outcome.progress, Progress::Done) << outcome.reason;
  EXPECT_EQ(outcome.used, request.size());
  EXPECT_EQ(outcome.request.body(), "hello");
  EXPECT_EQ(outcome.request["X-T"], "t") << "trailer fields join the header fields";
}

// D1: Beast's fields hold at most 65533 bytes of name or value and threw past that, out of the
// I/O thread (the daemon aborted); 60,000 bytes were accepted although the head has 16 KiB.
TEST(RequestReader, TrailersCountAgainstTheHeadBound) {
  for (const std::string& trailer :
       {"X-T: " + std::string(65536, 't'), std::string(70000, 'n') + ": v",
        "X-T: " + std::string(60000, 't')}) {
    SCOPED_TRACE(trailer.size());
    const Outcome outcome = read_every_way(chunked("0\r\n" + trailer + "\r\n\r\n"));
    ASSERT_EQ(outcome.progress, Progress::Refused);
    EXPECT_EQ(outcome.status, 431);
    EXPECT_THAT(outcome.reason, HasSubstr("16384 bytes"));
  }
  std::string many;
  for (int i = 0; i < 200; ++i)
    many += "X-" + std::to_string(i) + ": " + std::string(90, 'v') + "\r\n";
  const Outcome summed = read_every_way(chunked("0\r\n" + many + "\r\n"));
  ASSERT_EQ(summed.progress, Progress::Refused);
  EXPECT_EQ(summed.status, 431) << "200 trailers of 100 bytes";
}

TEST(RequestReader, HeadAndTrailersTogetherMayTakeTheHeadBound) {
  const std::string head = kChunkedPostHead;
  const std::string last = "0\r\n";
  const std::string field_start = "X-T: ";
  // Trailer section = field line + the blank line: exactly what the head leaves of 16384.
  const size_t room = 16384 - head.size();
  const std::string fits =
      field_start + std::string(room - field_start.size() - 4, 't') + "\r\n\r\n";
  ASSERT_EQ(fits.size(), room);
  const Outcome at = read_every_way(head + last + fits);
  ASSERT_EQ(at.progress, Progress::Done) << at.reason;
  const std::string over =
      field_start + std::string(room - field_start.size() - 3, 't') + "\r\n\r\n";
  const Outcome past = read_every_way(head + last + over);
  ASSERT_EQ(past.progress, Progress::Refused);
  EXPECT_EQ(past.status, 431);
}

// A head's fields are taken as they arrive; the bound is on all of them together.
TEST(RequestReader, TheHeadBoundHoldsAcrossReads) {
  std::string request = "GET /metrics HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 40; ++i)
    request += "X-" + std::to_string(i) + ": " + std::string(500, 'v') + "\r\n";
  request += "\r\n";
  ASSERT_GT(request.size(), 16384u);
  for (size_t piece : {size_t{1}, size_t{600}, size_t{4096}, request.size()}) {
    SCOPED_TRACE(piece);
    const Outcome outcome = read_in_pieces(request, piece);
    ASSERT_EQ(outcome.progress, Progress::Refused);
    EXPECT_EQ(outcome.status, 431);
  }
}

// D2: "1;" and 256 MiB of extension was read to its end, all of it held in the buffer.
TEST(RequestReader, AChunkSizeLineEndsWithinItsBound) {
  const Outcome long_extension = read_every_way(chunked("1;" + std::string(100'000, 'e')));
  ASSERT_EQ(long_extension.progress, Progress::Refused);
  EXPECT_EQ(long_extension.status, 400);
  EXPECT_THAT(long_extension.reason, HasSubstr("longer than 1024 bytes"));
  EXPECT_LE(long_extension.used, kChunkedPostHead.size()) << "no byte of the line was taken";

  const Outcome digits = read_every_way(chunked(std::string(100'000, '0') + "1\r\nx\r\n0\r\n\r\n"));
  ASSERT_EQ(digits.progress, Progress::Refused);
  EXPECT_EQ(digits.status, 400) << "100 KB of hex digits";

  // The line of 1024 bytes, CRLF included, is the longest taken.
  const std::string ext = ";" + std::string(1024 - 4, 'e');
  const Outcome at = read_every_way(chunked("1" + ext + "\r\nx\r\n0\r\n\r\n"));
  EXPECT_EQ(at.progress, Progress::Done) << at.reason;
  const Outcome past = read_every_way(chunked("1" + ext + "e\r\nx\r\n0\r\n\r\n"));
  EXPECT_EQ(past.progress, Progress::Refused);
  const Outcome last_chunk = read_every_way(chunked("0" + ext + "e\r\n\r\n"));
  EXPECT_EQ(last_chunk.progress, Progress::Refused) << "the last chunk's line too";
}

// Found by fuzz/http_body_fuzz.cpp: Beast reads a quoted extension past the CRLF, and took the
// chunk's size from the body limit again at each wait, so the same bytes were a 400 at once
// and a 413 when they came a few at a time.
TEST(RequestReader, AQuotedExtensionMustCloseWithinItsLine) {
  const std::string data = std::string(300, 'x');
  const Outcome outcome =
      read_every_way(chunked("5;c=\"d e\r\nhello\r\n" + data + "\";x\r\n0\r\n\r\n"));
  ASSERT_EQ(outcome.progress, Progress::Refused);
  EXPECT_EQ(outcome.status, 400);
  EXPECT_THAT(outcome.reason, HasSubstr("chunk extension"));
  RequestBounds small_body;
  small_body.body = 16;
  const Outcome small = read_every_way(chunked("5;c=\"d e\r\nhello\r\n" + data), small_body);
  ASSERT_EQ(small.progress, Progress::Refused);
  EXPECT_EQ(small.status, 400);
}

TEST(RequestReader, ChunkSizesPastTheBodyBoundOr64BitsAreRefused) {
  const Outcome overflow = read_every_way(chunked("10000000000000000\r\nx\r\n0\r\n\r\n"));
  ASSERT_EQ(overflow.progress, Progress::Refused);
  EXPECT_EQ(overflow.status, 400) << "2^64 does not fit a size";
  const Outcome huge = read_every_way(chunked("ffffffffffffffff\r\nx\r\n"));
  ASSERT_EQ(huge.progress, Progress::Refused);
  EXPECT_EQ(huge.status, 413);
}

// The body bound counts the body as sent: a flood of tiny chunks with long extensions is as
// much to read as their data would be.
TEST(RequestReader, ChunkSizeLinesCountAgainstTheBodyBound) {
  std::string body;
  for (int i = 0; i < 80; ++i) body += "1;" + std::string(1000, 'e') + "\r\nx\r\n";
  const Outcome outcome = read_every_way(chunked(body + "0\r\n\r\n"));
  ASSERT_EQ(outcome.progress, Progress::Refused);
  EXPECT_EQ(outcome.status, 413);
  const Outcome content = read_every_way(
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 65537\r\n\r\n" + std::string(65537, 'b'));
  ASSERT_EQ(content.progress, Progress::Refused);
  EXPECT_EQ(content.status, 413);
}

// RFC 9112 7.1.1 and 7.1.2: an extension is a token with an optional token or quoted value, a
// trailer field is a header field. What is neither is a 400, never a throw, however it arrives.
TEST(RequestReader, MalformedExtensionsAndTrailersAre400) {
  for (const std::string& body : {
           std::string("1;\x01\r\nx\r\n0\r\n\r\n"),    // a control byte as a name
           std::string("1;a=\x7f\r\nx\r\n0\r\n\r\n"),  // DEL as a value
           std::string("1;a b\r\nx\r\n0\r\n\r\n"),     // a space inside a name
           std::string("1;a=\"x\r\nx\r\n0\r\n\r\n"),   // a quote never closed
           std::string("1;a\rb\r\nx\r\n0\r\n\r\n"),    // a bare CR
           std::string("0\r\nX-T: a\x00b\r\n\r\n"),    // NUL in a trailer value
           std::string("0\r\nX T: v\r\n\r\n"),         // a space in a trailer name
           std::string("0\r\nno colon\r\n\r\n"),       // not a field
           std::string("0\r\n: v\r\n\r\n"),            // an empty name
       }) {
    SCOPED_TRACE(testing::PrintToString(body));
    const Outcome outcome = read_every_way(chunked(body));
    ASSERT_EQ(outcome.progress, Progress::Refused);
    EXPECT_EQ(outcome.status, 400);
  }
  // A trailer section that never ends is waited for, within the head's bound.
  const Outcome open = read_every_way(chunked("0\r\nX-T: v\r\n"));
  EXPECT_EQ(open.progress, Progress::NeedMore);
}

// RFC 9110 6.2: a higher minor version is read as the highest one implemented; 15.6.6: 505 is
// for a major version not supported.
TEST(RequestReader, HttpVersions) {
  for (const char* version : {"HTTP/1.2", "HTTP/1.9"}) {
    SCOPED_TRACE(version);
    const Outcome outcome =
        read_every_way(std::string("GET /metrics ") + version + "\r\nHost: x\r\n\r\n");
    ASSERT_EQ(outcome.progress, Progress::Done) << outcome.reason;
    EXPECT_EQ(outcome.request.version(), 11u);
  }
  EXPECT_EQ(read_every_way("GET / HTTP/1.0\r\n\r\n").request.version(), 10u);
  for (const char* version : {"HTTP/2.0", "HTTP/0.9", "HTTP/3.0", "HTTP/9.9"}) {
    SCOPED_TRACE(version);
    const Outcome outcome = read_every_way(std::string("GET / ") + version + "\r\nHost: x\r\n\r\n");
    ASSERT_EQ(outcome.progress, Progress::Refused);
    EXPECT_EQ(outcome.status, 505);
    EXPECT_THAT(outcome.reason, HasSubstr(version));
  }
  for (const char* line : {"GET / HTTP/1.10\r\n", "GET / HTTP/1\r\n", "GET / http/1.1\r\n",
                           "GET / HTTP/1.1\n", "GET /\r\n", "GET / HTTP/1.1x\r\n"}) {
    SCOPED_TRACE(line);
    const Outcome outcome = read_every_way(std::string(line) + "Host: x\r\n\r\n");
    ASSERT_EQ(outcome.progress, Progress::Refused);
    EXPECT_EQ(outcome.status, 400);
  }
}

TEST(RequestReader, ARequestLineLongerThanTheHeadBoundIs431) {
  const Outcome outcome = read_every_way("GET /" + std::string(20000, 'a') + " HTTP/1.1\r\n\r\n");
  ASSERT_EQ(outcome.progress, Progress::Refused);
  EXPECT_EQ(outcome.status, 431);
}

TEST(RequestReader, AHeadBoundPastWhatBeastHoldsIsLowered) {
  RequestBounds bounds;
  bounds.head = 1 << 20;
  const Outcome outcome =
      read_every_way(chunked("0\r\nX-T: " + std::string(70000, 't') + "\r\n\r\n"), bounds);
  ASSERT_EQ(outcome.progress, Progress::Refused);
  EXPECT_EQ(outcome.status, 431);
}

}  // namespace
}  // namespace hucprof
