#include "core/workload/workload_rules.h"

#include <algorithm>
#include <optional>

#include "core/base/quoted_value.h"

namespace hucprof {

namespace {

std::vector<std::string_view> components_of(std::string_view path) {
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    const size_t slash = path.find('/');
    std::string_view part = path.substr(0, slash);
    if (!part.empty()) parts.push_back(part);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return parts;
}

bool is_hex(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

bool is_container_id(std::string_view text, const WorkloadRules& rules) {
  return text.size() == rules.container_id_hex_digits && is_hex(text);
}

// The id in `component` when it is prefix + id + suffix.
std::optional<std::string_view> id_in(std::string_view component,
                                      const WorkloadRules::ContainerName& name,
                                      const WorkloadRules& rules) {
  if (!component.starts_with(name.prefix) || !component.ends_with(name.suffix)) return {};
  const std::string_view id = component.substr(
      name.prefix.size(), component.size() - name.prefix.size() - name.suffix.size());
  if (!is_container_id(id, rules)) return {};
  return id;
}

const WorkloadRules::ContainerName* match_any(std::string_view component,
                                              const std::vector<WorkloadRules::ContainerName>& list,
                                              const WorkloadRules& rules,
                                              std::string_view* id = nullptr) {
  for (const auto& name : list) {
    if (auto found = id_in(component, name, rules)) {
      if (id) *id = *found;
      return &name;
    }
  }
  return nullptr;
}

struct ContainerMatch {
  std::string_view id;
  std::string runtime;
};

// The container that components[at] names, if any: a runtime's scope or directory name, or a
// bare id below a cgroupfs driver's parent (`bare_id_runtime` says whether any parent will do:
// below a pod, where containerd's cgroupfs driver puts bare ids).
std::optional<ContainerMatch> container_at(const std::vector<std::string_view>& components,
                                           size_t at, const WorkloadRules& rules,
                                           std::optional<std::string> bare_id_runtime) {
  std::string_view id;
  if (const auto* name = match_any(components[at], rules.containers, rules, &id)) {
    return ContainerMatch{id, name->runtime};
  }
  if (!is_container_id(components[at], rules)) return {};
  if (bare_id_runtime) return ContainerMatch{components[at], *bare_id_runtime};
  if (at == 0) return {};
  for (const auto& parent : rules.id_parents) {
    if (components[at - 1] == parent.prefix) return ContainerMatch{components[at], parent.runtime};
  }
  return {};
}

bool valid_pod_uid(std::string_view uid, const WorkloadRules& rules) {
  return !uid.empty() && uid.size() <= rules.max_pod_uid_bytes &&
         std::all_of(uid.begin(), uid.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  c == '-';
         });
}

// The pod UID in a kubelet pod cgroup name. systemd driver: kubelet joins its name parts
// ("kubepods", QoS class, "pod<uid>") with '-' after turning each part's '-' into '_', and
// expands the result into nested slices; the last slice's last part is "pod<uid with _>".
// cgroupfs driver: the parts are plain directories, "pod<uid>" below "kubepods".
std::optional<std::string> pod_uid_at(const std::vector<std::string_view>& components, size_t at,
                                      const WorkloadRules& rules) {
  std::string_view part = components[at];
  constexpr std::string_view kSlice = ".slice";
  if (part.ends_with(kSlice)) {
    part.remove_suffix(kSlice.size());
    const size_t dash = part.rfind('-');
    if (dash == std::string_view::npos) return {};
    const std::string_view parents = part.substr(0, dash);
    const std::string_view last = part.substr(dash + 1);
    std::string dashed(parents);
    std::replace(dashed.begin(), dashed.end(), '-', '/');
    const auto words = components_of(dashed);
    const bool under_pods = std::find(words.begin(), words.end(), rules.pods_root) != words.end();
    if (!under_pods || !last.starts_with(rules.pod_prefix)) return {};
    std::string uid(last.substr(rules.pod_prefix.size()));
    std::replace(uid.begin(), uid.end(), '_', '-');
    if (!valid_pod_uid(uid, rules)) return {};
    return uid;
  }
  if (!part.starts_with(rules.pod_prefix)) return {};
  const bool under_pods = std::any_of(components.begin(), components.begin() + at,
                                      [&](std::string_view c) { return c == rules.pods_root; });
  const std::string_view uid = part.substr(rules.pod_prefix.size());
  if (!under_pods || !valid_pod_uid(uid, rules)) return {};
  return std::string(uid);
}

bool is_unit(std::string_view component, const WorkloadRules& rules) {
  if (component.size() > rules.max_unit_name_bytes) return false;
  const bool has_suffix =
      std::any_of(rules.unit_suffixes.begin(), rules.unit_suffixes.end(), [&](const auto& suffix) {
        return component.size() > suffix.size() && component.ends_with(suffix);
      });
  // systemd's unit name characters (unit-name.c: VALID_CHARS plus '@' for instances); anything
  // else is a directory someone made, not a unit.
  return has_suffix && std::all_of(component.begin(), component.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  c == ':' || c == '-' || c == '_' || c == '.' || c == '\\' || c == '@';
         });
}

std::string short_name(std::string_view runtime, std::string_view id, const WorkloadRules& rules) {
  std::string name(runtime);
  name += ':';
  name += id.substr(0, rules.short_id_hex_digits);
  return name;
}

// The path's tail, cut at a '/' (or at least not inside a UTF-8 sequence), marked as cut.
std::string bounded_path(std::string_view path, size_t max_bytes) {
  if (path.size() <= max_bytes) return std::string(path);
  constexpr std::string_view kCut = "...";
  if (max_bytes <= kCut.size()) return std::string(kCut.substr(0, max_bytes));
  size_t start = path.size() - (max_bytes - kCut.size());
  const size_t slash = path.find('/', start);
  if (slash != std::string_view::npos && slash + 1 < path.size()) {
    start = slash;
  } else {
    while (start < path.size() && (static_cast<unsigned char>(path[start]) & 0xC0) == 0x80) {
      ++start;
    }
  }
  return std::string(kCut) + std::string(path.substr(start));
}

}  // namespace

