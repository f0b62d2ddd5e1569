#include "config/safe_yaml.h"

#include <algorithm>
#include <optional>
#include <sstream>

#include <yaml-cpp/eventhandler.h>

#include "core/base/message_text.h"
#include "core/base/quoted_value.h"
#include "core/base/utf8.h"
#include "core/files/file_text.h"

namespace hucprof {
namespace {

std::string at(const std::string& name, int line, const std::string& words) {
  return name + ":" + std::to_string(line) + ": " + words;
}

// Walks the parser's events before any node is built: counts nodes and stops at the first
// anchor or alias, so a hostile document costs at most max_nodes events of work.
class Screen : public YAML::EventHandler {
 public:
  explicit Screen(const YamlLimits& limits) : limits_(limits) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { node(mark, anchor); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    refuse(mark, "aliases (*name) are not allowed here");
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string&) override {
    node(mark, anchor);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    node(mark, anchor);
    descend(mark);
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    node(mark, anchor);
    descend(mark);
  }
  void OnMapEnd() override { --depth_; }
  void OnAnchor(const YAML::Mark& mark, const std::string&) override {
    refuse(mark, "anchors (&name) are not allowed here");
  }

  struct Refused {
    int line;
    std::string words;
  };

 private:
  void node(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor) refuse(mark, "anchors (&name) are not allowed here");
    if (++nodes_ > limits_.max_nodes) {
      refuse(mark, "more than " + std::to_string(limits_.max_nodes) + " YAML nodes");
    }
  }
  void descend(const YAML::Mark& mark) {
    if (++depth_ > limits_.max_depth) {
      refuse(mark, "nested more than " + std::to_string(limits_.max_depth) + " levels deep");
    }
  }
  [[noreturn]] void refuse(const YAML::Mark& mark, std::string words) {
    throw Refused{mark.line >= 0 ? mark.line + 1 : 1, std::move(words)};
  }

  const YamlLimits& limits_;
  size_t nodes_ = 0;
  size_t depth_ = 0;
};

// What yaml-cpp must never be handed, found in one pass over the bytes before it sees them:
// bytes YAML text cannot hold (NUL and other control characters, invalid UTF-8), and more flow
// collection characters than a settings file has. The last one is why: inside a flow
// collection that is itself in one ("[[x, x, ...]]", "[[[[...", "{a:{a:...") yaml-cpp's scanner
// queues every token (~250 bytes each) before the parser sees the first one, so 1 MiB of "["
// costs 256 MB before any node count or depth limit can act. Counting the characters anywhere
// (in quotes and comments too) can only over-count, so nothing slips past the bound.
std::optional<Screen::Refused> screen_bytes(std::string_view text, const YamlLimits& limits) {
  int line = 1;
  size_t flow_characters = 0, depth = 0, deepest = 0;
  while (!text.empty()) {
    const auto c = static_cast<unsigned char>(text.front());
    const size_t length = utf8_sequence_length(text);
    if (length == 0) {
      return Screen::Refused{line, "byte " + quoted_value(text.substr(0, 1)) +
                                       " is not UTF-8 (YAML files are UTF-8 text)"};
    }
    if (length == 1 && ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)) {
      return Screen::Refused{line, "control character " + quoted_value(text.substr(0, 1)) +
                                       " (YAML text holds none but tab and line breaks)"};
    }
    if (c == '\n') ++line;
    if (c == '[' || c == '{') deepest = std::max(deepest, ++depth);
    if ((c == ']' || c == '}') && depth > 0) --depth;
    if (c == '[' || c == '{' || c == ']' || c == '}' || c == ',') {
      if (++flow_characters > limits.max_flow_characters) {
        if (deepest > limits.max_depth) {
          return Screen::Refused{
              line, "nested more than " + std::to_string(limits.max_depth) + " levels deep"};
        }
        return Screen::Refused{
            line, "more than " + std::to_string(limits.max_flow_characters) +
                      " of the flow collection characters [ ] { } , (a settings file has a few)"};
      }
    }
    text.remove_prefix(length);
  }
  return std::nullopt;
}

}  // namespace

Result<YAML::Node> load_yaml_text(std::string_view text, const std::string& name,
                                  const YamlLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return Error{name + ": larger than " + std::to_string(limits.max_bytes) + " bytes"};
  }
  if (const auto refused = screen_bytes(text, limits)) {
    return Error{at(name, refused->line, refused->words)};
  }
  const std::string copy(text);
  try {
    std::istringstream stream(copy);
    YAML::Parser parser(stream);
    Screen screen(limits);
    if (parser.HandleNextDocument(screen) && parser.HandleNextDocument(screen)) {
      return Error{at(name, 1, "more than one YAML document")};
    }
    return YAML::Load(copy);
  } catch (const Screen::Refused& refused) {
    return Error{at(name, refused.line, refused.words)};
  } catch (const YAML::Exception& e) {
    return Error{at(name, e.mark.line >= 0 ? e.mark.line + 1 : 1, "invalid YAML: " + e.msg)};
  }
}

Result<YAML::Node> load_yaml_file(const std::string& path, std::string_view what,
                                  const YamlLimits& limits) {
  const Result<std::string> text = read_regular_file(path, limits.max_bytes);
  if (!text.ok()) return cannot_read(path, what, text.error());
  return load_yaml_text(text.value(), path, limits);
}

}  // namespace hucprof
