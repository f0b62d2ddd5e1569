#pragma once
#include <cerrno>
#include <cstdlib>
#include <memory>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "core/base/unique_fd.h"  // UniqueFd, for the descriptors libbpf hands out

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

// Skel's skeleton over the ELF bytes of another build of the same source (other -D macros,
// bpf/CMakeLists.txt): the same programs, maps and globals (abi_test holds them to it), so the
// skeleton's typed handles stay. What Skel's __open() does, with the other object's bytes.
// Null with errno set on failure.
template <typename Skel, int (*Create)(Skel*), void (*Destroy)(Skel*)>
Skel* open_skeleton_over(const void* (*elf_bytes)(size_t*)) {
  auto* skel = static_cast<Skel*>(calloc(1, sizeof(Skel)));
  if (!skel) {
    errno = ENOMEM;
    return nullptr;
  }
  int err = Create(skel);
  if (!err) {
    skel->skeleton->data = elf_bytes(&skel->skeleton->data_sz);
    err = bpf_object__open_skeleton(skel->skeleton, nullptr);
  }
  if (err) {
    Destroy(skel);
    errno = -err;
    return nullptr;
  }
  return skel;
}

}  // namespace hucprof