std::string_view kind_name(Workload::Kind kind) {
  switch (kind) {
    case Workload::Kind::Unit:
      return "unit";
    case Workload::Kind::Container:
      return "container";
    case Workload::Kind::Pod:
      return "pod";
    case Workload::Kind::Cgroup:
      break;
  }
  return "cgroup";
}

WorkloadRules WorkloadRules::defaults() {
  WorkloadRules rules;
  // runc's and crun's systemd driver name a container's scope "<prefix>-<name>.scope" from the
  // OCI cgroupsPath "<slice>:<prefix>:<name>"; each runtime picks the prefix.
  rules.containers = {
      {"docker-", ".scope", "docker"},              // moby: "system.slice:docker:<id>"
      {"cri-containerd-", ".scope", "containerd"},  // containerd's CRI plugin
      {"crio-", ".scope", "cri-o"},                 // CRI-O's cgmgr: scopePrefix "crio"
      {"crio-", "", "cri-o"},                       // CRI-O's cgroupfs manager: <parent>/crio-<id>
      {"libpod-", ".scope", "podman"},              // podman: machine.slice or the user's slice
  };
  rules.monitors = {
      {"crio-conmon-", ".scope", "cri-o"},
      {"crio-conmon-", "", "cri-o"},
      {"libpod-conmon-", ".scope", "podman"},
  };
  rules.id_parents = {
      {"docker", "", "docker"},  // moby's cgroupfs driver: cgroup parent "docker"
  };
  rules.unit_suffixes = {".service", ".scope"};
  return rules;
}

Workload classify_cgroup(std::string_view path, const WorkloadRules& rules) {
  const auto components = components_of(path);
  Workload workload;
  if (components.empty()) {
    workload.name = kRootCgroupWorkload;
    return workload;
  }

  for (size_t at = 0; at < components.size(); ++at) {
    auto uid = pod_uid_at(components, at, rules);
    if (!uid) continue;
    workload.kind = Workload::Kind::Pod;
    workload.pod_uid = *uid;
    workload.name = *uid;
    for (size_t below = at + 1; below < components.size(); ++below) {
      if (match_any(components[below], rules.monitors, rules)) break;
      if (auto container = container_at(components, below, rules, std::string())) {
        workload.container_id = std::string(container->id);
        workload.runtime = container->runtime;
        break;
      }
    }
    return workload;
  }

  for (size_t at = 0; at < components.size(); ++at) {
    if (match_any(components[at], rules.monitors, rules)) continue;
    if (auto container = container_at(components, at, rules, std::nullopt)) {
      workload.kind = Workload::Kind::Container;
      workload.container_id = std::string(container->id);
      workload.runtime = container->runtime;
      workload.name = short_name(container->runtime, container->id, rules);
      return workload;
    }
  }

  // The outermost unit is what systemd manages; a deeper one is a unit of a manager below it
  // (user@1000.service's own app scopes), named within it.
  std::optional<std::string_view> outer, inner;
  for (const auto component : components) {
    if (!is_unit(component, rules)) continue;
    if (!outer) {
      outer = component;
    } else {
      inner = component;
    }
  }
  if (outer) {
    workload.kind = Workload::Kind::Unit;
    workload.name = std::string(*outer);
    if (inner) workload.name += "/" + std::string(*inner);
    return workload;
  }

  std::string normalized;
  // A cgroup's name may be any bytes but '/' and NUL, but the workload's name is a label value
  // in every output (Prometheus rejects a scrape with invalid UTF-8; a terminal obeys control
  // characters).
  for (const auto component : components) normalized += "/" + printable_text(component);
  workload.name = bounded_path(normalized, rules.max_cgroup_name_bytes);
  return workload;
}

}  // namespace hucprof
