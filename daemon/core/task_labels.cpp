#include "core/task_labels.h"

#include <cstring>

#include "core/utf8.h"

namespace hucprof {

std::string comm_text(const char* bytes, size_t size) {
  const std::string_view raw(bytes, strnlen(bytes, size));
  if (raw.empty()) return "[no comm]";
  std::string out;
  for (size_t at = 0; at < raw.size();) {
    const size_t length = utf8_sequence_length(raw.substr(at));
    const auto lead = static_cast<unsigned char>(raw[at]);
    if (length == 0 || (length == 1 && (lead < 0x20 || lead == 0x7F))) {
      out += '?';
      ++at;
    } else {
      out.append(raw.substr(at, length));
      at += length;
    }
  }
  return out;
}

std::string_view TaskLabels::comm(const char* bytes, size_t size) {
  std::string text = comm_text(bytes, size);
  if (auto it = comms_.find(text); it != comms_.end()) return *it;
  if (comms_.size() >= kNamedComms) return kFoldedComm;
  return *comms_.insert(std::move(text)).first;
}

int64_t TaskLabels::pid(uint32_t tgid) {
  if (tgid == 0) return 0;
  if (!pids_.contains(tgid)) {
    if (pids_.size() >= kNamedPids) return 0;
    pids_.insert(tgid);
  }
  return tgid;
}

}  // namespace hucprof
