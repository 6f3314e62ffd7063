// Detours-like inline hooks on functions of the current process (docs/hooks.md): the
// function's first instructions move to a trampoline within ±2 GB, its first 5 bytes become
// a jump to a stub that records entry and exit into the thread's event buffer
// (event_log.h), and what cannot be hooked safely is refused with a one-line reason.
// Unwinding through a hooked frame (C++ exceptions) is not supported; longjmp out of one is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace cw::hook {

struct HookTarget {
  void* address;
  size_t size_hint = 0;  // the function's symbol size, 0 = unknown
  uint32_t index = 0;    // carried by the function's events
};

// An installed hook (opaque).
struct Hooked {
  uint32_t id = 0;
};

// nullopt, and *refusal set to a one-line reason, when the function cannot be hooked
// safely: shorter than the jump, a branch back into the patched bytes, an instruction that
// cannot move, no memory within ±2 GB, a thread that cannot be stopped for the patch.
std::optional<Hooked> install_hook(const HookTarget& target, std::string* refusal);
// Puts the function's bytes back. False, *error set, if the hook is not installed or a
// thread cannot be stopped; the hook then stays.
bool remove_hook(const Hooked& hooked, std::string* error);

}  // namespace cw::hook
