#include "kernel_edge/cgroup_names_session.h"

#include <bpf/libbpf.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <utility>

#include "cgroup_events.h"
#include "cgroup_names.skel.h"
#include "kernel_edge/map_reader.h"

namespace hucprof {

namespace {

constexpr size_t kHeader = offsetof(huc_cgroup_event, name);

// One record of the ring into `to`; a record shorter than it says is skipped, not trusted.
int on_record(void* context, void* data, size_t size) {
  auto& to = *static_cast<std::vector<CgroupChange>*>(context);
  if (size < kHeader) return 0;
  huc_cgroup_event event{};
  std::memcpy(&event, data, std::min(size, sizeof(event)));
  const size_t name_len = std::min<size_t>(event.name_len, size - kHeader);
  CgroupChange change;
  change.id = event.id;
  if (event.change == HUC_CGROUP_MADE) {
    change.kind = CgroupChange::Kind::Made;
    change.parent = event.parent_id;
    change.name.assign(event.name, name_len);
  } else if (event.change == HUC_CGROUP_REMOVED) {
    change.kind = CgroupChange::Kind::Removed;
  } else {
    return 0;
  }
  to.push_back(std::move(change));
  return 0;
}

}  // namespace

CgroupNamesSession::~CgroupNamesSession() {
  ring_buffer__free(ring_);
  cgroup_names_bpf__destroy(skel_);
}

CgroupNamesSession::Started CgroupNamesSession::start() {
  Started out;
  std::unique_ptr<CgroupNamesSession> self(new CgroupNamesSession());
  self->skel_ = cgroup_names_bpf__open();
  if (!self->skel_) {
    out.error = std::string("cannot open the cgroup names BPF object: ") + strerror(errno);
    return out;
  }
  if (int err = cgroup_names_bpf__load(self->skel_); err) {
    out.error = std::string(
                    "cannot load the cgroup_mkdir/cgroup_rmdir raw tracepoint "
                    "programs: ") +
                strerror(-err);
    return out;
  }
  if (int err = cgroup_names_bpf__attach(self->skel_); err) {
    out.error = std::string("cannot attach to the cgroup_mkdir/cgroup_rmdir raw tracepoints: ") +
                strerror(-err);
    return out;
  }
  self->ring_ = ring_buffer__new(bpf_map__fd(self->skel_->maps.cgroup_events), on_record,
                                 &self->read_, nullptr);
  if (!self->ring_) {
    out.error = std::string("cannot map the cgroup events ring buffer: ") + strerror(errno);
    return out;
  }
  out.session = std::move(self);
  return out;
}

std::vector<CgroupChange> CgroupNamesSession::read() {
  read_.clear();
  ring_buffer__consume(ring_);
  return std::exchange(read_, {});
}

uint64_t CgroupNamesSession::lost() const { return skel_->bss->lost_events; }

void CgroupNamesSession::add_costs(RawDrain& out) const { add_object_costs(skel_->obj, out); }

}  // namespace hucprof
