// What the cache entry fuzz targets decode against: a fixed trace (examples/slow-server.trace,
// read back from its binary form as the cache's users read it), a small pack of rules, and
// the graph and thread index those make. Made once per process.
//
// The seed corpora (fuzz/corpus/cache_*) are entries causeway wrote for this trace and
// pack (docs/fuzzing.md): kCachePack is also written to fuzz/cache_fixture.cw for that.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>

#include "engine/cache/cache.h"
#include "engine/diagnosis/diagnose.h"
#include "engine/graph/builder.h"
#include "rules/loader.h"
#include "trace/binary_format.h"
#include "trace/text_format.h"

namespace cw::fuzz {

// A client and a server over a socket: the second answer takes 800 ms (a LongWait whose
// waker is the server's worker).
inline constexpr const char* kCacheTrace = R"(causeway-trace 1
process 811 comm=cw-client exe=/usr/bin/cw-client
thread 811 pid=811 comm=cw-client
process 812 comm=cw-server exe=/usr/bin/cw-server
thread 813 pid=812 comm=cw-srv-worker
1ms    813 syscall_enter name=recvfrom fd=4 stack=main;serve;recvfrom
1ms    813 switch_out state=S
10ms   811 syscall_enter name=sendto fd=3 stack=main;ask;sendto
10ms   811 send object=1 offset=0 len=16 peer=812 fd=3
10ms   811 wakeup target=813
10ms   811 syscall_exit name=sendto ret=16
10.1ms 811 syscall_enter name=read fd=3 stack=main;ask;read
10.1ms 811 switch_out state=S
10.2ms 813 switch_in
10.2ms 813 recv object=1 offset=0 len=16 peer=811 fd=4
10.2ms 813 syscall_exit name=recvfrom ret=16
10.5ms 813 syscall_enter name=sendto fd=4 stack=main;serve;reply;sendto
10.5ms 813 send object=2 offset=0 len=64 peer=811 fd=4
10.5ms 813 wakeup target=811
10.5ms 813 syscall_exit name=sendto ret=64
10.6ms 813 syscall_enter name=recvfrom fd=4 stack=main;serve;recvfrom
10.6ms 813 switch_out state=S
10.7ms 811 switch_in
10.7ms 811 recv object=2 offset=0 len=64 peer=812 fd=3
10.7ms 811 syscall_exit name=read ret=64
20ms   811 syscall_enter name=sendto fd=3 stack=main;ask;sendto
20ms   811 send object=1 offset=16 len=16 peer=812 fd=3
20ms   811 wakeup target=813
20ms   811 syscall_exit name=sendto ret=16
20.1ms 811 syscall_enter name=read fd=3 stack=main;ask;read
20.1ms 811 switch_out state=S
20.2ms 813 switch_in
20.2ms 813 recv object=1 offset=16 len=16 peer=811 fd=4
20.2ms 813 syscall_exit name=recvfrom ret=16
820ms  813 syscall_enter name=sendto fd=4 stack=main;serve;compute_reply;sendto
820ms  813 send object=2 offset=64 len=64 peer=811 fd=4
820ms  813 wakeup target=811
820ms  813 syscall_exit name=sendto ret=64
820.1ms 813 syscall_enter name=recvfrom fd=4 stack=main;serve;recvfrom
820.1ms 813 switch_out state=S
820.2ms 811 switch_in
820.2ms 811 recv object=2 offset=64 len=64 peer=812 fd=3
820.2ms 811 syscall_exit name=read ret=64
821ms  811 exit code=0
)";

