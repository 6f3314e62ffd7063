// What `record --rules` instruments: the data flags and the functions the packs name
// (instrument/plan.h), resolved against a traced process's memory maps and attached as
// hardware watchpoints, instruction uprobes, function uprobes or inline hooks.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "instrument/plan.h"
#include "kernel/probes.h"
#include "recorder/record_decoder.h"

namespace cw {

enum class FlagMethod { Auto, Watch, Probe };
enum class HookMethod { Auto, Inline, Uprobe };

// ASAN_OPTIONS for a command given the in-process hook library through LD_PRELOAD:
// `existing` (the recorder's own, may be null) with verify_asan_link_order=0 added. A
// program built with AddressSanitizer otherwise exits at once ("ASan runtime does not come
// first in initial library list"); the library interposes no symbol ASan intercepts (it
// exports none), so the order does not matter to it. Programs without ASan ignore it.
std::string asan_options_with_preload(const char* existing);

// Why the kernel's uprobes refuse to probe the x86-64 instruction `insn` (it cannot
// single-step it out of line: arch/x86/kernel/uprobes.c, is_prefix_bad), or "" when they
// do not: a lock prefix or an es/cs/ds/ss segment prefix among its legacy prefixes.
std::string uprobe_refused_prefix(std::span<const uint8_t> insn);

class RecordInstrumentation {
 public:
  RecordInstrumentation(instrument::InstrumentationPlan plan, FlagMethod flags, HookMethod hooks);
  ~RecordInstrumentation();
  RecordInstrumentation(const RecordInstrumentation&) = delete;
  RecordInstrumentation& operator=(const RecordInstrumentation&) = delete;

  bool empty() const { return plan_.empty(); }
  // How the decoder names the indexes in instrumentation records, and tells a watched
  // read from a write.
  InstrumentNaming naming() const;

  // For `record -- CMD`: variables to add to the command's environment (the inline-hook
  // library, when functions are hooked in-process), made once.
  std::vector<std::pair<std::string, std::string>> command_environment();
  // Resolves the plan in process `pid` as it is mapped now and attaches through `probes`.
  // `command`: the process is the command started under causeway (hooked in-process).
  // Throws kernel::ProbeError when the kernel refuses; a flag or function the process
  // does not have is a message, not an error.
  void attach(kernel::Probes& probes, uint32_t pid, bool command);
  // Whether the named functions are probed by uprobes, not by the in-process hooks that
  // LD_PRELOAD carries into every program a command starts: then each program a recorded
  // process starts (its exec) is looked at too, by attach_started.
  bool follows_started_programs() const;
  // Places the named functions' uprobes in the program process `pid` has just started
  // (exec), from what it maps when called: a command's script that starts the server a
  // pack is about. A function's calls before then are not traced, nor functions in
  // libraries it loads after. Quiet about a process already gone; throws
  // kernel::ProbeError when the kernel refuses.
  void attach_started(kernel::Probes& probes, uint32_t pid);
  // Moves the events the in-process hooks logged since the last call into the decoder.
  void poll_hooks(RecordDecoder& decoder);
  // At the end: counts the watchpoints that never fired (some machines open one and never
  // deliver a hit; or the flag was not touched) as a loss in the trace, and says so.
  void note_silent_watchpoints(RecordDecoder& decoder);
  // What was attached where, refused or not found, one line each, since the last call.
  std::vector<std::string> take_messages();
  // The same, at the end of the recording: with one line for the functions no hooked
  // process had (said once, not per process).
  std::vector<std::string> take_final_messages();

 private:
  struct State;
  struct MappedFiles;
  static bool read_mapped_files(uint32_t pid, MappedFiles* out, std::string* error);
  void attach_functions(kernel::Probes& probes, uint32_t pid, const MappedFiles& mapped);
  instrument::InstrumentationPlan plan_;
  FlagMethod flags_;
  HookMethod hooks_;
  std::unique_ptr<State> state_;
};

}  // namespace cw
