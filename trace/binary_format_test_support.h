// What the binary format's tests share: reading a file back, walking its chunks, and a
// trace streamed in rounds so that chunks of every type interleave.
#pragma once

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "trace/binary_format.h"
#include "trace/text_format.h"

namespace cw::binary_format::testing {

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The text form resolves every id, so equal text means equal traces.
inline std::string canonical(const Trace& t) {
  return write_text_trace(t);
}

struct ChunkInfo {
  uint64_t offset = 0, end = 0;
  uint32_t type = 0;
  uint64_t events = 0;  // for events chunks
};

inline std::vector<ChunkInfo> walk_chunks(const std::string& bytes) {
  std::vector<ChunkInfo> chunks;
  for (uint64_t pos = kHeaderSize; pos + kChunkHeaderSize <= bytes.size();) {
    ChunkInfo c;
    uint64_t size;
    c.offset = pos;
    std::memcpy(&c.type, bytes.data() + pos + 4, 4);
    std::memcpy(&size, bytes.data() + pos + 8, 8);
    c.end = pos + kChunkHeaderSize + size;
    if (c.type == static_cast<uint32_t>(ChunkType::Events))
      std::memcpy(&c.events, bytes.data() + pos + kChunkHeaderSize, 8);
    // A compressed events chunk keeps its counts as the raw prefix.
    if (c.type == (static_cast<uint32_t>(ChunkType::Events) | kCompressedFlag))
      std::memcpy(&c.events, bytes.data() + pos + kChunkHeaderSize + kCompressedHeaderSize, 8);
    chunks.push_back(c);
    pos = c.end;
  }
  return chunks;
}

// A trace written the way the recorder writes one: in rounds, each adding strings, a
// stack, a thread and events, so that chunks of every type interleave.
inline Trace write_streamed(const std::string& path, size_t events_per_chunk, int rounds,
                            int events_per_round,
                            TraceCompression compression = TraceCompression::Zstd) {
  Trace t;
  TraceWriterOptions options{events_per_chunk};
  options.compression = compression;
  TraceWriter writer(path, t.schema, options);
  const KindId enter = t.schema.find("syscall_enter"), wakeup = t.schema.find("wakeup"),
               out = t.schema.find("switch_out");
  uint64_t n = 0;
  for (int r = 0; r < rounds; ++r) {
    size_t from = t.events.size();
    Tid tid = 1000 + static_cast<Tid>(r);
    t.processes.push_back(ProcessInfo{tid, 1, t.strings.intern(fmt::format("proc{}", r)), 0});
    t.threads.push_back(ThreadInfo{tid, tid, t.strings.intern(fmt::format("thread{}", r)), false});
    StackId stack = t.add_stack(Stack{{0x1000u + static_cast<uint64_t>(r), 0x2000},
                                      {t.strings.intern(fmt::format("fn{}", r)), 0}});
    for (int i = 0; i < events_per_round; ++i, ++n) {
      uint64_t ts = n * 1000 + 1;
      if (n % 3 == 0) {
        const Event& e = t.add_event(ts, tid, enter, static_cast<uint16_t>(n % 4), stack);
        t.value_ref(e, 0) = t.strings.intern(fmt::format("call{}_{}", r, i % 5));
        t.value_ref(e, 1) = static_cast<uint64_t>(-static_cast<int64_t>(n));
        t.value_ref(e, 2) = n * 7;
      } else if (n % 3 == 1) {
        t.value_ref(t.add_event(ts, tid, wakeup), 0) = tid + 1;
      } else {
        t.value_ref(t.add_event(ts, tid, out), 0) = t.strings.intern(r % 2 ? "S" : "D");
      }
    }
    if (r % 4 == 3) t.lost.push_back(LostRecord{static_cast<uint16_t>(r), 5, n * 1000});
    writer.append(t, from);
  }
  writer.close();
  t.rebuild_indexes();
  return t;
}

}  // namespace cw::binary_format::testing
