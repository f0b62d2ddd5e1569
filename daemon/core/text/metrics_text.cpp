#include "core/text/metrics_text.h"
#include "core/base/text_chars.h"

#include <charconv>
#include <system_error>

namespace hucprof {
namespace {

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_metric_name_char(char c) { return is_letter(c) || is_digit(c) || c == '_' || c == ':'; }
bool is_label_name_char(char c) { return is_letter(c) || is_digit(c) || c == '_'; }

// One sample line, read left to right; every failure says what was expected, not what came.
class SampleLine {
 public:
  explicit SampleLine(std::string_view line) : line_(line) {}

  std::string_view metric_name() {
    const size_t begin = at_;
    while (at_ < line_.size() && is_metric_name_char(line_[at_])) ++at_;
    return line_.substr(begin, at_ - begin);
  }

  Result<void> labels(MetricSample& sample) {
    const size_t before = at_;
    skip_blanks();
    if (!next_is('{')) {
      at_ = before;  // the value's blank
      return {};
    }
    ++at_;
    while (true) {
      skip_blanks();
      if (next_is('}')) break;
      const size_t begin = at_;
      if (at_ < line_.size() && !is_digit(line_[at_])) {
        while (at_ < line_.size() && is_label_name_char(line_[at_])) ++at_;
      }
      if (at_ == begin) return Error{"a label name was expected"};
      std::string name(line_.substr(begin, at_ - begin));
      skip_blanks();
      if (!next_is('=')) return Error{"'=' was expected after a label name"};
      ++at_;
      skip_blanks();
      auto value = quoted();
      if (!value.ok()) return value.error();
      for (const auto& [known, unused] : sample.labels) {
        if (known == name) return Error{"a label is given twice"};
      }
      if (sample.labels.size() == kMaxMetricLabels) {
        return Error{"more than " + std::to_string(kMaxMetricLabels) + " labels"};
      }
      sample.labels.emplace_back(std::move(name), std::move(value).value());
      skip_blanks();
      if (next_is(',')) {
        ++at_;
        continue;
      }
      if (!next_is('}')) return Error{"',' or '}' was expected after a label value"};
    }
    ++at_;  // '}'
    after_labels_ = true;
    return {};
  }

  Result<double> value() {
    // A blank separates the value from a bare name; after '}' it may be left out.
    if (!skip_blanks() && !(after_labels_ && at_ < line_.size())) {
      return Error{"a value was expected"};
    }
    std::string_view token = word();
    if (!token.empty() && token.front() == '+') token.remove_prefix(1);
    if (token.empty() || token.front() == '+') return Error{"the value is not a number"};
    // from_chars: no locale, no hexadecimal; NaN and Inf in any case, as Go's ParseFloat reads
    // them.
    double out = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), out);
    if (end != token.data() + token.size() ||
        (ec != std::errc() && ec != std::errc::result_out_of_range)) {
      return Error{"the value is not a number"};
    }
    return out;
  }

  // An optional timestamp (milliseconds, an integer), then the end of the line.
  Result<void> rest() {
    if (skip_blanks()) {
      std::string_view token = word();
      if (!token.empty() && token.front() == '-') token.remove_prefix(1);
      bool digits = !token.empty();
      for (const char c : token) digits = digits && is_digit(c);
      if (!digits) return Error{"the timestamp is not an integer"};
      skip_blanks();
    }
    if (at_ != line_.size()) return Error{"the line goes on after the timestamp"};
    return {};
  }

 private:
  bool next_is(char c) const { return at_ < line_.size() && line_[at_] == c; }

  // True when blanks were skipped and something follows them.
  bool skip_blanks() {
    const size_t begin = at_;
    while (at_ < line_.size() && is_blank(line_[at_])) ++at_;
    return at_ > begin && at_ < line_.size();
  }

  std::string_view word() {
    const size_t begin = at_;
    while (at_ < line_.size() && !is_blank(line_[at_])) ++at_;
    return line_.substr(begin, at_ - begin);
  }

  // A label value: '"', text with \\, \" and \n escaped, '"'.
  Result<std::string> quoted() {
    if (!next_is('"')) return Error{"a label value in double quotes was expected"};
    ++at_;
    std::string out;
    while (at_ < line_.size() && line_[at_] != '"') {
      char c = line_[at_++];
      if (c == '\\') {
        if (at_ == line_.size()) break;
        const char escaped = line_[at_++];
        if (escaped == 'n') {
          c = '\n';
        } else if (escaped == '\\' || escaped == '"') {
          c = escaped;
        } else {
          return Error{"a label value holds an unknown escape (only \\\\, \\\" and \\n are)"};
        }
      }
      if (out.size() == kMaxLabelValueBytes) {
        return Error{"a label value is longer than " + std::to_string(kMaxLabelValueBytes) +
                     " bytes"};
      }
      out += c;
    }
    if (!next_is('"')) return Error{"a label value is not closed"};
    ++at_;
    return out;
  }

  std::string_view line_;
  size_t at_ = 0;
  bool after_labels_ = false;
};

}  // namespace

Result<void> read_metrics_text(std::string_view text,
                               const std::function<bool(std::string_view name)>& wanted,
                               const std::function<Result<void>(const MetricSample&)>& take) {
  size_t number = 0;
  while (!text.empty()) {
    ++number;
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    SampleLine reader(line);
    const std::string_view name = reader.metric_name();
    // Comments, blank lines, and what is not a metric name at all: not a wanted family.
    if (name.empty() || is_digit(name.front()) || !wanted(name)) continue;
    const auto failed = [&](const Error& why) {
      return Error{"line " + std::to_string(number) + ": " + std::string(name) + ": " + why.text};
    };
    MetricSample sample;
    sample.name = name;
    if (auto labels = reader.labels(sample); !labels.ok()) return failed(labels.error());
    auto value = reader.value();
    if (!value.ok()) return failed(value.error());
    sample.value = value.value();
    if (auto rest = reader.rest(); !rest.ok()) return failed(rest.error());
    if (auto taken = take(sample); !taken.ok()) return failed(taken.error());
  }
  return {};
}

}  // namespace hucprof
