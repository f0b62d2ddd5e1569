#pragma once
#include <memory>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "core/unique_fd.h"  // UniqueFd, for the descriptors libbpf hands out

namespace hucprof {

// RAII for every libbpf object: a link is destroyed (detached) exactly once, whatever path the
// daemon leaves by.
struct BpfLinkDeleter {
  void operator()(bpf_link* link) const { bpf_link__destroy(link); }
};
using BpfLinkPtr = std::unique_ptr<bpf_link, BpfLinkDeleter>;

struct BtfDeleter {
  void operator()(btf* types) const { btf__free(types); }
};
using BtfPtr = std::unique_ptr<btf, BtfDeleter>;

// Skeletons have their own destroy(); Skel is e.g. probe_bpf.
template <typename Skel, void (*Destroy)(Skel*)>
struct SkeletonDeleter {
  void operator()(Skel* skel) const { Destroy(skel); }
};

}  // namespace hucprof
