// --bpf.max-keys and --bpf.max-stacks: the BPF map capacities, as flags and config keys.
#include <gtest/gtest.h>

#include "parse_helpers.h"

namespace hucprof {
namespace {

TEST(BpfMapFlags, DefaultsHoldABusyIntervalInAFewMiB) {
  const RunOptions o = parse_run({"run"});
  EXPECT_EQ(o.attach.max_keys, 16384u);
  EXPECT_EQ(o.attach.max_stacks, 8192u);
}

TEST(BpfMapFlags, RunAndDoctorTakeThemAsFlags) {
  EXPECT_EQ(parse_run({"run", "--bpf.max-keys", "256"}).attach.max_keys, 256u);
  EXPECT_EQ(parse_run({"run", "--bpf.max-keys=1048576"}).attach.max_keys, 1048576u);
  EXPECT_EQ(parse_run({"run", "--bpf.max-stacks", "64"}).attach.max_stacks, 64u);
  EXPECT_EQ(parse_run({"run", "--bpf.max-stacks", "262144"}).attach.max_stacks, 262144u);
  // doctor shows the sizes run would use
  EXPECT_EQ(parse_run({"doctor", "--bpf.max-stacks", "1024"}).attach.max_stacks, 1024u);
}

TEST(BpfMapFlags, OutOfRangeOrGarbageNamesTheFlag) {
  EXPECT_EQ(parse_error({"run", "--bpf.max-keys", "255"}),
            "--bpf.max-keys: 255 is out of range 256..1048576");
  EXPECT_EQ(parse_error({"run", "--bpf.max-stacks", "300000"}),
            "--bpf.max-stacks: 300000 is out of range 64..262144");
  EXPECT_EQ(parse_error({"run", "--bpf.max-stacks", "8k"}),
            "--bpf.max-stacks: \"8k\" is not a whole number");
}

class BpfMapConfig : public ConfigFileTest {};

TEST_F(BpfMapConfig, KeysNestOrDot) {
  const std::string path = write("hucprof.yaml", "bpf:\n  max-keys: 4096\nbpf.max-stacks: 2048\n");
  const RunOptions o = parse_run({"run", "--config", path});
  EXPECT_EQ(o.attach.max_keys, 4096u);
  EXPECT_EQ(o.attach.max_stacks, 2048u);
}

}  // namespace
}  // namespace hucprof
