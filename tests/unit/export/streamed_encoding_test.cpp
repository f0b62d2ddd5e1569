// The profile is serialized into the gzip stream a batch of samples at a time, so that a request
// never holds the whole message (issue 40). What it serves must stay, once inflated, what
// protobuf's own serializer makes of the whole message: checked here byte for byte.
#include <gtest/gtest.h>

#include <string>

#include "core/symbols/stack_interner.h"
#include "export/pprof/gzip_codec.h"
#include "export/pprof/pprof_format.h"
#include "export/views/pprof_writer.h"
#include "fixture_profile.h"

namespace hucprof {
namespace {

// Many distinct stacks under many labels: several of the writer's batches of samples.
StackProfile large_profile(StackInterner& interner, int stacks) {
  StackProfile p = fixture_profile(interner);
  const ProfileFrame check{"__check_object_size", "", 0x25, 0x6c9275};
  for (int i = 0; i < stacks; ++i) {
    ProfileStack s{interner.frame(check)};
    for (int depth = 0; depth < 1 + i % 20; ++depth) {
      s.push_back(interner.frame({"caller_" + std::to_string((i + depth) % 700), "",
                                  static_cast<uint64_t>(depth), 0x1000u + i % 300}));
    }
    ProfileSample sample{interner.stack(s),
                         make_labels({"site_" + std::to_string(i % 50), "read", "object", "", "",
                                      "unit_" + std::to_string(i % 30) + ".service", "unit"}),
                         {}};
    sample.values[kSamples] = 1 + i % 7;
    sample.values[kCalls] = i % 3 == 0 ? 0 : 10 + i;
    p.samples.push_back(sample);
  }
  p.busy_by_workload["unit_3.service"] = {"unit", 500, 200, 1, 0};
  return p;
}

// The served bytes inflated: one gzip member, nothing after it ("" if not).
std::string inflated(const std::string& served) {
  const Result<std::string> plain = gzip_decompress(served, kMaxProfileBytes);
  EXPECT_TRUE(plain.ok()) << plain.error().text;
  return plain.ok() ? plain.value() : "";
}

TEST(StreamedEncoding, ServesTheWholeMessageGzipped) {
  StackInterner interner;
  for (const int stacks : {0, 255, 256, 1000, 3000}) {
    const StackProfile p = large_profile(interner, stacks);
    const pprof::Profile whole = to_pprof(p);
    const std::string served = encode_pprof_gzip(p);
    EXPECT_TRUE(looks_gzipped(served)) << stacks << " stacks";
    const std::string plain = inflated(served);
    EXPECT_EQ(plain, whole.SerializeAsString()) << stacks << " stacks";
    pprof::Profile parsed;
    ASSERT_TRUE(parsed.ParseFromString(plain)) << stacks << " stacks";
    EXPECT_EQ(parsed.sample_size(), whole.sample_size()) << stacks << " stacks";
    EXPECT_LT(served.size(), plain.size()) << "compressed, " << stacks << " stacks";
  }
  StackProfile empty;
  EXPECT_EQ(inflated(encode_pprof_gzip(empty)), to_pprof(empty).SerializeAsString());
}

TEST(StreamedEncoding, PausesWhileEncoding) {
  StackInterner interner;
  int pauses = 0;
  encode_pprof_gzip(large_profile(interner, 3000), [&] { ++pauses; });
  EXPECT_GE(pauses, 3000 / 256);
}

}  // namespace
}  // namespace hucprof
