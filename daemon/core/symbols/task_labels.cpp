#include "core/symbols/task_labels.h"

#include <cstring>

#include "core/base/quoted_value.h"

namespace hucprof {

std::string comm_text(const char* bytes, size_t size) {
  const std::string_view raw(bytes, strnlen(bytes, size));
  return raw.empty() ? std::string(kNoComm) : printable_name(raw);
}

size_t TaskLabels::CommBytesHash::operator()(const CommBytes& bytes) const {
  uint64_t low = 0, high = 0;
  std::memcpy(&low, bytes.data(), sizeof(low));
  std::memcpy(&high, bytes.data() + sizeof(low), sizeof(high));
  return std::hash<uint64_t>{}(low ^ (high * 0x9e3779b97f4a7c15ULL));
}

std::string_view TaskLabels::comm(const char (&bytes)[kCommBytes]) {
  CommBytes key{};
  std::memcpy(key.data(), bytes, strnlen(bytes, kCommBytes));
  if (auto it = by_bytes_.find(key); it != by_bytes_.end()) return it->second;
  if (by_bytes_.size() >= kMaxCachedComms) by_bytes_.clear();
  const std::string_view label = name(comm_text(bytes, kCommBytes));
  by_bytes_.emplace(key, label);
  return label;
}

std::string_view TaskLabels::name(std::string text) {
  if (auto it = comms_.find(text); it != comms_.end()) return *it;
  if (comms_.size() >= kNamedComms) return kFoldedComm;
  return *comms_.insert(std::move(text)).first;
}

void TaskLabels::forget_comms_except(const std::set<std::string_view, std::less<>>& in_use) {
  const size_t erased =
      std::erase_if(comms_, [&](const std::string& comm) { return !in_use.contains(comm); });
  // Its views are gone, and a folded comm may be named now.
  if (erased) by_bytes_.clear();
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
