#include "export/pprof/pprof_format.h"

namespace hucprof {

PprofSampleType pprof_sample_type(ProfileValue value) {
  switch (value) {
    case kSamples:
      return {"samples", "count"};
    case kCalls:
      return {"calls", "count"};
    case kBytes:
      return {"bytes", "bytes"};
    case kLatencyNs:
      return {"latency", "nanoseconds"};
    case kSubchecks:
      return {"subchecks", "count"};
    case kProfileValueCount:
      break;
  }
  return {"unknown", "count"};
}

}  // namespace hucprof
