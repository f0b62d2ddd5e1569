// What a compressed file can inflate to, before anything inflates it: zstd's bound from its block
// headers (RFC 8878), held against files the zstd tool wrote and against frames written by hand.
#include "core/files/compressed_size.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

namespace hucprof {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Little-endian, `width` bytes.
std::string le(uint64_t value, size_t width) {
  std::string out;
  for (size_t i = 0; i < width; ++i) out += static_cast<char>(value >> (8 * i));
  return out;
}

std::string block(uint32_t type, uint32_t size, bool last) {
  return le(size << 3 | type << 1 | (last ? 1 : 0), 3);
}

const std::string kMagic("\x28\xb5\x2f\xfd", 4);

TEST(CompressedSize, NamesTheFormatsLibdwflWouldInflate) {
  EXPECT_EQ(compression_of("\x7f"
                           "ELF\x02\x01"),
            "");
  EXPECT_EQ(compression_of("\x1f\x8b\x08"), "gzip");
  EXPECT_EQ(compression_of(std::string("\xfd"
                                       "7zXZ\0",
                                       6)),
            "xz");
  EXPECT_EQ(compression_of("BZh91AY"), "bzip2");
  EXPECT_EQ(compression_of(kMagic), "zstd");
  EXPECT_EQ(compression_of(""), "");
}

TEST(CompressedSize, TheBoundOfWhatTheZstdToolWroteHoldsWhatItInflatesTo) {
  if (::system("zstd --version >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no zstd tool to write the reference files";
  }
  const fs::path dir = fs::temp_directory_path() / ("huc-zstd-" + std::to_string(getpid()));
  fs::create_directories(dir);
  // 3 MiB: half random (compressed blocks that do not shrink: stored raw), half text.
  std::mt19937 random(7);
  std::string data;
  while (data.size() < (3u << 19)) data += static_cast<char>(random());
  while (data.size() < (3u << 20)) data += "copy_to_iter include/linux/uio.h:178\n";
  std::ofstream(dir / "in", std::ios::binary) << data;
  for (const char* options : {"-1", "-19", "-1 --no-content-size", "-3 --no-check"}) {
    ASSERT_EQ(::system(("zstd -q -f " + std::string(options) + " " + (dir / "in").string() +
                        " -o " + (dir / "in.zst").string())
                           .c_str()),
              0);
    const std::string compressed = read(dir / "in.zst");
    const auto bound = zstd_inflated_bound(compressed);
    ASSERT_TRUE(bound) << options;
    EXPECT_GE(*bound, data.size()) << options;
    // At most one block's worth more per block: 128 KiB blocks, 3 MiB in 24 of them.
    EXPECT_LE(*bound, data.size() + 24 * (128u << 10)) << options;
    // Two frames one after the other inflate to both.
    EXPECT_EQ(zstd_inflated_bound(compressed + compressed), 2 * *bound) << options;
  }
  fs::remove_all(dir);
}

TEST(CompressedSize, RawAndRleBlocksCountWhatTheySayWhateverTheFrameClaims) {
  // Single segment, a 1-byte content size of 16: the claim is not what counts.
  std::string frame = kMagic + '\x20' + '\x10';
  frame += block(1, (1u << 21) - 1, false) + "z";  // RLE: 2 MiB - 1 of 'z' from one byte
  frame += block(0, 3, false) + "abc";             // raw
  frame += block(2, 5, true) + "12345";            // compressed: up to 128 KiB
  EXPECT_EQ(zstd_inflated_bound(frame), (1u << 21) - 1 + 3 + (128u << 10));
  // A skippable frame holds nothing that inflates.
  const std::string skippable = le(0x184D2A53, 4) + le(4, 4) + "junk";
  EXPECT_EQ(zstd_inflated_bound(skippable + frame), zstd_inflated_bound(frame));
}

TEST(CompressedSize, WhatDoesNotParseHasNoBound) {
  std::string frame = kMagic + '\x20' + '\x10' + block(0, 10, true) + "short";
  EXPECT_EQ(zstd_inflated_bound(frame), std::nullopt) << "a block past the end";
  EXPECT_EQ(zstd_inflated_bound(kMagic + '\x28'), std::nullopt) << "the reserved bit";
  EXPECT_EQ(zstd_inflated_bound(kMagic + '\x20' + '\x10' + block(3, 1, true) + "x"), std::nullopt)
      << "the reserved block type";
  EXPECT_EQ(zstd_inflated_bound(""), std::nullopt);
  EXPECT_EQ(zstd_inflated_bound("\x7f"
                                "ELF"),
            std::nullopt);
  EXPECT_EQ(zstd_inflated_bound(le(0x184D2A50, 4) + le(0, 4)), std::nullopt) << "no frame";
}

}  // namespace
}  // namespace hucprof
