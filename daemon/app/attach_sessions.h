#pragma once
#include <memory>
#include <vector>

#include "cli/options.h"
#include "core/kernel/attach_plan.h"
#include "core/kernel/target_status.h"
#include "kernel_edge/probe_session.h"
#include "kernel_edge/sampling_session.h"

namespace hucprof {

// The sessions the attach plan asks for, their programs loaded into the kernel but not attached.
// `doctor` reports them and drops them (which unloads them), `run` attaches them: both go through
// load_sessions, so what doctor says is what run does.
struct LoadedSessions {
  AttachPlan plan;  // as loaded: sub-checks one level down or more where the kernel refused
  ProbeSession::Loaded probes;
  SamplingSession::Loaded sampler;
};
LoadedSessions load_sessions(const AttachPlan& plan, Mode mode);

// What `run` starts from `loaded` as judge() reads it, before anything is attached: doctor's
// verdict.
AttachOutcome loaded_outcome(const LoadedSessions& loaded, Mode mode);

// What `run` got when it carried out the attach plan.
struct AttachedSessions {
  AttachPlan plan;                           // the plan carried out (LoadedSessions::plan)
  std::unique_ptr<ProbeSession> probes;      // null: no probe attached
  std::unique_ptr<SamplingSession> sampler;  // null: not sampling
  std::vector<TargetStatus> statuses;        // every target and the sampler, for metrics
  AttachOutcome outcome;                     // for judge()
};

// Attaches what load_sessions loaded and logs one line per target: attached as what, or why not.
// Targets not attached are reported too (mode "none"), so dashboards list every target.
AttachedSessions attach_sessions(LoadedSessions loaded, const RunOptions& options);

}  // namespace hucprof
