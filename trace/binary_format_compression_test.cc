// Compressed chunks: what they read back as, how damage and crafted headers are refused,
// and the bound on what a whole file may decompress to.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "base/temp_dir.h"
#include "trace/binary_format.h"
#include "trace/binary_format_inflater.h"
#include "trace/binary_format_test_support.h"
#include "trace/decompression_limit.h"

namespace cw {
namespace {

namespace bf = binary_format;
using namespace bf::testing;

TEST_CASE("compressed and uncompressed traces read back the same; none writes format 1.2") {
  TempDir dir("cw-tracer-test");
  // 100 events per chunk over 40 rounds: more compressed chunks than the reader looks
  // ahead, so decompressed chunks are taken from the workers in order.
  Trace t = write_streamed(dir.file("z.cwt"), 100, 40, 500, TraceCompression::Zstd);
  write_streamed(dir.file("p.cwt"), 100, 40, 500, TraceCompression::None);
  const std::string z = slurp(dir.file("z.cwt")), p = slurp(dir.file("p.cwt"));
  std::vector<ChunkInfo> zc = walk_chunks(z), pc = walk_chunks(p);
  auto compressed = [](const ChunkInfo& c) { return (c.type & bf::kCompressedFlag) != 0; };
  CHECK(std::count_if(zc.begin(), zc.end(), compressed) >= 200);
  CHECK(std::none_of(pc.begin(), pc.end(), compressed));
  CHECK(z.size() * 2 < p.size());
  uint32_t zv[2], pv[2];
  std::memcpy(zv, z.data() + 8, 8);
  std::memcpy(pv, p.data() + 8, 8);
  CHECK((zv[0] == 3 && zv[1] == 0));
  CHECK((pv[0] == 1 && pv[1] == 2));
  for (const std::string* bytes : {&z, &p}) {
    Trace back;
    ReadReport report = read_trace_bytes(*bytes, back, "x.cwt");
    CHECK(report.clean());
    CHECK(report.notes.empty());
    CHECK(report.events_read == 20000);
    CHECK(canonical(back) == canonical(t));
  }
  // Every level writes what reads back.
  for (int level : {1, 19}) {
    TraceWriterOptions options;
    options.level = level;
    write_trace(t, dir.file("l.cwt"), options);
    Trace back;
    CHECK(read_trace(dir.file("l.cwt"), back).clean());
    CHECK(canonical(back) == canonical(t));
  }
}

TEST_CASE("a read decompresses its chunks into reused buffers, not one buffer per chunk") {
  TempDir dir("cw-tracer-test");
  // Over 200 compressed chunks, most of them events chunks of about one size.
  write_streamed(dir.file("z.cwt"), 100, 40, 500, TraceCompression::Zstd);
  const std::string z = slurp(dir.file("z.cwt"));
  std::vector<ChunkInfo> chunks = walk_chunks(z);
  const auto compressed =
      static_cast<uint64_t>(std::count_if(chunks.begin(), chunks.end(), [](const ChunkInfo& c) {
        return (c.type & bf::kCompressedFlag) != 0;
      }));
  REQUIRE(compressed >= 200);
  const uint64_t before = bf::inflate_buffers_allocated();
  Trace back;
  CHECK(read_trace_bytes(z, back, "z.cwt").clean());
  const uint64_t allocated = bf::inflate_buffers_allocated() - before;
  INFO(allocated, " buffers for ", compressed, " compressed chunks");
  // The reader holds up to 16 chunks decompressed ahead of the one it reads; once read, a
  // chunk's buffer takes a later one (a larger chunk than any spare buffer takes a new one).
  CHECK(allocated >= 1);
  CHECK(allocated <= compressed / 4);
}

TEST_CASE("compression options parse from none, zstd and zstd=LEVEL") {
  TraceWriterOptions o;
  std::string why;
  CHECK(parse_trace_compression("none", o, &why));
  CHECK(o.compression == TraceCompression::None);
  CHECK(parse_trace_compression("zstd=9", o, &why));
  CHECK(o.compression == TraceCompression::Zstd);
  CHECK(o.level == 9);
  CHECK(parse_trace_compression("zstd", o, &why));
  CHECK(o.level == 3);
  for (const char* bad : {"zstd=0", "zstd=23", "zstd=", "zstd=3x", "gzip", "zstd=-1"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_trace_compression(bad, o, &why));
  }
  CHECK(why == "'zstd=-1': the zstd level is a whole number from 1 to 22");
  parse_trace_compression("gzip", o, &why);
  CHECK(why == "'gzip': expected none, zstd or zstd=LEVEL");
}

// A compressed events chunk of a streamed trace, and the file around it.
struct CompressedChunk {
  std::string bytes;
  Trace original;
  ChunkInfo chunk;
  CompressedChunk() {
    TempDir dir("cw-tracer-test");
    original = write_streamed(dir.file("c.cwt"), 50, 4, 200);
    bytes = slurp(dir.file("c.cwt"));
    std::vector<ChunkInfo> chunks = walk_chunks(bytes);
    auto it = std::find_if(chunks.begin(), chunks.end(), [](const ChunkInfo& c) {
      return c.type == (static_cast<uint32_t>(bf::ChunkType::Events) | bf::kCompressedFlag);
    });
    REQUIRE(it != chunks.end());
    chunk = *it;
  }
  uint64_t payload() const { return chunk.offset + bf::kChunkHeaderSize; }
  // Puts a zstd frame of `content` where the chunk's frame was (the compressed-chunk
  // header and the counts kept), with the chunk's size and checksum to match.
  void replace_frame(const std::string& content) {
    const uint64_t at = payload() + bf::kCompressedHeaderSize + 16;
    std::string frame(ZSTD_compressBound(content.size()), '\0');
    frame.resize(ZSTD_compress(frame.data(), frame.size(), content.data(), content.size(), 1));
    frame.resize((frame.size() + 7) & ~size_t{7}, '\0');
    bytes = bytes.substr(0, at) + frame + bytes.substr(chunk.end);
    const uint64_t payload_size = at + frame.size() - payload();
    std::memcpy(bytes.data() + chunk.offset + 8, &payload_size, 8);
    chunk.end = payload() + payload_size;
    fix_checksum();
  }
  uint64_t counted_values() const {
    uint64_t nvalues;
    std::memcpy(&nvalues, bytes.data() + payload() + bf::kCompressedHeaderSize + 8, 8);
    return nvalues;
  }
  // Recomputes the chunk's checksum, as a crafted file would have it.
  void fix_checksum() {
    uint64_t hash = XXH3_64bits(bytes.data() + payload(), chunk.end - payload());
    std::memcpy(bytes.data() + chunk.offset + 16, &hash, 8);
  }
  // Reads the damaged bytes: the one chunk is skipped with `reason`, every other event kept.
  void expect_only_chunk_lost(const std::string& reason) {
    Trace back;
    ReadReport report = read_trace_bytes(bytes, back, "c.cwt");
    REQUIRE(report.skipped.size() == 1);
    CHECK(report.skipped[0].offset == chunk.offset);
    CHECK(report.skipped[0].size == chunk.end - chunk.offset);
    CHECK(report.skipped[0].reason == reason);
    CHECK(back.events.size() == original.events.size() - chunk.events);
  }
};

TEST_CASE("a damaged compressed chunk fails its checksum (taken over the stored bytes)") {
  CompressedChunk c;
  c.bytes[c.chunk.end - 20] ^= 0x10;  // inside the zstd frame
  c.expect_only_chunk_lost("checksum mismatch in compressed events chunk");
}

TEST_CASE("a compressed chunk that does not decompress is skipped, naming zstd's reason") {
  CompressedChunk c;
  // Past the checksum (recomputed): the frame's own header is damaged.
  c.bytes[c.payload() + bf::kCompressedHeaderSize + 16] ^= 0xff;  // the frame's magic
  c.fix_checksum();
  c.expect_only_chunk_lost("malformed compressed events chunk: zstd: Unknown frame descriptor");
}

TEST_CASE("an absurd declared size is refused before anything is allocated") {
  CompressedChunk c;
  uint64_t huge = 1ull << 40;  // a decompression bomb's claim: 1 TiB
  std::memcpy(c.bytes.data() + c.payload() + 8, &huge, 8);
  c.fix_checksum();
  c.expect_only_chunk_lost(
      "malformed compressed events chunk: declares 1099511627776 bytes once decompressed, more "
      "than a chunk may hold (67108864 bytes)");
}

TEST_CASE("a declared size that differs from the packed events' counts is refused") {
  CompressedChunk c;
  uint64_t declared;
  std::memcpy(&declared, c.bytes.data() + c.payload() + 8, 8);
  const uint64_t larger = declared + 8;
  std::memcpy(c.bytes.data() + c.payload() + 8, &larger, 8);
  c.fix_checksum();
  c.expect_only_chunk_lost(
      "malformed compressed events chunk: packed events whose counts do not match the size "
      "declared");
}

TEST_CASE("packed events that do not unpack to their counts are refused, saying where") {
  // The chunk's frame replaced by one of bytes that end inside the times: the chunk is
  // skipped with the byte where unpacking stopped, every other event kept.
  CompressedChunk c;
  c.replace_frame(std::string(10, '\x01'));  // ten times, where 50 events need more
  c.expect_only_chunk_lost(fmt::format(
      "malformed compressed events chunk: packed events: 50 events and {} values cannot fit "
      "(byte 0 of 10)",
      c.counted_values()));
}

TEST_CASE("a packed frame larger than its events could pack into is refused before unpacking") {
  CompressedChunk c;
  const uint64_t plain = 50 * 24 + c.counted_values() * 8;
  const uint64_t limit = plain + plain / 2;
  c.replace_frame(std::string(limit + 1, '\x01'));
  c.expect_only_chunk_lost(fmt::format(
      "malformed compressed events chunk: the zstd frame holds {} bytes, more than 50 events "
      "packed may take ({} bytes)",
      limit + 1, limit));
}

TEST_CASE("a file of format 2.0 (events compressed, not packed) reads as before") {
  Trace t;
  ReadReport report =
      read_trace(std::string(CW_SOURCE_DIR) + "/tests/real/traces/14-sort-eof-exit.cwt", t);
  CHECK(report.clean());
  CHECK(report.major == 2);
  CHECK(report.notes.empty());
  CHECK(t.events.size() > 100);
  // Rewritten, it is a 3.0 file whose events read back the same.
  TempDir dir("cw-tracer-test");
  write_trace(t, dir.file("again.cwt"));
  Trace back;
  ReadReport again = read_trace(dir.file("again.cwt"), back);
  CHECK(again.major == 3);
  CHECK(canonical(back) == canonical(t));
}

TEST_CASE("an unknown codec is refused, naming it") {
  CompressedChunk c;
  uint32_t codec = 7;
  std::memcpy(c.bytes.data() + c.payload(), &codec, 4);
  c.fix_checksum();
  c.expect_only_chunk_lost("malformed compressed events chunk: unknown compression codec 7");
}

// A chunk type's name, as messages give it ("events" for an events chunk).
std::string_view describe_type(uint32_t type) {
  static const char* const names[] = {"",          "schema",  "strings", "stacks",
                                      "processes", "threads", "events",  "lost",
                                      "end",       "maps",    "losses"};
  type &= ~bf::kCompressedFlag;
  return type < std::size(names) ? names[type] : "?";
}

// Sets an environment variable for one test case, and puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST_CASE("what a trace may decompress to: 64 times its size, at least 64 MiB, at most 16 GiB") {
  {
    ScopedEnv env("CAUSEWAY_MAX_DECOMPRESSED", nullptr);
    CHECK(decompression_limit(0) == bf::kMaxCompressedPayload);
    CHECK(decompression_limit(90000) == bf::kMaxCompressedPayload);
    CHECK(decompression_limit(10u << 20) == 640u << 20);
    CHECK(decompression_limit(uint64_t{1} << 30) == uint64_t{16} << 30);
    CHECK(decompression_limit(UINT64_MAX) == uint64_t{16} << 30);
  }
  {
    // The user's own limit replaces both bounds.
    ScopedEnv env("CAUSEWAY_MAX_DECOMPRESSED", "32G");
    CHECK(decompression_limit(90000) == uint64_t{32} << 30);
  }
  {
    ScopedEnv env("CAUSEWAY_MAX_DECOMPRESSED", "4096");
    CHECK(decompression_limit(uint64_t{1} << 30) == 4096);
  }
  for (const char* bad : {"lots", "5X", "-1", "16777216T", "2 G"}) {
    CAPTURE(bad);
    ScopedEnv env("CAUSEWAY_MAX_DECOMPRESSED", bad);
    CHECK_THROWS_AS(decompression_limit(1000), TraceFormatError);
  }
  ScopedEnv env("CAUSEWAY_MAX_DECOMPRESSED", "5X");
  CHECK_THROWS_WITH(decompression_limit(1000),
                    "CAUSEWAY_MAX_DECOMPRESSED='5X': expected a size in bytes, or with a K, M, G "
                    "or T suffix (like 32G)");
}

// Each compressed chunk is capped (64 MiB); a file of many small chunks at that cap would
// take thousands of times its size without a total (tests/hostile/traces.t has such a file).
TEST_CASE("past the limit on a file's decompressed total, the chunk and the rest are skipped") {
  TempDir dir("cw-tracer-test");
  write_streamed(dir.file("c.cwt"), 50, 4, 200);
  const std::string bytes = slurp(dir.file("c.cwt"));
  const std::vector<ChunkInfo> chunks = walk_chunks(bytes);
  // The limit lets the first three compressed chunks through, not the fourth.
  uint64_t total = 0, limit = 0, events_before = 0;
  size_t seen = 0;
  std::optional<ChunkInfo> stop;
  size_t ordinal = 0;
  for (const ChunkInfo& c : chunks) {
    ++ordinal;
    if (!(c.type & bf::kCompressedFlag)) {
      events_before += c.events;
      continue;
    }
    uint64_t declared;
    std::memcpy(&declared, bytes.data() + c.offset + bf::kChunkHeaderSize + 8, 8);
    if (++seen == 4) {
      limit = total + declared - 1;
      total += declared;
      stop = c;
      break;
    }
    total += declared;
    events_before += c.events;
  }
  REQUIRE(stop);
  const std::string limit_text = std::to_string(limit);
  ScopedEnv env("CAUSEWAY_MAX_DECOMPRESSED", limit_text.c_str());
  Trace back;
  ReadReport report = read_trace_bytes(bytes, back, "c.cwt");
  REQUIRE(report.skipped.size() == 1);
  CHECK(report.skipped[0].offset == stop->offset);
  CHECK(report.skipped[0].size == bytes.size() - stop->offset);
  std::string type(describe_type(stop->type));
  CHECK(report.skipped[0].reason ==
        fmt::format("chunk {} of the file (compressed {} chunk) would take the trace's "
                    "decompressed total to {} bytes, past the limit of {} bytes (as "
                    "CAUSEWAY_MAX_DECOMPRESSED sets): the chunks before it are kept, it and the "
                    "rest of the file are not read",
                    ordinal, type, total, limit));
  CHECK(back.events.size() == events_before);
  CHECK(report.events_read == events_before);
  // Not cut short: the end chunk is there, unread.
  CHECK(std::none_of(report.notes.begin(), report.notes.end(),
                     [](const std::string& n) { return n.starts_with("no end chunk"); }));
}

}  // namespace
}  // namespace cw
