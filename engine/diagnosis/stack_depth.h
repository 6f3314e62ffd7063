// Whether a report's stacks are too shallow to say where the program was. Walking frame
// pointers (the recorder's default, as perf's) stops at the first function built without
// them: Debian's libc is, so a stack of a blocked call is often its libc wrapper and
// nothing of the program above it. A copy of the stack unwound with the files' CFI
// (`record --call-graph dwarf`) goes through.
#pragma once

#include <optional>
#include <string>

#include "engine/diagnosis/diagnose.h"
#include "trace/trace.h"

namespace cw::engine {

// At most this many user frames is a stack cut short.
inline constexpr size_t kShallowUserFrames = 2;

// The user frames (below the leading kernel frames) of stack `id`; 0 for no stack.
size_t user_frames(const Trace& trace, StackId id);

// A note for the report when every root cause with a stack has at most
// kShallowUserFrames user frames: what it means and how to record deeper ones; nothing
// otherwise (no stacks at all is another matter, said elsewhere).
std::optional<std::string> shallow_stacks_note(const Trace& trace, const Diagnosis& d);

}  // namespace cw::engine
