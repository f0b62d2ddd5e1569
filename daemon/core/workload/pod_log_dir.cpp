#include "core/workload/pod_log_dir.h"

#include <algorithm>

namespace hucprof {

namespace {

bool lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// Kubernetes' validation (apimachinery IsDNS1123Label / IsDNS1123Subdomain): lower-case
// alphanumerics and '-' ('.' too in a subdomain), starting and ending alphanumeric.
bool dns_name(std::string_view text, size_t max_bytes, bool dots) {
  if (text.empty() || text.size() > max_bytes) return false;
  if (!lower_alnum(text.front()) || !lower_alnum(text.back())) return false;
  return std::all_of(text.begin(), text.end(),
                     [&](char c) { return lower_alnum(c) || c == '-' || (dots && c == '.'); });
}

bool uid_text(std::string_view text) {
  return !text.empty() && text.size() <= 64 && std::all_of(text.begin(), text.end(), [](char c) {
    return lower_alnum(c) || (c >= 'A' && c <= 'F') || c == '-';
  });
}

}  // namespace

std::optional<PodLogDir> parse_pod_log_dir(std::string_view entry) {
  const size_t first = entry.find('_');
  if (first == std::string_view::npos) return {};
  const size_t second = entry.find('_', first + 1);
  if (second == std::string_view::npos || entry.find('_', second + 1) != std::string_view::npos) {
    return {};
  }
  const std::string_view ns = entry.substr(0, first);
  const std::string_view name = entry.substr(first + 1, second - first - 1);
  const std::string_view uid = entry.substr(second + 1);
  if (!dns_name(ns, 63, false) || !dns_name(name, 253, true) || !uid_text(uid)) return {};
  return PodLogDir{std::string(uid), {std::string(ns), std::string(name)}};
}

void name_pod(Workload& workload, const PodNames& pods) {
  if (workload.kind != Workload::Kind::Pod) return;
  const auto it = pods.find(workload.pod_uid);
  if (it == pods.end()) return;
  workload.name = it->second.pod_namespace + "/" + it->second.name;
}

}  // namespace hucprof
