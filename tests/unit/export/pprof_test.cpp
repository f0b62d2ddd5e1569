// hucprof's pprof writer and reader: what it writes follows pprof's rules (checked here field by
// field; tests/tools/pprof_reads_profiles.py has Google's pprof read it), reads back unchanged,
// and the reader refuses broken files with a reason instead of crashing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "core/base/quoted_value.h"
#include "core/symbols/stack_interner.h"
#include "export/pprof/gzip_codec.h"
#include "export/pprof/pprof_reader.h"
#include "export/views/pprof_writer.h"
#include "fixture_profile.h"

namespace hucprof {
namespace {

using ::testing::HasSubstr;

class PprofTest : public testing::Test {
 protected:
  StackPtr stack(std::initializer_list<ProfileFrame> frames) {
    ProfileStack s;
    for (const auto& f : frames) s.push_back(interner_.frame(f));
    return interner_.stack(s);
  }

  // fixture_profile.h: two sampled stacks (one through a module), one probed call site with a
  // sub-check on top.
  StackProfile both_modes() { return fixture_profile(interner_); }

  StackInterner interner_;
};

std::vector<std::string> sample_type_names(const pprof::Profile& p) {
  std::vector<std::string> out;
  for (const auto& t : p.sample_type()) {
    out.push_back(p.string_table(t.type()) + "/" + p.string_table(t.unit()));
  }
  return out;
}

TEST_F(PprofTest, SampleTypesFollowTheModes) {
  StackProfile p = both_modes();
  EXPECT_THAT(sample_type_names(to_pprof(p)),
              testing::ElementsAre("samples/count", "cpu/nanoseconds", "calls/count", "bytes/bytes",
                                   "latency/nanoseconds", "subchecks/count"));
  p.probes = p.latency = false;
  const pprof::Profile sampling = to_pprof(p);
  EXPECT_THAT(sample_type_names(sampling),
              testing::ElementsAre("samples/count", "cpu/nanoseconds"));
  EXPECT_EQ(sampling.string_table(sampling.default_sample_type()), "cpu");
  // speedscope reads default_sample_type as an index into sample_type (jlfwong/speedscope,
  // src/import/pprof.ts): both must point at cpu/nanoseconds, with and without probes.
  EXPECT_EQ(sampling.default_sample_type(), 1);
  EXPECT_EQ(to_pprof(both_modes()).default_sample_type(), 1);
  EXPECT_EQ(sampling.period(), 10101010);
  // 2 sampled stacks and the rest of busy CPU (kernel, user); no probe samples without probes.
  EXPECT_EQ(sampling.sample_size(), 4) << "probe samples are not carried without probes";
  EXPECT_EQ(sampling.sample(0).value(1), 7 * 10101010) << "cpu = samples x period";
  p.sampling = false;
  p.probes = true;
  const pprof::Profile probes = to_pprof(p);
  EXPECT_THAT(sample_type_names(probes),
              testing::ElementsAre("calls/count", "bytes/bytes", "subchecks/count"));
  EXPECT_EQ(probes.string_table(probes.default_sample_type()), "calls");
  EXPECT_EQ(probes.sample_size(), 2) << "no CPU denominator without sampling";
}

// The names of a sample's frames, leaf first, and its labels as key=value.
std::pair<std::vector<std::string>, std::set<std::string>> frames_and_labels(
    const pprof::Profile& p, const pprof::Sample& s) {
  std::map<uint64_t, std::string> function_names, location_names;
  for (const auto& f : p.function()) function_names[f.id()] = p.string_table(f.name());
  for (const auto& l : p.location())
    location_names[l.id()] = function_names[l.line(0).function_id()];
  std::vector<std::string> frames;
  for (uint64_t id : s.location_id()) frames.push_back(location_names[id]);
  std::set<std::string> labels;
  for (const auto& label : s.label()) {
    labels.insert(p.string_table(label.key()) + "=" + p.string_table(label.str()));
  }
  return {frames, labels};
}

TEST_F(PprofTest, TheRestOfBusyCpuIsInTheProfileSoEveryViewDividesByIt) {
  StackProfile p = both_modes();  // kernel 1000, user 400, idle 8000; 9 samples in the checks
  p.excluded_samples = {{"interrupt", 4}};
  const pprof::Profile out = to_pprof(p);
  using Frames = std::vector<std::string>;
  std::map<Frames, std::pair<int64_t, std::set<std::string>>> rest;
  int64_t total = 0;
  for (const auto& s : out.sample()) {
    total += s.value(0);
    auto [frames, labels] = frames_and_labels(out, s);
    if (frames.back() == "[not in the checks]") rest[frames] = {s.value(0), labels};
  }
  EXPECT_EQ(total, 1400) << "busy samples, kernel + user: pprof's percentages are of busy CPU";
  const auto kernel = rest.at({"[other kernel CPU]", "[not in the checks]"});
  EXPECT_EQ(kernel.first, 1000 - 9 - 4);
  EXPECT_EQ(kernel.second, (std::set<std::string>{"context=kernel"}));
  const auto interrupts =
      rest.at({"[interrupt in a check]", "[other kernel CPU]", "[not in the checks]"});
  EXPECT_EQ(interrupts.first, 4);
  EXPECT_EQ(interrupts.second, (std::set<std::string>{"context=kernel", "excluded=interrupt"}));
  EXPECT_EQ(rest.at({"[user CPU]", "[not in the checks]"}).first, 400);
  for (const auto& l : out.location()) {
    if (l.mapping_id() == 0) {
      EXPECT_EQ(l.address(), 0u) << "made-up frames have no address";
    }
  }
  std::vector<std::string> comments;
  for (int64_t c : out.comment()) comments.push_back(out.string_table(c));
  EXPECT_THAT(comments, testing::Contains("hucprof.sampled_cpu_samples.idle=8000"));
  EXPECT_THAT(comments, testing::Not(testing::Contains(HasSubstr("samples.kernel"))))
      << "the busy contexts are samples now, which merge and diff with the profile";
}

TEST_F(PprofTest, ReaderTakesTheDenominatorFromTheRestSamplesThenFromComments) {
  StackProfile p = both_modes();
  p.excluded_samples = {{"interrupt", 4}};
  auto read = read_pprof(encode_pprof_gzip(p));
  ASSERT_TRUE(read.ok()) << read.error().text;
  const StackProfile& back = read.value();
  EXPECT_EQ(back.sampled_by_context, p.sampled_by_context);
  EXPECT_EQ(back.excluded_samples, p.excluded_samples);
  EXPECT_EQ(back.samples.size(), 4u) << "the rest is no stack of the checks";
  // Two profiles merged sample by sample (as pprof merges them): the denominators add up.
  pprof::Profile merged = to_pprof(p);
  for (auto& s : *merged.mutable_sample()) {
    for (int v = 0; v < s.value_size(); ++v) s.set_value(v, 2 * s.value(v));
  }
  auto twice = read_pprof(merged.SerializeAsString());
  ASSERT_TRUE(twice.ok());
  EXPECT_EQ(twice.value().sampled_by_context.at("kernel"), 2000u);
  EXPECT_EQ(twice.value().sampled_by_context.at("user"), 800u);
  // A file from before the rest was written as samples: the comments still count.
  pprof::Profile old = to_pprof(both_modes());
  auto* samples = old.mutable_sample();
  samples->erase(std::remove_if(samples->begin(), samples->end(),
                                [&](const pprof::Sample& s) {
                                  return frames_and_labels(old, s).first.back() ==
                                         "[not in the checks]";
                                }),
                 samples->end());
  for (const char* comment :
       {"hucprof.sampled_cpu_samples.kernel=1000", "hucprof.sampled_cpu_samples.user=400"}) {
    old.add_string_table(comment);
    old.add_comment(old.string_table_size() - 1);
  }
  auto older = read_pprof(old.SerializeAsString());
  ASSERT_TRUE(older.ok());
  EXPECT_EQ(older.value().sampled_by_context, p.sampled_by_context);
}

// The step of the checks is the `step` label, as on /metrics; a profile written before the
// rename (its key `check`) reads back the same.
TEST_F(PprofTest, StepLabelIsWrittenAndTheOlderCheckKeyStillReads) {
  const StackProfile p = both_modes();
  pprof::Profile out = to_pprof(p);
  std::set<std::string> keys;
  for (const auto& s : out.sample()) {
    for (const auto& label : s.label()) keys.insert(out.string_table(label.key()));
  }
  EXPECT_TRUE(keys.contains("step"));
  EXPECT_FALSE(keys.contains("check"));
  std::multiset<std::string> steps;
  for (const ProfileSample& s : p.samples) steps.insert(s.labels->check);
  ASSERT_FALSE(steps.contains("") && steps.size() == 1) << "the fixture names its steps";
  for (auto& str : *out.mutable_string_table()) {
    if (str == "step") str = "check";
  }
  auto older = read_pprof(out.SerializeAsString());
  ASSERT_TRUE(older.ok()) << older.error().text;
  std::multiset<std::string> read_steps;
  for (const ProfileSample& s : older.value().samples) read_steps.insert(s.labels->check);
  EXPECT_EQ(read_steps, steps);
}

// `pprof -comments` says what the shares are of, over which span, and how sure they are: the
// report's headline for this profile.
TEST_F(PprofTest, CommentsCarryTheHeadlineWithItsIntervalAndWindow) {
  const pprof::Profile out = to_pprof(both_modes());
  std::vector<std::string> comments;
  for (int64_t c : out.comment()) comments.push_back(out.string_table(c));
  EXPECT_THAT(comments, testing::Contains(testing::AllOf(
                            testing::StartsWith("hucprof.headline="),
                            HasSubstr("9 of 1,400 busy samples (kernel + user, idle left out) over "
                                      "the profile's"),
                            HasSubstr("95 % interval"))));
  // And each call site's share and its steps', with their samples and the larger side of their
  // 95 % intervals, Wilson's at design effect 1.5 computed with Python from the textbook formula:
  // 7 of 1,400: 0.208-1.198 %, ±0.70; 7 of 7: 54.85-100 %, ±46; 2 of 2: 25.77-100 %, ±75.
  EXPECT_THAT(comments, testing::Contains("hucprof.callsite.udp_recvmsg=0.50 % ±0.70 (7) of busy "
                                          "CPU via recvfrom; steps object 100% ±46 (7)"));
  EXPECT_THAT(comments, testing::Contains("hucprof.callsite.netlink_recvmsg=0.14 % ±0.53 (2) of "
                                          "busy CPU via recvmsg; steps vmalloc 100% ±75 (2)"));
  auto back = read_pprof(encode_pprof_gzip(both_modes()));
  ASSERT_TRUE(back.ok()) << back.error().text;
}

// pprof's own consistency rules (profile.CheckValid and the decoder): string 0 is "", ids are
// non-zero and unique, every reference resolves, one value per sample type.
TEST_F(PprofTest, WrittenProfileIsConsistent) {
  const pprof::Profile p = to_pprof(both_modes());
  ASSERT_GT(p.string_table_size(), 0);
  EXPECT_EQ(p.string_table(0), "");
  std::set<uint64_t> mappings, functions, locations;
  for (const auto& m : p.mapping()) EXPECT_TRUE(m.id() && mappings.insert(m.id()).second);
  for (const auto& f : p.function()) {
    EXPECT_TRUE(f.id() && functions.insert(f.id()).second);
    EXPECT_LT(f.name(), p.string_table_size());
  }
  for (const auto& l : p.location()) {
    EXPECT_TRUE(l.id() && locations.insert(l.id()).second);
    // 0: no mapping, which profile.proto allows (hucprof's made-up frames).
    EXPECT_TRUE(l.mapping_id() == 0 || mappings.contains(l.mapping_id()));
    for (const auto& line : l.line()) EXPECT_TRUE(functions.contains(line.function_id()));
  }
  for (const auto& s : p.sample()) {
    EXPECT_EQ(s.value_size(), p.sample_type_size());
    for (uint64_t id : s.location_id()) EXPECT_TRUE(locations.contains(id));
    for (const auto& label : s.label()) {
      EXPECT_LT(label.key(), p.string_table_size());
      EXPECT_LT(label.str(), p.string_table_size());
    }
  }
}

TEST_F(PprofTest, NoKernelAddressOnlyOffsetsFromStext) {
  const pprof::Profile p = to_pprof(both_modes());
  std::set<uint64_t> addresses;
  for (const auto& l : p.location()) addresses.insert(l.address());
  // __check_object_size+0x25 and udp_recvmsg+0x1a4 by their _stext offsets; the module frame
  // and the sub-check (known by name only) at 0.
  EXPECT_EQ(addresses,
            (std::set<uint64_t>{0, 0x6c9275, 0xb1d3a4, 0x1000012, 0x300088, 0x216ba3, 0xa002f0}));
  for (const auto& s : p.string_table()) EXPECT_THAT(s, testing::Not(HasSubstr("ffffffff")));
}

TEST_F(PprofTest, ReadsBackWhatItWrote) {
  StackProfile original = both_modes();
  original.target = "`make -j2` and its children";
  auto read = read_pprof(encode_pprof_gzip(original));
  ASSERT_TRUE(read.ok()) << read.error().text;
  const StackProfile& back = read.value();
  EXPECT_TRUE(back.sampling && back.probes && back.latency);
  EXPECT_EQ(back.sample_period_ns, 10101010u);
  EXPECT_EQ(back.sampled_by_context, original.sampled_by_context);
  EXPECT_EQ(back.kernel, "6.1.0-18-amd64");
  EXPECT_EQ(back.hucprof_version, "fixture");
  EXPECT_EQ(back.hardened_usercopy, "on (default)");
  EXPECT_EQ(back.target, "`make -j2` and its children");
  EXPECT_EQ(back.time_unix_ns, original.time_unix_ns);
  EXPECT_EQ(back.duration_ns, original.duration_ns);
  ASSERT_EQ(back.samples.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const ProfileSample& a = original.samples[i];
    const ProfileSample& b = back.samples[i];
    EXPECT_EQ(*a.labels, *b.labels) << i;
    EXPECT_EQ(a.values, b.values) << i;
    ASSERT_EQ(a.stack->size(), b.stack->size()) << i;
    for (size_t f = 0; f < a.stack->size(); ++f) {
      EXPECT_EQ((*a.stack)[f]->function, (*b.stack)[f]->function);
      EXPECT_EQ((*a.stack)[f]->module, (*b.stack)[f]->module);
      EXPECT_EQ((*a.stack)[f]->text_offset, (*b.stack)[f]->text_offset);
    }
  }
}

std::string encode_gzip(std::string_view bytes) {
  return gzip_compress(bytes, GzipLevel::Fastest).value_or("");
}

std::string error_of(std::string_view bytes) {
  auto read = read_pprof(bytes);
  if (read.ok()) return "(read fine)";
  return read.error().text;
}

TEST_F(PprofTest, BrokenFilesAreRefusedWithTheReason) {
  const std::string good = encode_pprof_gzip(both_modes());
  EXPECT_EQ(error_of(""), "empty file");
  EXPECT_THAT(error_of(good.substr(0, good.size() / 2)), HasSubstr("truncated gzip data"));
  std::string flipped = good;
  for (size_t i = 20; i < 40; ++i) flipped[i] = static_cast<char>(flipped[i] ^ 0x5a);
  EXPECT_THAT(error_of(flipped), HasSubstr("gzip"));
  EXPECT_THAT(error_of(*gzip_compress("hello, this is not a profile", GzipLevel::Fastest)),
              HasSubstr("pprof"));
  EXPECT_THAT(error_of("\x0a\x02\x08"), HasSubstr("does not parse"));
}

TEST_F(PprofTest, DanglingReferencesAreRefused) {
  pprof::Profile p = to_pprof(both_modes());
  p.mutable_location(0)->mutable_line(0)->set_function_id(999);
  EXPECT_THAT(error_of(p.SerializeAsString()),
              HasSubstr("names function 999, which does not exist"));

  p = to_pprof(both_modes());
  p.mutable_sample(0)->add_location_id(777);
  EXPECT_THAT(error_of(p.SerializeAsString()), HasSubstr("names location 777"));

  p = to_pprof(both_modes());
  p.mutable_sample(1)->add_value(5);
  EXPECT_THAT(error_of(p.SerializeAsString()), HasSubstr("values for 6 sample types"));

  p = to_pprof(both_modes());
  p.mutable_function(0)->set_name(100000);
  EXPECT_THAT(error_of(p.SerializeAsString()), HasSubstr("string 100000"));

  p = to_pprof(both_modes());
  p.mutable_sample(0)->set_value(0, -4);
  EXPECT_THAT(error_of(p.SerializeAsString()), HasSubstr("negative"));

  p = to_pprof(both_modes());
  p.set_string_table(0, "x");
  EXPECT_THAT(error_of(p.SerializeAsString()), HasSubstr("string_table[0]"));
}

TEST_F(PprofTest, SeveralGzipMembersReadAsOneAndJunkAfterIsRefused) {
  const std::string plain = to_pprof(both_modes()).SerializeAsString();
  const size_t half = plain.size() / 2;
  // What `cat a.gz b.gz` makes: gzip -d and Go's reader take it; it was refused before.
  const std::string two = *gzip_compress(plain.substr(0, half), GzipLevel::Fastest) +
                          *gzip_compress(plain.substr(half), GzipLevel::Default);
  auto read = read_pprof(two);
  ASSERT_TRUE(read.ok()) << read.error().text;
  EXPECT_EQ(read.value().samples.size(), 4u);
  const std::string one = *gzip_compress(plain, GzipLevel::Fastest);
  // Junk after the data was read as if absent before.
  EXPECT_EQ(error_of(one + "junk"),
            "4 bytes after the end of the gzip data that are not gzip data");
  EXPECT_THAT(error_of(one + std::string(8, '\0')), HasSubstr("8 bytes after the end"));
  EXPECT_THAT(error_of(two.substr(0, two.size() - 3)), HasSubstr("truncated gzip data"));
}

TEST_F(PprofTest, SamplesOfTheSameStackAndLabelsAreMerged) {
  pprof::Profile p = to_pprof(both_modes());
  // The profile also holds the rest of busy CPU as samples; the reader keeps only the checks'.
  const size_t before = both_modes().samples.size();
  *p.add_sample() = p.sample(0);
  *p.add_sample() = p.sample(0);
  auto read = read_pprof(p.SerializeAsString());
  ASSERT_TRUE(read.ok()) << read.error().text;
  const StackProfile& back = read.value();
  ASSERT_EQ(back.samples.size(), before);
  const StackProfile original = both_modes();
  EXPECT_EQ(back.samples[0].values[kSamples], 3 * original.samples[0].values[kSamples]);
  EXPECT_EQ(back.samples[1].values, original.samples[1].values);
}

// Each bound of ProfileReadLimits refuses a file past it with the reason; a file that fits reads.
TEST_F(PprofTest, EveryLimitRefusesWithTheReason) {
  const std::string good = to_pprof(both_modes()).SerializeAsString();
  auto limited = [&](auto set) {
    ProfileReadLimits limits;
    set(limits);
    auto read = read_pprof(good, limits);
    return read.ok() ? std::string("(read fine)") : read.error().text;
  };
  EXPECT_EQ(limited([](ProfileReadLimits&) {}), "(read fine)");
  EXPECT_THAT(limited([](ProfileReadLimits& l) { l.max_name_bytes = 10; }),
              HasSubstr("bytes long, more than the 10 hucprof reads"));
  const int samples = to_pprof(both_modes()).sample_size();  // the rest of busy CPU included
  ASSERT_GT(samples, 3);
  EXPECT_THAT(limited([](ProfileReadLimits& l) { l.max_samples = 3; }),
              HasSubstr("it has at least 4 samples, more than the 3"));
  EXPECT_THAT(limited([](ProfileReadLimits& l) { l.max_locations = 2; }),
              HasSubstr("locations, more than the 2"));
  EXPECT_THAT(limited([](ProfileReadLimits& l) { l.max_functions = 2; }),
              HasSubstr("functions, more than the 2"));
  EXPECT_THAT(limited([](ProfileReadLimits& l) { l.max_mappings = 1; }),
              HasSubstr("mappings, more than the 1"));
  EXPECT_THAT(limited([](ProfileReadLimits& l) { l.max_stack_frames = 2; }),
              HasSubstr("a stack of more than 2 frames"));
  EXPECT_THAT(limited([](ProfileReadLimits& l) { l.max_stacks = 1; }),
              HasSubstr("distinct stacks, more than the 1"));
  EXPECT_THAT(limited([](ProfileReadLimits& l) { l.max_total_frames = 4; }),
              HasSubstr("frames in its distinct stacks"));
  EXPECT_THAT(limited([](ProfileReadLimits& l) { l.max_total_name_bytes = 40; }),
              HasSubstr("bytes of function names"));
  EXPECT_THAT(limited([](ProfileReadLimits& l) { l.max_label_sets = 1; }),
              HasSubstr("distinct label sets, more than the 1"));
  EXPECT_THAT(limited([](ProfileReadLimits& l) { l.max_strings = 5; }),
              HasSubstr("more than 5 strings"));
  EXPECT_THAT(limited([](ProfileReadLimits& l) { l.max_string_bytes = 20; }),
              HasSubstr("more than 20 bytes of strings"));
  EXPECT_THAT(limited([](ProfileReadLimits& l) { l.max_inflated_bytes = 100; }),
              HasSubstr("larger than 100 bytes"));
  EXPECT_THAT(limited([](ProfileReadLimits& l) { l.max_message_bytes = 10; }),
              HasSubstr("bytes long, more than the 10 hucprof reads"));
  EXPECT_THAT(limited([](ProfileReadLimits& l) { l.max_sample_types = 2; }),
              HasSubstr("sample types, more than the 2"));
  EXPECT_THAT(limited([](ProfileReadLimits& l) { l.max_comments = 1; }),
              HasSubstr("comments, more than the 1"));
  EXPECT_THAT(limited([](ProfileReadLimits& l) { l.max_lines = 2; }),
              HasSubstr("lines in its locations, more than the 2"));
  ProfileReadLimits small;
  small.max_inflated_bytes = 100;
  auto read = read_pprof(encode_pprof_gzip(both_modes()), small);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().text, "inflates to more than 100 bytes");
}

TEST_F(PprofTest, AnUnusedLongStringIsSkippedAUsedOneRefused) {
  pprof::Profile p = to_pprof(both_modes());
  p.add_string_table(std::string(5000, 'b'));  // a build id, say: never a name here
  auto read = read_pprof(p.SerializeAsString());
  EXPECT_TRUE(read.ok());
  p.mutable_function(0)->set_name(p.string_table_size() - 1);
  EXPECT_THAT(error_of(p.SerializeAsString()),
              HasSubstr("a function name is 5000 bytes long, more than the 1024 hucprof reads"));
}

// D7 of issue 37: a field pprof's schema does not have was copied, then parsed, then kept by
// protobuf (~2.5 times its size: 512 MB for one of 200 MiB). Such fields, and known ones of
// another wire type, are now skipped as they stream by; the file reads as without them.
TEST_F(PprofTest, FieldsOutsideTheSchemaAreSkippedUnread) {
  const std::string good = to_pprof(both_modes()).SerializeAsString();
  auto length_delimited = [](uint32_t field, size_t size) {
    std::string out;
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.WriteTag(field << 3 | 2);
    coded.WriteVarint64(size);
    coded.WriteString(std::string(size, 'z'));
    return out;
  };
  // 4 MiB in an unknown field, and a time_nanos (field 9, a varint) written as bytes.
  const std::string odd = length_delimited(99, 4 << 20) + good + length_delimited(9, 100);
  auto read = read_pprof(odd);
  ASSERT_TRUE(read.ok()) << read.error().text;
  auto plain = read_pprof(good);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(read.value().samples.size(), plain.value().samples.size());
  EXPECT_EQ(read.value().time_unix_ns, plain.value().time_unix_ns);
}

// A message of the profile larger than any hucprof reads is refused before it is read, so what
// it holds (a million location ids, an unknown field) never reaches memory.
TEST_F(PprofTest, AnOversizedMessageIsRefusedUnread) {
  pprof::Profile p = to_pprof(both_modes());
  for (int i = 0; i < 70'000; ++i) p.mutable_sample(0)->add_location_id(1);
  const std::string error = error_of(p.SerializeAsString());
  EXPECT_THAT(error, HasSubstr("a sample is "));
  EXPECT_THAT(error, HasSubstr(" bytes long, more than the 65536 hucprof reads"));
}

// D8 of issue 37: a string that is not UTF-8 made libprotobuf print its own
// "[libprotobuf ERROR ...]" line before hucprof's. The reader says it, in one line.
TEST_F(PprofTest, AStringThatIsNotUtf8IsRefusedByName) {
  pprof::Profile p = to_pprof(both_modes());
  p.add_string_table("bad\xff\x1b");
  const std::string error = error_of(p.SerializeAsString());
  EXPECT_THAT(error, HasSubstr("string " + std::to_string(p.string_table_size() - 1) +
                               " (\"bad\\xff\\x1b\") is not UTF-8"));
}

// D9 of issue 37: three samples of INT64_MAX printed "-186330746355980928.0 s" (a sum that
// overflowed). Every sum the report makes is part of a total that is now checked.
TEST_F(PprofTest, SumsBeyondAnInt64AreRefused) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  pprof::Profile p = to_pprof(both_modes());
  for (auto& sample : *p.mutable_sample()) sample.set_value(0, 1);
  p.mutable_sample(0)->set_value(0, kMax / 2);
  auto half = read_pprof(p.SerializeAsString());
  ASSERT_TRUE(half.ok()) << half.error().text;
  for (int i = 0; i < 2; ++i) *p.add_sample() = p.sample(0);
  EXPECT_THAT(error_of(p.SerializeAsString()),
              HasSubstr("its sample values of type \"samples\" add up to more than "
                        "9223372036854775807"));
  p = to_pprof(both_modes());
  p.set_duration_nanos(-1);
  EXPECT_THAT(error_of(p.SerializeAsString()), HasSubstr("duration is negative"));
}

// D9 as the campaign sent it: three samples of exactly INT64_MAX, in each sample type. Every
// value the report sums is refused before the sum is made (under UBSan a wrapped sum fails the
// test); the CPU time is not summed, it is the count times the period.
TEST_F(PprofTest, ThreeSamplesOfInt64MaxAreRefusedInEveryValueSummed) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const pprof::Profile base = to_pprof(both_modes());
  ASSERT_GE(base.sample_type_size(), 2);
  for (int value = 0; value < base.sample_type_size(); ++value) {
    const std::string type = base.string_table(base.sample_type(value).type());
    SCOPED_TRACE(type);
    pprof::Profile p = base;
    pprof::Sample sample = p.sample(0);
    for (int v = 0; v < sample.value_size(); ++v) sample.set_value(v, 1);
    sample.set_value(value, kMax);
    for (int i = 0; i < 3; ++i) *p.add_sample() = sample;
    const std::string error = error_of(encode_gzip(p.SerializeAsString()));
    if (type == "cpu") {
      EXPECT_EQ(error, "(read fine)");
    } else {
      EXPECT_THAT(error, HasSubstr("its sample values of type \"" + type +
                                   "\" add up to more than 9223372036854775807 (an int64)"));
    }
  }
}