// Every table a graph entry refers to has rules in it: links, strong, weak, boost and
// prune edges, a loop split, a data wait split, a peers split, a batch.
inline constexpr const char* kCachePack = R"(pack fuzz.cache { version "0.1.0" }
link wakeup { from wakeup to switch_in join from.target == to.tid pick next }
link stream {
  from send
  to recv
  join from.object == to.object
  pick overlap
  range offset, len
}
edge message { link stream strength strong kind message }
edge wakeup.default { link wakeup strength weak kind wakeup priority -100 }
edge wakeup.boost { link wakeup strength boost where from.tid == 811 }
edge wakeup.prune { link wakeup strength prune where from.tid == 1 }
split loop.wait {
  at syscall_enter
  where name == "recvfrom"
  cut before
  neighbour weak
  loop
}
split data.wait {
  at switch_out
  where state != "R" and syscall.name == "read"
  cut syscall
  neighbour weak
}
split peers.disjoint { peers stream neighbour weak }
batch serve.requests {
  within call where fn == "serve_loop"
  item syscall_enter where name == "recvfrom"
  neighbour none
}
)";

struct CacheFixture {
  std::string binary;  // the trace's binary form
  Trace trace;         // read from it, as the cache's users have it
  Trace tables;        // the same read without its events (read_trace_without_events)
  rules::RuleSet rules;
  engine::BuildResult built;
  std::unique_ptr<engine::ThreadEvents> index;
};

inline const CacheFixture& cache_fixture() {
  static const CacheFixture* f = [] {
    auto* out = new CacheFixture;
    const Trace text = parse_text_trace(make_source("fuzz.trace", kCacheTrace));
    char path[] = "/tmp/cw-cache-fuzz-XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) std::abort();
    close(fd);
    write_trace(text, path);
    read_trace(path, out->trace);
    {
      std::ifstream in(path, std::ios::binary);
      out->binary.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    if (!cache::read_trace_without_events(path, out->tables)) std::abort();
    unlink(path);
    auto loaded = rules::load_sources({make_source("fuzz.cw", kCachePack)});
    if (!loaded.ok()) {
      std::fputs(loaded.render().c_str(), stderr);
      std::abort();
    }
    out->rules = std::move(loaded.rules);
    out->built = engine::build_graph(out->trace, out->rules);
    out->index = std::make_unique<engine::ThreadEvents>(out->trace);
    return out;
  }();
  return *f;
}

// An entry's file as the cache maps it: a zeroed header, then the fuzzer's payload, page
// aligned (the decoders of mapped entries read arrays at page offsets of the file).
struct MappedInput {
  std::shared_ptr<const void> keep;
  char* base = nullptr;
  uint64_t size = 0;
};

inline MappedInput map_input(const uint8_t* data, size_t size) {
  MappedInput m;
  m.size = cache::kHeaderSize + size;
  const size_t room = (m.size + 4095) / 4096 * 4096;
  m.base = static_cast<char*>(std::aligned_alloc(4096, room));
  std::memset(m.base, 0, room);
  if (size) std::memcpy(m.base + cache::kHeaderSize, data, size);
  m.keep =
      std::shared_ptr<const void>(m.base, [](const void* p) { std::free(const_cast<void*>(p)); });
  return m;
}

// A rebuild of the fixture's graph's cuts with `options` (its `reuse` set here): what it
// makes must not have a segment that ends before it begins; refusing what it was given
// (std::invalid_argument) is an answer.
inline void rebuild_checked(const CacheFixture& f, engine::BuildOptions options) {
  engine::BuildResult prior = f.built;
  options.reuse = &prior;
  try {
    const engine::BuildResult rebuilt = engine::build_graph(f.trace, f.rules, options);
    for (const engine::Segment& s : rebuilt.graph.segments)
      if (s.first > s.last || s.start_ns > s.end_ns) std::abort();
  } catch (const std::invalid_argument&) {
  }
}

// What a diagnosis of the fixture may answer besides a diagnosis: no hang, or a hang it
// cannot find.
inline void diagnose_quietly(const Trace& trace, const engine::BuildResult& built,
                             const rules::RuleSet& rules, engine::DiagnoseOptions options) {
  options.max_depth = 16;
  try {
    (void)engine::diagnose(trace, built, rules, options);
  } catch (const engine::DiagnoseError&) {
  }
}

}  // namespace cw::fuzz
