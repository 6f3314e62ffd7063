// LuaSandbox's limits: the instruction budget (Lua's count hook, and the work library
// functions and allocations are charged for), the memory cap (the state's allocator) and
// the CPU time limit. A broken limit fails the run, and is raised again at every
// instruction until the run ends.
#include <algorithm>
#include <cstdlib>
#include <ctime>

#include "rules/lua_sandbox_costs.h"
#include "rules/lua_sandbox_impl.h"

namespace cw::rules {
namespace {

using sandbox::innermost_lua_location;
using sandbox::kBytesPerInstruction;

// The count hook fires at least this often, to look at the clock.
constexpr int kHookPeriod = 1000;

std::chrono::nanoseconds thread_cpu_time() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
}

}  // namespace

void* LuaSandbox::Impl::allocate(void* ud, void* block, size_t old_size, size_t new_size) {
  auto& self = *static_cast<Impl*>(ud);
  size_t old_bytes = block ? old_size : 0;  // without a block, old_size is a type tag
  if (new_size == 0) {
    std::free(block);
    self.bytes_in_use -= old_bytes;
    return nullptr;
  }
  bool growing = self.enforcing && new_size > old_bytes;
  if (growing && self.failure != Failure::None) {
    // A broken run stops at its next allocation too, even inside a library function.
    return nullptr;
  }
  if (growing && new_size - old_bytes > self.limits.memory_bytes -
                                            std::min(self.bytes_in_use, self.limits.memory_bytes)) {
    // Lua collects garbage and asks again; a memory error follows only if that fails.
    self.refusal_location = innermost_lua_location(self.L);
    return nullptr;
  }
  void* grown = std::realloc(block, new_size);
  if (!grown) return nullptr;
  self.bytes_in_use = self.bytes_in_use - old_bytes + new_size;
  if (growing) {
    // Copying and collecting cost what the bytes cost: `s = s .. s` on a long string is
    // one instruction. The hook raises the failure at the next instruction.
    self.bytes_not_charged += new_size - old_bytes;
    uint64_t cost = self.bytes_not_charged / kBytesPerInstruction;
    self.bytes_not_charged %= kBytesPerInstruction;
    if (!self.charge(cost)) self.fail(Failure::Budget, innermost_lua_location(self.L));
  }
  return grown;
}

// Takes `cost` instructions from the budget; false when that breaks it.
bool LuaSandbox::Impl::charge(uint64_t cost) {
  if (cost < instructions_left) {
    instructions_left -= cost;
    return true;
  }
  instructions_left = 0;
  return false;
}

bool LuaSandbox::Impl::out_of_time() {
  auto now = std::chrono::steady_clock::now();
  if (now < next_clock_check) return false;
  auto used = thread_cpu_time() - cpu_at_start;
  if (used >= limits.cpu_time) return true;
  next_clock_check = now + (limits.cpu_time - used);
  return false;
}

// Marks the run failed; the hook then raises on every instruction so that nothing the
// script does (pcall, xpcall, __close) gets past the failure.
void LuaSandbox::Impl::fail(Failure kind, Location location) {
  if (failure != Failure::None) return;
  failure = kind;
  failure_location = std::move(location);
  lua_sethook(L, &count_hook, LUA_MASKCOUNT, 1);
}

void LuaSandbox::Impl::raise_abort() {
  lua_rawgeti(L, LUA_REGISTRYINDEX, abort_ref);
  lua_error(L);
  std::abort();  // lua_error does not return
}

void LuaSandbox::Impl::count_hook(lua_State* L, lua_Debug*) {
  Impl& self = of(L);
  if (self.failure == Failure::None) {
    self.instructions_left -= std::min<uint64_t>(self.instructions_left, self.hook_step);
    if (self.instructions_left == 0) {
      self.fail(Failure::Budget, innermost_lua_location(L));
    } else if (self.out_of_time()) {
      self.fail(Failure::Time, innermost_lua_location(L));
    } else {
      self.arm_budget_step();
      return;
    }
  }
  self.raise_abort();
}

// Work done inside a library function (the pattern matcher's steps, the elements a
// table function moves) counts as instructions.
void LuaSandbox::Impl::charge_steps(lua_State* L, uint64_t steps) {
  Impl& self = of(L);
  if (!self.enforcing) return;
  if (self.failure == Failure::None) {
    if (self.charge(steps)) return;
    self.fail(Failure::Budget, innermost_lua_location(L));
  }
  self.raise_abort();
}

void LuaSandbox::Impl::arm_budget_step() {
  hook_step = static_cast<int>(std::clamp<uint64_t>(instructions_left, 1, kHookPeriod));
  lua_sethook(L, &count_hook, LUA_MASKCOUNT, hook_step);
}

void LuaSandbox::Impl::begin_run() {
  failure = Failure::None;
  failure_location = {};
  refusal_location = {};
  error_location = {};
  error_message.clear();
  ++run_serial;
  instructions_left = limits.instructions;
  bytes_not_charged = 0;
  cpu_at_start = thread_cpu_time();
  next_clock_check = std::chrono::steady_clock::now() + limits.cpu_time;
  arm_budget_step();
  enforcing = true;
}

void LuaSandbox::Impl::end_run(int status) {
  enforcing = false;
  if (status == LUA_ERRMEM) fail(Failure::Memory, refusal_location);
  // Garbage the failed run left behind must not count against the next one.
  if (status != LUA_OK) lua_gc(L, LUA_GCCOLLECT);
}

}  // namespace cw::rules
