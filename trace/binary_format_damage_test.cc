// Damaged files lose only their damaged chunks: every cut and every flipped byte of a
// streamed trace, plain and compressed.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "base/temp_dir.h"
#include "trace/binary_format.h"
#include "trace/binary_format_test_support.h"

namespace cw {
namespace {

namespace bf = binary_format;
using namespace bf::testing;

struct Robustness {
  std::string bytes;
  Trace original;
  std::vector<ChunkInfo> chunks;
  std::vector<size_t> first_event;  // per chunk: index of its first event in `original`
  std::map<uint64_t, size_t> by_ts;

  explicit Robustness(TraceCompression compression) {
    TempDir dir("cw-tracer-test");
    original = write_streamed(dir.file("r.cwt"), 13, 12, 60, compression);
    bytes = slurp(dir.file("r.cwt"));
    chunks = walk_chunks(bytes);
    // The damage below must hit compressed chunks when there are to be some.
    const bool any_compressed = std::any_of(chunks.begin(), chunks.end(), [](const ChunkInfo& c) {
      return (c.type & bf::kCompressedFlag) != 0 && c.events > 0;
    });
    REQUIRE(any_compressed == (compression == TraceCompression::Zstd));
    size_t next = 0;
    for (const auto& c : chunks) {
      first_event.push_back(next);
      next += c.events;
    }
    REQUIRE(next == original.events.size());
  }

  // Reads `damaged`; checks that every event of every events chunk for which `intact`
  // holds was kept, and no other. False when the reader refused the file.
  template <typename Intact>
  bool check(const std::string& damaged, Intact&& intact, ReadReport& report) {
    Trace out;
    try {
      report = read_trace_bytes(damaged, out, "damaged");
    } catch (const TraceFormatError&) {
      return false;
    }
    std::map<uint64_t, size_t> read_ts;
    for (size_t i = 0; i < out.events.size(); ++i) read_ts[out.events[i].ts] = i;
    size_t expected = 0, mismatches = 0;
    for (size_t c = 0; c < chunks.size(); ++c) {
      if (chunks[c].events == 0 || !intact(chunks[c])) continue;
      expected += chunks[c].events;
      for (size_t i = first_event[c]; i < first_event[c] + chunks[c].events; ++i)
        mismatches += !same_event(original.events[i], out, read_ts);
    }
    CHECK(mismatches == 0);
    CHECK(out.events.size() == expected);
    CHECK(report.events_read == expected);
    return true;
  }

  bool same_event(const Event& e, const Trace& out, const std::map<uint64_t, size_t>& read_ts) {
    auto it = read_ts.find(e.ts);
    if (it == read_ts.end()) return false;
    const Event& r = out.events[it->second];
    const KindDef& kind = original.schema.kind(e.kind);
    if (r.tid != e.tid || r.cpu != e.cpu || out.schema.kind(r.kind).name != kind.name) return false;
    for (size_t f = 0; f < kind.fields.size(); ++f) {
      uint64_t a = original.value(e, static_cast<int>(f)), b = out.value(r, static_cast<int>(f));
      if (kind.fields[f].type != FieldType::Str) {
        if (a != b) return false;
        continue;
      }
      std::string_view got = out.strings.get(static_cast<StrId>(b));
      if (got != original.strings.get(static_cast<StrId>(a)) && got.substr(0, 5) != "?str#")
        return false;
    }
    if (r.stack == 0) return true;  // its stacks chunk may be lost
    const Stack &want = original.stacks[e.stack], &got = out.stacks[r.stack];
    return want.ips == got.ips;
  }
};

void check_truncations(TraceCompression compression) {
  Robustness r(compression);
  std::vector<uint64_t> cuts;
  for (const auto& c : r.chunks)
    for (int d = -3; d <= 3; ++d) cuts.push_back(c.offset + static_cast<uint64_t>(d));
  for (uint64_t cut = 0; cut < r.bytes.size(); cut += 61) cuts.push_back(cut);
  for (uint64_t cut : cuts) {
    if (cut > r.bytes.size()) continue;
    CAPTURE(cut);
    ReadReport report;
    bool read = r.check(
        r.bytes.substr(0, cut), [&](const ChunkInfo& c) { return c.end <= cut; }, report);
    CHECK(read == (cut >= bf::kHeaderSize));  // only a cut header is refused
    if (!read) continue;
    bool at_boundary =
        cut == bf::kHeaderSize || std::any_of(r.chunks.begin(), r.chunks.end(),
                                              [&](const ChunkInfo& c) { return c.end == cut; });
    if (at_boundary) {
      CHECK(report.clean());
    } else {
      REQUIRE(report.skipped.size() == 1);
      CHECK(report.skipped[0].offset + report.skipped[0].size == cut);
      CHECK(report.skipped[0].reason.find("truncated") == 0);
    }
    bool complete = cut == r.bytes.size();
    CHECK(complete == (std::find(report.notes.begin(), report.notes.end(),
                                 "no end chunk: the recording did not finish, or the file was "
                                 "cut short") == report.notes.end()));
  }
}

void check_corruptions(TraceCompression compression) {
  Robustness r(compression);
  std::vector<uint64_t> offsets;
  for (uint64_t o = 0; o < bf::kHeaderSize; ++o) offsets.push_back(o);
  for (const auto& c : r.chunks)
    for (int d = -3; d < static_cast<int>(bf::kChunkHeaderSize) + 3; ++d)
      offsets.push_back(c.offset + static_cast<uint64_t>(d));
  for (uint64_t o = 0; o < r.bytes.size(); o += 53) offsets.push_back(o);
  for (uint64_t at : offsets) {
    if (at >= r.bytes.size()) continue;
    CAPTURE(at);
    std::string damaged = r.bytes;
    damaged[at] = static_cast<char>(damaged[at] ^ 0xff);
    ReadReport report;
    bool read = r.check(
        damaged, [&](const ChunkInfo& c) { return at < c.offset || at >= c.end; }, report);
    if (!read) {
      CHECK(at < 16);  // magic or major version: the header is damaged
      continue;
    }
    if (at < bf::kHeaderSize) continue;
    const ChunkInfo& hit = *std::find_if(r.chunks.begin(), r.chunks.end(),
                                         [&](const ChunkInfo& c) { return at < c.end; });
    bool skipped =
        std::any_of(report.skipped.begin(), report.skipped.end(), [&](const SkippedRange& s) {
          return s.offset == hit.offset && s.offset + s.size >= hit.end;
        });
    // The type field is outside the checksum: a damaged type reads as an unknown chunk.
    bool noted = std::any_of(report.notes.begin(), report.notes.end(), [&](const std::string& n) {
      return n.find(fmt::format("at byte {} ", hit.offset)) != std::string::npos;
    });
    CHECK((skipped || (noted && at >= hit.offset + 4 && at < hit.offset + 8)));
  }
}

TEST_CASE("a truncated trace keeps every whole chunk and reports where it was cut") {
  check_truncations(TraceCompression::None);
}

TEST_CASE("a truncated compressed trace keeps every whole chunk and reports where it was cut") {
  check_truncations(TraceCompression::Zstd);
}

TEST_CASE("a corrupted trace keeps every intact chunk and reports each damaged one") {
  check_corruptions(TraceCompression::None);
}

TEST_CASE("a corrupted compressed trace keeps every intact chunk and reports each damaged one") {
  check_corruptions(TraceCompression::Zstd);
}

}  // namespace
}  // namespace cw
