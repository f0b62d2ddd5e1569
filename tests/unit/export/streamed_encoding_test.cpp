// The profile is serialized into the gzip stream a batch of samples at a time, so that a request
// never holds the whole message (issue 40). What it serves must stay what protobuf's own
// serializer and zlib's one-shot deflate make of the whole message: checked here byte for byte.
#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <string>
#include <string_view>

#include "core/stack_interner.h"
#include "export/gzip_codec.h"
#include "export/pprof_writer.h"
#include "fixture_profile.h"

namespace hucprof {
namespace {

// zlib alone, in one call: a gzip member of `data` at `level`, the parameters gzip_codec uses.
std::string zlib_gzip(std::string_view data, int level) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, data.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

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

TEST(StreamedEncoding, ServesWhatTheWholeMessageGzippedIs) {
  StackInterner interner;
  for (const int stacks : {0, 255, 256, 1000, 3000}) {
    const StackProfile p = large_profile(interner, stacks);
    const std::string whole = to_pprof(p).SerializeAsString();
    EXPECT_EQ(encode_pprof_gzip(p), zlib_gzip(whole, Z_BEST_SPEED)) << stacks << " stacks";
  }
  StackProfile empty;
  EXPECT_EQ(encode_pprof_gzip(empty), zlib_gzip(to_pprof(empty).SerializeAsString(), 1));
}

TEST(StreamedEncoding, PausesWhileEncoding) {
  StackInterner interner;
  int pauses = 0;
  encode_pprof_gzip(large_profile(interner, 3000), [&] { ++pauses; });
  EXPECT_GE(pauses, 3000 / 256);
}

TEST(GzipWriter, PiecesGiveTheMemberOfTheirWhole) {
  std::mt19937 random(40);
  std::string data;
  for (int i = 0; i < 300000; ++i) {
    data += static_cast<char>('a' + random() % 5);  // compressible, over several 64 KiB chunks
  }
  for (const auto level : {GzipLevel::Fastest, GzipLevel::Default}) {
    GzipWriter writer(level);
    for (size_t at = 0; at < data.size();) {
      const size_t piece = std::min<size_t>(data.size() - at, random() % 150000);
      EXPECT_TRUE(writer.write(std::string_view(data).substr(at, piece)));
      at += piece;
    }
    const auto member = writer.finish();
    ASSERT_TRUE(member);
    EXPECT_EQ(*member,
              zlib_gzip(data, level == GzipLevel::Fastest ? Z_BEST_SPEED : Z_DEFAULT_COMPRESSION));
    EXPECT_EQ(*member, *gzip_compress(data, level));
    EXPECT_LE(member->capacity(), member->size() + 64) << "no room kept beyond the member";
  }
}

}  // namespace
}  // namespace hucprof
