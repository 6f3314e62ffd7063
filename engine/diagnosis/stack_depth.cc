#include "engine/diagnosis/stack_depth.h"

#include <fmt/format.h>

namespace cw::engine {

size_t user_frames(const Trace& trace, StackId id) {
  if (id == 0 || id >= trace.stacks.size()) return 0;
  const Stack& s = trace.stacks[id];
  return s.ips.size() > s.kernel ? s.ips.size() - s.kernel : 0;
}

std::optional<std::string> shallow_stacks_note(const Trace& trace, const Diagnosis& d) {
  size_t with_stack = 0;
  size_t deepest = 0;
  for (const RootCause& r : d.root_causes) {
    if (r.stack == 0) continue;
    ++with_stack;
    deepest = std::max(deepest, user_frames(trace, r.stack));
  }
  if (with_stack == 0 || deepest > kShallowUserFrames) return std::nullopt;
  return fmt::format(
      "the root cause's stacks have {} user frame{} at most: walking frame pointers stops at "
      "the first function built without them (Debian's libc is one). Record again with "
      "`causeway record --call-graph dwarf` for whole stacks (the stack is copied and "
      "unwound with the files' CFI, as perf --call-graph dwarf does)",
      deepest, deepest == 1 ? "" : "s");
}

}  // namespace cw::engine
