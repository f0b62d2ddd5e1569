#include "cli/safe_yaml.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include <yaml-cpp/eventhandler.h>

#include "cli/message_text.h"

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

}  // namespace

std::variant<std::string, std::string> read_bounded_regular_file(const std::string& path,
                                                                 std::string_view what,
                                                                 size_t max_bytes) {
  using Result = std::variant<std::string, std::string>;
  auto refused = [&](const std::string& reason) {
    return Result(std::in_place_index<1>,
                  path + ": cannot read " + std::string(what) + ": " + reason);
  };
  auto failed = [&](int error) { return refused(lowercase_first(std::strerror(error))); };
  // O_NONBLOCK: opening a FIFO for reading must not wait for a writer before fstat says what
  // it is.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return failed(errno);
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  struct stat st {};
  if (fstat(fd, &st) != 0) return failed(errno);
  if (S_ISDIR(st.st_mode)) return failed(EISDIR);
  if (!S_ISREG(st.st_mode)) return refused("not a regular file");
  const std::string too_large = "larger than " + std::to_string(max_bytes) + " bytes";
  if (static_cast<unsigned long long>(st.st_size) > max_bytes) return refused(too_large);
  std::string text;
  char buffer[8192];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return failed(errno);
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
    // The file may grow after fstat; the bound holds for what is read.
    if (text.size() > max_bytes) return refused(too_large);
  }
  return Result(std::in_place_index<0>, std::move(text));
}

std::variant<YAML::Node, std::string> load_yaml_text(std::string_view text, const std::string& name,
                                                     const YamlLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return name + ": larger than " + std::to_string(limits.max_bytes) + " bytes";
  }
  const std::string copy(text);
  try {
    std::istringstream stream(copy);
    YAML::Parser parser(stream);
    Screen screen(limits);
    if (parser.HandleNextDocument(screen) && parser.HandleNextDocument(screen)) {
      return at(name, 1, "more than one YAML document");
    }
    return YAML::Load(copy);
  } catch (const Screen::Refused& refused) {
    return at(name, refused.line, refused.words);
  } catch (const YAML::Exception& e) {
    return at(name, e.mark.line >= 0 ? e.mark.line + 1 : 1, "invalid YAML: " + e.msg);
  }
}

std::variant<YAML::Node, std::string> load_yaml_file(const std::string& path, std::string_view what,
                                                     const YamlLimits& limits) {
  auto text = read_bounded_regular_file(path, what, limits.max_bytes);
  if (text.index() == 1) return std::get<1>(text);
  return load_yaml_text(std::get<0>(text), path, limits);
}

}  // namespace hucprof
