#pragma once
// A small usercopy profile with known content, for tests of the pprof writer and reader and for
// huc_profile_fixture (which writes it for Google's pprof and Chromium to read). Sampling and
// probes, --latency, 99 Hz (10101010 ns per sample):
//   7 samples  __check_object_size+0x25 <- nft_do_chain [nf_tables] <- udp_recvmsg+0x1a4
//              {callsite=udp_recvmsg, syscall=recvfrom, check=object}
//   1000 calls, 64000 bytes, 192000 ns  __check_object_size <- udp_recvmsg
//              {callsite=udp_recvmsg, syscall=recvfrom, direction=to_user}
//   3 subchecks  find_vmap_area <- __check_object_size <- udp_recvmsg  {..., check=vmalloc}
//   2 samples  _raw_spin_lock <- find_vmap_area <- __check_object_size.cold <- netlink_recvmsg
//              {callsite=netlink_recvmsg, syscall=recvmsg, check=vmalloc}
#include "core/symbols/stack_interner.h"
#include "core/symbols/stack_profile.h"

namespace hucprof {

inline StackProfile fixture_profile(StackInterner& interner) {
  auto stack = [&](std::initializer_list<ProfileFrame> frames) {
    ProfileStack s;
    for (const auto& f : frames) s.push_back(interner.frame(f));
    return interner.stack(s);
  };
  const ProfileFrame check{"__check_object_size", "", 0x25, 0x6c9275};
  const ProfileFrame udp{"udp_recvmsg", "", 0x1a4, 0xb1d3a4};

  StackProfile p;
  p.sampling = p.probes = p.latency = true;
  p.sample_period_ns = 10101010;
  p.sampled_by_context = {{"kernel", 1000}, {"user", 400}, {"idle", 8000}};
  p.time_unix_ns = 1700000000000000000;
  p.duration_ns = 30000000000;
  p.kernel = "6.1.0-18-amd64";
  p.hucprof_version = "fixture";
  p.hardened_usercopy = "on (default)";

  ProfileSample sampled{stack({check, {"nft_do_chain", "nf_tables", 0x40, 0}, udp}),
                        make_labels({"udp_recvmsg", "recvfrom", "object", ""}),
                        {}};
  sampled.values[kSamples] = 7;
  ProfileSample calls{
      stack({check, udp}), make_labels({"udp_recvmsg", "recvfrom", "", "to_user"}), {}};
  calls.values[kCalls] = 1000;
  calls.values[kBytes] = 64000;
  calls.values[kLatencyNs] = 192000;
  ProfileSample sub{stack({{"find_vmap_area", "", 0, 0}, check, udp}),
                    make_labels({"udp_recvmsg", "recvfrom", "vmalloc", "to_user"}),
                    {}};
  sub.values[kSubchecks] = 3;
  ProfileSample netlink{stack({{"_raw_spin_lock", "", 0x12, 0x1000012},
                               {"find_vmap_area", "", 0x88, 0x300088},
                               {"__check_object_size.cold", "", 0x3, 0x216ba3},
                               {"netlink_recvmsg", "", 0x2f0, 0xa002f0}}),
                        make_labels({"netlink_recvmsg", "recvmsg", "vmalloc", ""}),
                        {}};
  netlink.values[kSamples] = 2;
  p.samples = {sampled, calls, sub, netlink};
  return p;
}

// The same udp_recvmsg samples as found with the kernel's debuginfo: the call site's frame holds
// Debian 6.1's inline chain at udp_recvmsg's call of __check_object_size (as addr2line -i -f
// prints it for linux-image-6.1.0-57-amd64-dbg), the check its own line, and the samples their
// copy label.
//   7 samples   __check_object_size <- check_object_size <- check_copy_size <- copy_to_iter
//               <- copy_linear_skb <- udp_recvmsg  {..., copy=copy_to_iter}
//   1000 calls  the same stack  {..., direction=to_user, copy=copy_to_iter}
inline StackProfile fixture_profile_with_source(StackInterner& interner) {
  auto lines = [](SourceLines l) { return std::make_shared<const SourceLines>(std::move(l)); };
  const FramePtr check = interner.frame({"__check_object_size", "", 0x25, 0x6c9275,
                                         lines({{"__check_object_size", "mm/usercopy.c", 213}})});
  const FramePtr udp =
      interner.frame({"udp_recvmsg", "", 0x1a4, 0xb1d3a4,
                      lines({{"check_object_size", "include/linux/thread_info.h", 199},
                             {"check_copy_size", "include/linux/thread_info.h", 235},
                             {"copy_to_iter", "include/linux/uio.h", 178},
                             {"copy_linear_skb", "include/net/udp.h", 377},
                             {"udp_recvmsg", "net/ipv4/udp.c", 1950}})});
  const FramePtr sock = interner.frame({"sock_recvmsg", "", 0x44, 0x9d0044});
  StackProfile p = fixture_profile(interner);
  const StackPtr stack = interner.stack({check, udp, sock});
  ProfileSample sampled{
      stack, make_labels({"udp_recvmsg", "recvfrom", "object", "", "copy_to_iter"}), {}};
  sampled.values[kSamples] = 7;
  ProfileSample calls{
      stack, make_labels({"udp_recvmsg", "recvfrom", "", "to_user", "copy_to_iter"}), {}};
  calls.values[kCalls] = 1000;
  calls.values[kBytes] = 64000;
  p.samples = {sampled, calls};
  return p;
}

}  // namespace hucprof
