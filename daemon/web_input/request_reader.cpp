#include "web_input/request_reader.h"

#include <algorithm>
#include <cctype>
#include <exception>
#include <optional>
#include <utility>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>

#include "core/base/text_chars.h"

namespace hucprof {

namespace http = boost::beast::http;

namespace {

constexpr std::string_view kCrlf = "\r\n";
constexpr size_t kAll = std::string_view::npos;

// The version closing a whole request line: " HTTP/" DIGIT "." DIGIT CRLF (RFC 9112 2.3, 3).
struct Version {
  char major;
  char minor;
};
std::optional<Version> version_of(std::string_view line) {
  constexpr size_t kTail = 11;  // " HTTP/1.1\r\n"
  if (line.size() < kTail || !line.ends_with(kCrlf)) return std::nullopt;
  const std::string_view tail = line.substr(line.size() - kTail);
  if (!tail.starts_with(" HTTP/") || !is_digit(tail[6]) || tail[7] != '.' || !is_digit(tail[8])) {
    return std::nullopt;
  }
  return Version{tail[6], tail[8]};
}

}  // namespace

RequestReader::RequestReader(RequestBounds bounds) : bounds_(bounds) {
  bounds_.head = std::min(bounds_.head, RequestBounds::kMaxHead);
  parser_.header_limit(static_cast<uint32_t>(bounds_.head));
  parser_.body_limit(bounds_.body);
  // One element per put(): each is shown only the bytes its bound allows.
  parser_.eager(false);
  on_chunk_header_ = [this](uint64_t size, boost::beast::string_view, boost::beast::error_code&) {
    chunk_data_left_ = size;
    if (size > 0) chunk_data_seen_ = true;
  };
  parser_.on_chunk_header(on_chunk_header_);
}

RequestReader::Step RequestReader::read(std::string_view input) {
  Step step;
  try {
    if (progress_ == Progress::NeedMore && !request_line_read_) {
      step.used = read_request_line(input);
    }
    if (progress_ == Progress::NeedMore && request_line_read_) {
      step.used += read_rest(input.substr(step.used));
    }
  } catch (const std::exception& e) {
    // Within the bounds Beast never throws; should a version of it do so anyway, one request
    // is refused, not the process ended.
    parser_threw_ = true;
    refuse(400, std::string("bad request: the parser failed: ") + e.what());
  }
  step.progress = progress_;
  return step;
}

// The request line goes to the parser once it is all in, for the version's sake: Beast refuses
// any version but 1.0 and 1.1 as malformed (a 400), and does so before the line has ended.
size_t RequestReader::read_request_line(std::string_view input) {
  const size_t end = input.substr(0, bounds_.head).find('\n');
  if (end == std::string_view::npos) {
    if (input.size() >= bounds_.head) refuse_for(http::error::header_limit);
    return 0;
  }
  std::string line(input.substr(0, end + 1));
  if (const auto version = version_of(line)) {
    // RFC 9110 15.6.6: 505 is for a major version the server does not support. RFC 9110 6.2:
    // a higher minor version is read as the highest one implemented, 1.1 (Go and nginx serve
    // HTTP/1.2 so too); the response says HTTP/1.1.
    if (version->major != '1') {
      refuse(505, std::string("HTTP version not supported: HTTP/") + version->major + '.' +
                      version->minor + " (this server speaks HTTP/1.1 and 1.0)");
      return 0;
    }
    if (version->minor > '1') line[line.size() - 3] = '1';
  }
  boost::beast::error_code ec;
  const size_t parsed = parser_.put(boost::asio::buffer(line), ec);
  if (ec != http::error::need_more || parsed != line.size()) {
    // A whole line that the parser still waits on (it ends in a bare LF, say) never ends.
    if (!ec || ec == http::error::need_more) ec = http::error::bad_line_ending;
    refuse_for(ec);
    return 0;
  }
  request_line_read_ = true;
  head_bytes_ = parsed;
  return parsed;
}

size_t RequestReader::read_rest(std::string_view input) {
  size_t used = 0;
  while (progress_ == Progress::NeedMore) {
    if (parser_.is_done()) {
      progress_ = Progress::Done;
      break;
    }
    const std::string_view rest = input.substr(used);
    const Part reading = part();
    const size_t limit = window(rest);
    if (limit == 0) break;  // waits for more, or refused
    // Beast's header limit counts the bytes of one put() only, and a head's fields are taken
    // as they come: what the head has already taken is subtracted for it.
    if (reading == Part::Head)
      parser_.header_limit(static_cast<uint32_t>(bounds_.head - head_bytes_));
    const std::string_view shown = rest.substr(0, limit);
    boost::beast::error_code ec;
    const size_t parsed = parser_.put(boost::asio::const_buffer(shown.data(), shown.size()), ec);
    used += parsed;
    count(reading, parsed);
    if (progress_ != Progress::NeedMore) break;
    if (ec == http::error::need_more || (!ec && parsed == 0 && !parser_.is_done())) {
      // The window held all its bound allows: the trailer section after the last chunk-size
      // line does not end within the head's bound, or another chunk-size line is malformed
      // (an extension's quoted string that does not close before the CRLF).
      if (limit != kAll && rest.size() >= limit) {
        refuse_for(last_chunk_ ? http::error::header_limit : http::error::bad_chunk_extension);
      }
      break;
    }
    if (ec) refuse_for(ec);
  }
  return used;
}

RequestReader::Part RequestReader::part() const {
  if (!parser_.is_header_done()) return Part::Head;
  if (!parser_.chunked() || chunk_data_left_ > 0) return Part::Data;
  return Part::ChunkLine;
}

// How many bytes of `rest` the parser may see for what it reads next: 0 when it must wait for
// more (or the reader refused), kAll when its own limits bound it (the head by the header
// limit, content and chunk data by the body limit). A chunk-size line must end within
// kChunkLine bytes, and the parser sees it alone: Beast reads a quoted extension past the
// line's end, and takes the chunk from the body limit again each time it has to wait. After
// the last chunk's line (a size of zeros) the window takes the trailer section too, as much of
// it as the head leaves of its bound.
size_t RequestReader::window(std::string_view rest) {
  if (part() != Part::ChunkLine) return rest.empty() ? 0 : kAll;
  const size_t crlf = chunk_data_seen_ && rest.starts_with(kCrlf) ? kCrlf.size() : 0;
  const size_t eol = rest.substr(crlf, RequestBounds::kChunkLine).find(kCrlf);
  if (eol == std::string_view::npos) {
    if (rest.size() - crlf >= RequestBounds::kChunkLine) {
      refuse(400, "bad request: a chunk-size line longer than " +
                      std::to_string(RequestBounds::kChunkLine) + " bytes (extensions included)");
    }
    return 0;
  }
  chunk_line_end_ = crlf + eol + kCrlf.size();
  const std::string_view line = rest.substr(crlf, eol);
  const size_t digits = std::min(line.find_first_not_of("0123456789abcdefABCDEF"), line.size());
  last_chunk_ = digits > 0 && line.find_first_not_of('0') >= digits;
  return last_chunk_ ? chunk_line_end_ + (bounds_.head - head_bytes_) : chunk_line_end_;
}

void RequestReader::count(Part reading, size_t parsed) {
  switch (reading) {
    case Part::Head:
      head_bytes_ += parsed;
      return;
    case Part::Data:
      body_bytes_ += parsed;
      if (parser_.chunked()) chunk_data_left_ -= std::min<uint64_t>(parsed, chunk_data_left_);
      break;
    case Part::ChunkLine:
      if (parser_.is_done() && parsed >= chunk_line_end_) {
        // The last chunk's line, then the trailer section: header fields.
        body_bytes_ += chunk_line_end_;
        head_bytes_ += parsed - chunk_line_end_;
      } else {
        body_bytes_ += parsed;
      }
      break;
  }
  if (body_bytes_ > bounds_.body) refuse_for(http::error::body_limit);
}

void RequestReader::refuse_for(boost::beast::error_code ec) {
  if (ec == http::error::header_limit) {
    return refuse(431, "request header fields too large: the head and the trailer fields take " +
                           std::string("more than ") + std::to_string(bounds_.head) + " bytes");
  }
  if (ec == http::error::body_limit) {
    return refuse(413, "request body too large: it takes more than " +
                           std::to_string(bounds_.body) +
                           " bytes (chunk data and chunk-size lines count)");
  }
  refuse(400, "bad request: " + ec.message());
}

void RequestReader::refuse(int status, std::string reason) {
  progress_ = Progress::Refused;
  refusal_ = {status, std::move(reason)};
}

}  // namespace hucprof
