#include "core/task_labels.h"

#include <cstring>

#include "core/quoted_value.h"

namespace hucprof {

std::string comm_text(const char* bytes, size_t size) {
  const std::string_view raw(bytes, strnlen(bytes, size));
  return raw.empty() ? std::string(kNoComm) : printable_name(raw);
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
