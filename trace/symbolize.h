// Names the frames of recorded stacks from the trace's memory maps and the ELF files they
// map (found again by build id), so stacks of processes that exited long ago still read
// as function names, with source lines and inlined calls where the files have DWARF.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "trace/trace.h"

namespace cw {

struct SymbolizeOptions {
  // Where separate debug files live, as DIR/.build-id/xx/rest.debug.
  std::string debug_dir = "/usr/lib/debug";
};

struct SymbolizeReport {
  size_t stacks_symbolized = 0;  // stacks given symbols (at least one frame named)
  size_t stacks_unused = 0;      // stacks no event refers to: their process is unknown
  size_t frames_resolved = 0;
  size_t frames_unresolved = 0;    // including the frames below
  size_t frames_outside_maps = 0;  // no recorded mapping of the process covers the address
  size_t frames_jit = 0;  // named from the process's perf map (JIT code), of those resolved
  // Mapped files found neither at their path (with the recorded build id) nor as a debug
  // file, or not ELF: "PATH" or "PATH (build id HEX)", sorted.
  std::vector<std::string> files_not_found;
  // The same, by the process whose frames they left unnamed (sorted, no duplicates): a
  // diagnosis notes only those of the processes it is about.
  std::map<Pid, std::vector<std::string>> files_not_found_by_pid;
};

// Fills Stack::symbols (one StrId per ip, 0 = unknown; demangled names: the function the
// ip is in) of every stack that has none yet and is used by an event, and Stack::frames of
// every used stack: each ip's function with its source file and line, preceded by the
// functions inlined there (innermost first, Frame::inlined), and for an ip no symbol
// covers the mapped file's name and the ip's offset in it (frame_name: `libfoo.so+0x1a2b`).
// A stack belongs to the process of the events using it; its frames are looked up in the
// latest map of that process recorded at or before the event's time that covers the
// address (a child that forked without exec falls back to its parents' maps, as recorded
// in Trace::processes). The mapped file is the recorded path when its build id matches
// (or none was recorded), else the debug file named by the build id; elfutils' libdwfl
// reads its symbols (.symtab of either, else .dynsym) and DWARF (its own, else the debug
// file's). A frame in no recorded mapping (or in one whose file cannot be read) is named
// from the JIT symbols the recording copied from the process's perf map, when one covers
// it (trace/jit_symbols.h), with the name as the runtime wrote it (`JS:*fib /x.js:3:13`).
// Leading kernel frames (Stack::kernel) keep the names the recording gave them.
// Stacks with no frame resolved keep no symbols, so a later run with more debug files
// can try again. Never throws on unreadable or odd ELF files: their frames stay unknown.
SymbolizeReport symbolize_stacks(Trace& trace, const SymbolizeOptions& options = {});

}  // namespace cw
