// libFuzzer target: a hostile rule pack, end to end. Loading (parse, `requires`, checker,
// Lua compilation, lint) must answer with diagnostics only; a pack that loads is then
// applied to a small trace, where the only failures allowed are the ones build_graph
// documents (a Lua hook error, an expression error at a rule). Lua runs under tight
// limits so an endless hook is a diagnostic, not a hang of the fuzzer.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "engine/graph/builder.h"
#include "rules/loader.h"
#include "trace/text_format.h"

namespace {

// A client and a server over a socket (the start of examples/slow-server.trace): sends,
// receives, wake-ups and waits, enough for edge, cut, batch and hook rules to fire.
constexpr const char* kTrace = R"(causeway-trace 1
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

20.1ms 811 syscall_enter name=read fd=3 stack=main;ask;read
)";

const cw::Trace& trace() {
  static const cw::Trace t = cw::parse_text_trace(cw::make_source("fuzz.trace", kTrace));
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  cw::rules::LoadResult loaded = cw::rules::load_sources({cw::make_source("fuzz.cw", text)});
  (void)loaded.render();
  if (!loaded.ok()) {
    if (loaded.diagnostics.empty()) std::abort();  // refused without saying why
    return 0;
  }
  cw::engine::BuildOptions options;
  options.lua_limits.instructions = 200'000;
  options.lua_limits.memory_bytes = 16 << 20;
  try {
    (void)cw::engine::build_graph(trace(), loaded.rules, options);
  } catch (const cw::rules::LuaError&) {
  } catch (const cw::DiagnosticError&) {
  }
  return 0;
}
