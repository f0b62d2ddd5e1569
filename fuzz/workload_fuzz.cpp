// Cgroup v2 paths (classify_cgroup) and kubelet's pod log directory names (parse_pod_log_dir):
// names that any container runtime, pod spec or user with a delegated cgroup subtree chooses.
// One input serves both: as a path, and as one directory entry. The workload's name becomes a
// label value in every output, so it must be one whatever the path: never empty, valid UTF-8
// without control characters, bounded; and paths of the runtimes' own layouts, appended to
// whatever the input is, must still classify as docs/design.md ("Which workload") says.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/base/utf8.h"
#include "core/workload/pod_log_dir.h"
#include "core/workload/workload_rules.h"
#include "fuzz_check.h"

namespace hucprof {
namespace {

using Kind = Workload::Kind;

// A container id and a pod UID as the runtimes and kubelet make them.
constexpr std::string_view kId = "a38f7760b7aeee2250b6cef7479fc0e951234f8433f5debf586d273bbe376194";
constexpr std::string_view kUid = "c4a73744-8e75-4877-b18b-1fcea4d91af7";

const WorkloadRules& rules() {
  static const WorkloadRules defaults = WorkloadRules::defaults();
  return defaults;
}

std::string s(std::string_view v) { return std::string(v); }

// Valid UTF-8 with no C0, DEL or C1 control character and no noncharacter U+FFFE/U+FFFF (XML
// forbids them): a value every output (Prometheus text, pprof, the web view and its SVG, a
// terminal) can show as it is.
bool printable_label(std::string_view text) {
  while (!text.empty()) {
    const size_t length = utf8_sequence_length(text);
    if (length == 0) return false;
    const auto lead = static_cast<unsigned char>(text[0]);
    if (lead < 0x20 || lead == 0x7F) return false;
    if (lead == 0xC2 && static_cast<unsigned char>(text[1]) < 0xA0) return false;  // C1
    if (text.substr(0, length) == "\xEF\xBF\xBE" || text.substr(0, length) == "\xEF\xBF\xBF") {
      return false;
    }
    text.remove_prefix(length);
  }
  return true;
}

bool lower_hex(std::string_view text, size_t digits) {
  if (text.size() != digits) return false;
  for (const char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool is_component_of(std::string_view part, std::string_view path) {
  const std::string slashed = "/" + s(path) + "/";
  return !part.empty() && slashed.find("/" + s(part) + "/") != std::string::npos;
}

// The path as classify_cgroup's rules read it: its non-empty components, each after a '/'.
std::string normalized(std::string_view path) {
  std::string out;
  size_t at = 0;
  while (at <= path.size()) {
    const size_t slash = std::min(path.find('/', at), path.size());
    if (slash > at) {
      out += '/';
      out += path.substr(at, slash - at);
    }
    at = slash + 1;
  }
  return out.empty() ? "/" : out;
}

void check_workload(const Workload& w, std::string_view path) {
  HUC_FUZZ_CHECK(!w.name.empty(), "a workload always has a name");
  HUC_FUZZ_CHECK(printable_label(w.name), "the name is valid UTF-8 without control characters");
  switch (w.kind) {
    case Kind::Cgroup: {
      HUC_FUZZ_CHECK(w.pod_uid.empty() && w.container_id.empty() && w.runtime.empty(),
                     "a plain cgroup names no pod or container");
      HUC_FUZZ_CHECK(w.name.size() <= rules().max_cgroup_name_bytes, "a cgroup's name is bounded");
      // A path that is a label value already is kept, or its tail after "...".
      const std::string whole = normalized(path);
      if (whole == "/") {
        HUC_FUZZ_CHECK(w.name == kRootCgroupWorkload,
                       "the root cgroup is named for what runs there: kernel threads");
      } else if (printable_label(whole)) {
        HUC_FUZZ_CHECK(
            w.name == whole || (w.name.starts_with("...") && whole.ends_with(w.name.substr(3)) &&
                                whole.size() > rules().max_cgroup_name_bytes),
            "a cgroup is named by its path, or the path's tail when it is too long");
      }
      break;
    }
    case Kind::Unit: {
      const size_t slash = w.name.find('/');
      const std::string_view outer = std::string_view(w.name).substr(0, slash);
      HUC_FUZZ_CHECK(is_component_of(outer, path), "a unit is a component of its path");
      HUC_FUZZ_CHECK(outer.size() <= rules().max_unit_name_bytes, "unit names are bounded");
      if (slash != std::string::npos) {
        const std::string_view inner = std::string_view(w.name).substr(slash + 1);
        HUC_FUZZ_CHECK(inner.find('/') == std::string_view::npos, "at most two units");
        HUC_FUZZ_CHECK(is_component_of(inner, path), "an inner unit is a component of the path");
        HUC_FUZZ_CHECK(inner.size() <= rules().max_unit_name_bytes, "unit names are bounded");
      }
      HUC_FUZZ_CHECK(w.pod_uid.empty() && w.container_id.empty() && w.runtime.empty(),
                     "a unit names no pod or container");
      break;
    }
    case Kind::Container:
      HUC_FUZZ_CHECK(lower_hex(w.container_id, rules().container_id_hex_digits),
                     "a container id is 64 hex digits");
      HUC_FUZZ_CHECK(path.find(w.container_id) != std::string_view::npos,
                     "the container id is in the path");
      HUC_FUZZ_CHECK(
          !w.runtime.empty() &&
              w.name == w.runtime + ":" + w.container_id.substr(0, rules().short_id_hex_digits),
          "a container is named <runtime>:<short id>");
      HUC_FUZZ_CHECK(w.pod_uid.empty(), "a container outside a pod names no pod");
      break;
    case Kind::Pod:
      HUC_FUZZ_CHECK(!w.pod_uid.empty() && w.pod_uid.size() <= rules().max_pod_uid_bytes,
                     "a pod UID is bounded");
      HUC_FUZZ_CHECK(w.name == w.pod_uid, "a pod is named by its UID until the node names it");
      HUC_FUZZ_CHECK(path.find(rules().pods_root) != std::string_view::npos,
                     "a pod lies below kubelet's kubepods");
      HUC_FUZZ_CHECK(
          w.container_id.empty() || lower_hex(w.container_id, rules().container_id_hex_digits),
          "a pod's container id is 64 hex digits");
      HUC_FUZZ_CHECK(!w.container_id.empty() || w.runtime.empty(),
                     "a runtime only with a container");
      break;
  }
}

Workload classify(const std::string& path) { return classify_cgroup(path, rules()); }

Workload container(std::string_view runtime) {
  Workload w;
  w.kind = Kind::Container;
  w.runtime = s(runtime);
  w.container_id = s(kId);
  w.name = s(runtime) + ":" + s(kId.substr(0, rules().short_id_hex_digits));
  return w;
}

Workload pod(std::string_view uid, std::string_view runtime) {
  Workload w;
  w.kind = Kind::Pod;
  w.name = w.pod_uid = s(uid);
  w.runtime = s(runtime);
  w.container_id = s(kId);
  return w;
}

std::string systemd_uid(std::string_view uid) {
  std::string escaped(uid);
  for (char& c : escaped) c = c == '-' ? '_' : c;
  return escaped;
}

// The runtimes' layouts below whatever the input is. Pods win wherever they are (a kind node's
// pods inside its docker container are pods); below a container, its own cgroups are it.
void check_layouts_below(const std::string& path, const Workload& w) {
  if (w.kind == Kind::Unit || w.kind == Kind::Cgroup) {
    for (const auto& name : rules().containers) {
      HUC_FUZZ_CHECK(
          classify(path + "/" + name.prefix + s(kId) + name.suffix) == container(name.runtime),
          "a runtime's container scope below a unit or cgroup is that container");
    }
    HUC_FUZZ_CHECK(classify(path + "/docker/" + s(kId)) == container("docker"),
                   "moby's cgroupfs layout is a docker container");
    HUC_FUZZ_CHECK(
        classify(path + "/kubepods/burstable/pod" + s(kUid) + "/" + s(kId)) == pod(kUid, ""),
        "kubelet's cgroupfs layout is the pod and its container");
    HUC_FUZZ_CHECK(classify(path +
                            "/kubepods.slice/kubepods-besteffort.slice/"
                            "kubepods-besteffort-pod" +
                            systemd_uid(kUid) + ".slice/cri-containerd-" + s(kId) + ".scope") ==
                       pod(kUid, "containerd"),
                   "kubelet's systemd layout is the pod and its container");
    const Workload service = classify(path + "/hucprof-fuzz.service");
    HUC_FUZZ_CHECK(service.kind == Kind::Unit, "a service is a unit");
    const std::string outer =
        w.kind == Kind::Unit ? w.name.substr(0, w.name.find('/')) + "/" : std::string();
    HUC_FUZZ_CHECK(service.name == outer + "hucprof-fuzz.service",
                   "a service is named by itself, within the outermost unit above it");
  } else {
    // What a container's or pod's own systemd makes below it stays that workload.
    HUC_FUZZ_CHECK(classify(path + "/init.scope") == w, "below a container or pod is that one");
  }
}

void check_cgroup_path(std::string_view input) {
  const std::string path(input);
  const Workload w = classify(path);
  check_workload(w, path);
  HUC_FUZZ_CHECK(classify(path) == w, "classify_cgroup is deterministic");
  HUC_FUZZ_CHECK(classify("/" + path + "/") == w, "leading and trailing slashes change nothing");
  std::string doubled;
  for (const char c : path) {
    doubled += c;
    if (c == '/') doubled += c;
  }
  HUC_FUZZ_CHECK(classify(doubled) == w, "empty components change nothing");
  check_layouts_below(path, w);
}

bool dns_chars(std::string_view text, bool dots) {
  for (const char c : text) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || (dots && c == '.'))) {
      return false;
    }
  }
  const auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  return !text.empty() && alnum(text.front()) && alnum(text.back());
}

// kubelet's "<namespace>_<name>_<uid>": parsed back into exactly what it was joined from, or
// refused; what it names is then found by the pod's cgroup in either driver's layout.
void check_pod_log_dir(std::string_view entry, std::string_view path) {
  const auto dir = parse_pod_log_dir(entry);
  if (!dir) return;
  HUC_FUZZ_CHECK(dir->pod.pod_namespace + "_" + dir->pod.name + "_" + dir->uid == entry,
                 "a pod log directory splits back into what kubelet joined");
  HUC_FUZZ_CHECK(dir->pod.pod_namespace.size() <= 63 && dns_chars(dir->pod.pod_namespace, false),
                 "a namespace is a DNS-1123 label");
  HUC_FUZZ_CHECK(dir->pod.name.size() <= 253 && dns_chars(dir->pod.name, true),
                 "a pod name is a DNS-1123 subdomain");
  HUC_FUZZ_CHECK(!dir->uid.empty() && dir->uid.find('_') == std::string::npos, "a UID has no '_'");

  const PodNames pods = {{dir->uid, dir->pod}};
  const std::string named = dir->pod.pod_namespace + "/" + dir->pod.name;
  for (const std::string& pod_path :
       {"/kubepods/besteffort/pod" + dir->uid,
        "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + systemd_uid(dir->uid) +
            ".slice"}) {
    Workload w = classify(pod_path);
    HUC_FUZZ_CHECK(w.kind == Kind::Pod && w.pod_uid == dir->uid,
                   "a pod log directory's UID is found in the pod's cgroup");
    name_pod(w, pods);
    HUC_FUZZ_CHECK(w.name == named && printable_label(w.name), "the node names its pods");
  }
  // Any other workload keeps its name.
  Workload other = classify(s(path));
  const Workload before = other;
  name_pod(other, pods);
  if (before.kind != Kind::Pod || before.pod_uid != dir->uid) {
    HUC_FUZZ_CHECK(other == before, "naming pods leaves other workloads alone");
  }
}

}  // namespace
}  // namespace hucprof

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  hucprof::check_cgroup_path(input);
  hucprof::check_pod_log_dir(input, input);
  return 0;
}