// D7: an unknown field cost ~2.5 times its size (copied, parsed, kept). In a gzipped file it is
// skipped as it inflates, so the file is read as if it were not there; past the inflated bound
// it is refused there, whatever the field claims.
TEST_F(PprofTest, AnUnknownFieldInAGzippedFileIsSkippedAsItInflatesOrRefusedAtTheBound) {
  const std::string good = to_pprof(both_modes()).SerializeAsString();
  auto with_unknown_field = [&](size_t size) {
    std::string out;
    google::protobuf::io::StringOutputStream stream(&out);
    {
      google::protobuf::io::CodedOutputStream coded(&stream);
      coded.WriteString(good);
      coded.WriteTag(99 << 3 | 2);
      coded.WriteVarint64(size);
    }
    out.resize(out.size() + size, '\0');
    return encode_gzip(out);
  };
  ProfileReadLimits limits;
  limits.max_inflated_bytes = 8 << 20;
  auto skipped = read_pprof(with_unknown_field(6 << 20), limits);
  ASSERT_TRUE(skipped.ok()) << skipped.error().text;
  auto plain = read_pprof(good, limits);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(skipped.value().samples.size(), plain.value().samples.size());
  auto bomb = read_pprof(with_unknown_field(64 << 20), limits);
  ASSERT_FALSE(bomb.ok());
  EXPECT_EQ(bomb.error().text, "inflates to more than 8 MiB");
  // A field claiming more than the file holds ends with the data, not past it.
  std::string claims = good;
  claims += static_cast<char>(99 << 3 | 2);
  claims += "\xff\xff\xff\xff\x0f";
  EXPECT_FALSE(read_pprof(encode_gzip(claims), limits).ok());
}

