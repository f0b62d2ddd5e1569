#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "core/symbols/stack_profile.h"
#include "export/pprof/pid_label.h"
#include "export/pprof/pprof_reader.h"
#include "profile.pb.h"

namespace hucprof {

// pprof's messages, once read within bounds (pprof_scan.h), mapped onto a StackProfile: every
// index and id checked before it is followed, names bounded, sums of sample values kept within
// an int64, samples with the same stack and labels merged. read_pprof drives it.
class ProfileFromPprof {
 public:
  // `header`: the file's Profile without its samples. `oversized`: string indices longer than
  // max_name_bytes (left empty in `header`) and their lengths, refused where a name is taken.
  ProfileFromPprof(const pprof::Profile& header, const ProfileReadLimits& limits,
                   std::unordered_map<int64_t, size_t> oversized);
  ~ProfileFromPprof();
  ProfileFromPprof(const ProfileFromPprof&) = delete;
  ProfileFromPprof& operator=(const ProfileFromPprof&) = delete;

  // The first reason the file is not a profile hucprof reads; once there is one, the mapping
  // stops at its next step and nothing it made is used.
  bool refused() const;
  const std::string& refusal() const;

  // Everything but the samples, checked; then read_sample for each sample.
  void read_header();
  // False once the file is refused: the walk over the samples stops there.
  bool read_sample(const pprof::Sample& sample);
  // The profile, once every sample is read.
  StackProfile take();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hucprof
