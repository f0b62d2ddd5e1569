#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hucprof.pb.h"

namespace hucprof {

// The seed's UDP flood, as the aggregator would hand it over.
inline v1::Snapshot udp_flood_snapshot() {
  v1::Snapshot s;
  auto* c = s.add_checks();
  c->set_callsite("udp_recvmsg");
  c->set_syscall("recvfrom");
  c->set_direction("to_user");
  c->set_calls(1000);
  c->set_bytes(1472000);
  c = s.add_checks();
  c->set_callsite("udp_sendmsg");
  c->set_syscall("sendto");
  c->set_direction("from_user");
  c->set_calls(5);
  c->set_bytes(320);

  auto* sub = s.add_subchecks();
  sub->set_callsite("udp_recvmsg");
  sub->set_step("slab_object");
  sub->set_count(900);
  sub = s.add_subchecks();
  sub->set_callsite("udp_recvmsg");
  sub->set_step("vmap_area");
  sub->set_count(100);

  auto* cpu = s.add_cpu_samples();
  cpu->set_callsite("udp_recvmsg");
  cpu->set_syscall("recvfrom");
  cpu->set_step("entry");
  cpu->set_samples(40);
  cpu = s.add_cpu_samples();
  cpu->set_callsite("other");
  cpu->set_syscall("sendto");
  cpu->set_step("vmap_area");
  cpu->set_samples(2);

  for (const auto& [context, samples] : std::vector<std::pair<std::string, uint64_t>>{
           {"kernel", 1000}, {"user", 500}, {"idle", 8500}}) {
    auto* ctx = s.add_sampled();
    ctx->set_context(context);
    ctx->set_samples(samples);
  }
  for (auto [walk, n] :
       {std::pair{"learned_offsets", 2997}, {"stack_walk", 3}, {"offset_mismatch", 1}}) {
    auto* w = s.add_helper_walks();
    w->set_walk(walk);
    w->set_count(n);
  }
  auto* drop = s.add_drops();
  drop->set_reason("stack_collision");
  drop->set_count(3);

  s.set_hardened_usercopy_enabled(true);
  s.mutable_build()->set_version("0.1.0");
  s.mutable_build()->set_libbpf("1.1.2");
  s.mutable_build()->set_kernel("6.1.0-18-amd64");
  s.set_intervals(42);
  s.set_last_drain_seconds(0.0125);
  s.set_sample_frequency_hz(99);
  return s;
}

// One estimator's prediction, as SpeedupPrediction writes it (no speed-up for a share of 1 or
// more), and the call sites' part of it.
inline v1::CostSharePrediction* add_prediction(v1::Snapshot& s, const std::string& estimator,
                                               double window_seconds, double share,
                                               std::optional<double> speedup) {
  auto* p = s.add_predictions();
  p->set_estimator(estimator);
  p->set_window_seconds(window_seconds);
  p->set_share(share);
  p->set_lower(share * 0.9);
  p->set_upper(share * 1.1);
  p->set_decided(true);
  if (speedup) p->set_speedup(*speedup);
  return p;
}

inline void add_callsite_share(v1::CostSharePrediction* p, const std::string& callsite,
                               double share, double speedup) {
  auto* site = p->add_callsites();
  site->set_callsite(callsite);
  site->set_share(share);
  site->set_lower(share * 0.9);
  site->set_upper(share * 1.1);
  site->set_decided(true);
  site->set_speedup(speedup);
}

}  // namespace hucprof
