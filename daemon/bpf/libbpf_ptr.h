#pragma once
#include <unistd.h>

#include <memory>
#include <utility>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

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

// Move-only file descriptor.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

}  // namespace hucprof