// What the daemon writes, `report` reads: a name from DWARF or a cgroup of any length and bytes
// is written printable and bounded, so the profile never holds a string the reader refuses.
TEST_F(PprofTest, NamesFromOutsideAreWrittenPrintableAndBounded) {
  StackProfile p = both_modes();
  const std::string long_name = "inlined_" + std::string(5000, 'x') + "\x1b]0;t\x07";
  ProfileStack frames{interner_.frame({long_name, "mod\xff", 0, 0}),
                      interner_.frame({"udp_recvmsg", "", 0x1a4, 0xb1d3a4})};
  ProfileSample s{interner_.stack(frames),
                  interner_.with_workload(make_labels({"udp_recvmsg", "recvfrom", "object", ""}),
                                          "pod\nname\x1b[2J", "pod"),
                  {}};
  s.values[kSamples] = 1;
  p.samples.push_back(s);
  const pprof::Profile written = to_pprof(p);
  for (const std::string& text : written.string_table()) {
    EXPECT_LE(text.size(), kMaxNameBytes);
    for (unsigned char c : text) EXPECT_GE(c, 0x20) << printable_name(text);
  }
  auto read = read_pprof(written.SerializeAsString());
  ASSERT_TRUE(read.ok()) << read.error().text;
}

TEST_F(PprofTest, RefusalsStayOnOneLineWhateverTheFileHolds) {
  // Found by fuzz_profile_reader: a comment's newline came back verbatim in the error, which
  // `hucprof report` prints as one line after the file name.
  pprof::Profile p = to_pprof(both_modes());
  p.add_string_table("hucprof.sampled_cpu_samples.idle=\n\x04");
  p.add_comment(p.string_table_size() - 1);
  const std::string error = error_of(p.SerializeAsString());
  EXPECT_THAT(error, HasSubstr("is not a count"));
  EXPECT_THAT(error, HasSubstr("\\x0a\\x04"));
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

TEST_F(PprofTest, ForeignProfileWithoutOurSampleTypesIsNamedAsSuch) {
  pprof::Profile p;
  p.add_string_table("");
  p.add_string_table("alloc_space");
  p.add_string_table("bytes");
  auto* t = p.add_sample_type();
  t->set_type(1);
  t->set_unit(2);
  EXPECT_THAT(error_of(p.SerializeAsString()), HasSubstr("no sample type hucprof knows"));
}

TEST_F(PprofTest, EncodingStepsAsideWhereAsked) {
  StackProfile p = both_modes();
  const ProfileSample one = p.samples[0];
  p.samples.assign(1000, one);
  int pauses = 0;
  const std::string paused = encode_pprof_gzip(p, [&pauses] { ++pauses; });
  EXPECT_GE(pauses, 1000 / 256 + 2) << "every 256 samples, before serializing, per gzip chunk";
  EXPECT_EQ(paused, encode_pprof_gzip(p)) << "pausing changes nothing in the output";
}

TEST(GzipCodec, RoundTripAndLimits) {
  const std::string text(100000, 'x');
  const std::string packed = *gzip_compress(text, GzipLevel::Fastest);
  EXPECT_TRUE(looks_gzipped(packed));
  EXPECT_LT(packed.size(), 1000u);
  const Result<std::string> ok = gzip_decompress(packed, 1 << 20);
  ASSERT_TRUE(ok.ok()) << ok.error().text;
  EXPECT_EQ(ok.value(), text);
  const Result<std::string> bomb = gzip_decompress(packed, 50000);
  ASSERT_FALSE(bomb.ok());
  EXPECT_EQ(bomb.error().text, "inflates to more than 50000 bytes");
  const Result<std::string> empty = gzip_decompress(*gzip_compress("", GzipLevel::Default), 10);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty.value(), "");
}

}  // namespace
}  // namespace hucprof
