#pragma once
// Reading one request off a connection within a bound on every part of it: the one place the
// web server's reads are bounded (docs/web-server.md, "Bounds on a connection").
//
// Boost.Beast's parser bounds the head and the body, but not a chunk-size line (extensions
// included) nor a chunked body's trailer section: it waits for either to end however long it
// gets, and a trailer field over 64 KiB makes its field container throw. So the bytes go to the
// parser through this reader, which shows the parser no more of them than the element it parses
// next may take, and refuses what cannot end within that. The session (web/http_session.h) and
// the fuzz targets (fuzz/http_body_fuzz.cpp, fuzz/http_request_fuzz.cpp) read through it alike.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

namespace hucprof {

// Every bound on one request, in bytes.
struct RequestBounds {
  // The request line, the header fields and the blank line after them. A chunked body's
  // trailer section counts against the same bound: its fields are header fields too.
  size_t head = 16 * 1024;
  // The body as sent: the content, or the chunk data and the chunk-size lines with their
  // extensions (the trailer section counts against `head`).
  size_t body = 64 * 1024;
  // One chunk-size line, extensions and CRLF included. A size takes at most 16 hex digits, and
  // nothing hucprof serves reads an extension.
  static constexpr size_t kChunkLine = 1024;
  // Beast keeps a field's name and value lengths in 16 bits and throws above them: a head bound
  // past this is lowered to it.
  static constexpr size_t kMaxHead = 60 * 1024;

  // The most bytes a reader leaves unread while it waits for more (a chunk-size line, the CRLF
  // before it and a trailer section that may take all of `head`): what a connection's read
  // buffer must hold besides one read.
  size_t pending_limit() const { return std::min(head, kMaxHead) + kChunkLine + 2; }
};

// Why a request is refused, and the connection closed after the answer (where the request ends
// is not known): the status and one line for the response body.
struct ReadRefusal {
  int status = 400;  // 400 malformed, 413 body, 431 head or trailers, 505 HTTP version
  std::string reason;
};

class RequestReader {
 public:
  using Request = boost::beast::http::request<boost::beast::http::string_body>;
  enum class Progress { NeedMore, Done, Refused };
  struct Step {
    size_t used = 0;  // bytes read off the front of the input: the caller drops them
    Progress progress = Progress::NeedMore;
  };

  explicit RequestReader(RequestBounds bounds);
  // The parser holds a callback into the reader: it stays where it was made.
  RequestReader(const RequestReader&) = delete;
  RequestReader& operator=(const RequestReader&) = delete;

  // `input`: the connection's unread bytes, i.e. what the last call left, then what arrived
  // since. Once Done or Refused, further calls read nothing.
  Step read(std::string_view input);

  const ReadRefusal& refusal() const { return refusal_; }  // once Refused
  // The parser threw: a bound that does not hold. Refused with a 400; the fuzz targets assert
  // that no input gets here.
  bool parser_threw() const { return parser_threw_; }
  // Bytes of the head and of the trailer section, as counted against RequestBounds::head.
  size_t head_bytes() const { return head_bytes_; }
  // Whether the body was read as chunked (Beast's reading of Transfer-Encoding, which the
  // request's own chunked() reads from the first such field only).
  bool chunked() const { return parser_.chunked(); }
  Request release() { return parser_.release(); }  // once Done

 private:
  // What the parser reads next.
  enum class Part { Head, Data, ChunkLine };

  size_t read_request_line(std::string_view input);
  size_t read_rest(std::string_view input);
  Part part() const;
  size_t window(std::string_view rest);
  void count(Part part, size_t parsed);
  void refuse_for(boost::beast::error_code ec);
  void refuse(int status, std::string reason);

  RequestBounds bounds_;
  std::function<void(uint64_t, boost::beast::string_view, boost::beast::error_code&)>
      on_chunk_header_;
  boost::beast::http::request_parser<boost::beast::http::string_body> parser_;
  Progress progress_ = Progress::NeedMore;
  ReadRefusal refusal_;
  bool parser_threw_ = false;
  bool request_line_read_ = false;
  size_t head_bytes_ = 0;
  size_t body_bytes_ = 0;         // as sent: chunk-size lines included
  uint64_t chunk_data_left_ = 0;  // of the chunk being read
  bool chunk_data_seen_ = false;  // so a CRLF ends that data before the next chunk-size line
  size_t chunk_line_end_ = 0;     // in the last window: where a trailer section would start
  bool last_chunk_ = false;       // the last window's chunk-size line has a size of zeros
};

}  // namespace hucprof
