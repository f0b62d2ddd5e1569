#pragma once
#include <memory>
#include <vector>

#include "bpf/probe_session.h"
#include "bpf/sampling_session.h"
#include "cli/options.h"
#include "core/attach_plan.h"
#include "hucprof.pb.h"

namespace hucprof {

// What `run` got when it carried out the attach plan.
struct AttachedSessions {
  std::unique_ptr<ProbeSession> probes;            // null: no probe attached
  std::unique_ptr<SamplingSession> sampler;        // null: not sampling
  std::vector<hucprof::v1::ProbeStatus> statuses;  // every target and the sampler, for metrics
  AttachOutcome outcome;                           // for judge()
};

// Starts the sessions the plan asks for and logs one line per target: attached as what, or why
// not. Targets not attached are reported too (mode "none"), so dashboards list every target.
AttachedSessions attach_sessions(const AttachPlan& plan, const RunOptions& options);

}  // namespace hucprof
