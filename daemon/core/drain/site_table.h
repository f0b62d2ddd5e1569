#pragma once
#include <cstdint>
#include <vector>

#include "core/drain/raw_drain.h"
#include "hucprof_abi.h"

namespace hucprof {

// Probe mode's per-CPU table of hot call sites (hucprof_abi.h, struct huc_site_table), as the
// drain reads it: plain data in, counts out, so the rules are tested without a kernel.

// The sub-checks that calls of `site` ran, by kind, from where their classified sub-checks
// ended (`ended_at`, hucprof_abi.h's enum huc_classify_end: each end implies the kinds before
// it in mm/usercopy.c's order), appended to `subchecks` for each kind with a count.
void add_classified_subchecks(const huc_site_key& site, const __u64 (&ended_at)[HUC_CLASSIFY_ENDS],
                              std::vector<RawSubcheckCount>& subchecks);

// The slots one CPU's table counted in the retired sequence `retired`: those of its half that
// carry that sequence and were counted in (calls > 0). Slots of older sequences in the same half
// were drained by an earlier drain and are skipped. Their classified sub-checks go to
// `subchecks`, keyed by the slot's site as the shared hash's are.
void add_table_sites(const huc_site_table& table, uint32_t retired,
                     std::vector<RawSiteCount>& sites, std::vector<RawSubcheckCount>& subchecks);

// One key can be counted on several CPUs' tables and in the shared hash in one generation:
// equal keys become one count (calls, bytes and counts added; the first stack id that is not 0
// kept), in the order each key was first met.
void merge_equal_keys(std::vector<RawSiteCount>& sites);
void merge_equal_keys(std::vector<RawSubcheckCount>& subchecks);

}  // namespace hucprof
