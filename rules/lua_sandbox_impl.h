// The state behind a LuaSandbox (rules/lua_sandbox.h) and what its files share. Impl's
// member functions are defined by job, one file each:
//   lua_sandbox.cc         the public calls: load a chunk, call a hook
//   lua_sandbox_limits.cc  the instruction budget, the memory cap, the CPU time limit
//   lua_sandbox_env.cc     the Lua state and the _ENV a pack's code sees
//   lua_sandbox_errors.cc  error messages: where a run failed, and what it said
// with lua_sandbox_costs.h (what library loops cost) and lua_sandbox_values.h (values in
// and out).
// Internal to rules/: nothing outside includes this.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <lua.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "rules/lua_sandbox.h"
#include "rules/lua_sandbox_costs.h"

namespace cw::rules {
namespace sandbox {

enum class Failure : uint8_t { None, Budget, Memory, Time };

struct Location {
  std::string file;
  int line = 0;
  bool known() const { return line > 0; }
};

// Error texts (lua_sandbox_errors.cc).
std::string message_text(std::string_view message);
Location innermost_lua_location(lua_State* L);
std::optional<std::pair<int, std::string_view>> split_syntax_error(std::string_view message);
std::string error_object_text(lua_State* L, int index);

}  // namespace sandbox

struct LuaSandbox::Impl {
  using Failure = sandbox::Failure;
  using Location = sandbox::Location;
  using Cost = sandbox::Cost;

  std::string pack;
  LuaLimits limits;
  lua_State* L = nullptr;

  // Memory accounting for the whole state; the cap holds only while a chunk or a hook
  // runs, so that host-side bookkeeping never fails outside a protected call.
  size_t bytes_in_use = 0;
  bool enforcing = false;
  Location refusal_location;  // where the last refused allocation was asked for

  uint64_t instructions_left = 0;
  int hook_step = 0;
  size_t bytes_not_charged = 0;  // allocated bytes short of one instruction's worth

  // The CPU time limit: the thread's CPU clock at the start of the run, and when (by the
  // cheaper wall clock) to read it next. CPU time never runs ahead of wall time.
  std::chrono::nanoseconds cpu_at_start{};
  std::chrono::steady_clock::time_point next_clock_check;

  Failure failure = Failure::None;
  Location failure_location;
  Location error_location;  // of a runtime error that reached the top
  std::string error_message;

  // Serial of the current run; math.random reseeds itself once per run.
  uint64_t run_serial = 0;
  uint64_t random_seeded_serial = 0;
  int abort_ref = LUA_NOREF;

  static Impl& of(lua_State* L) { return **static_cast<Impl**>(lua_getextraspace(L)); }

  // The limits (lua_sandbox_limits.cc).
  static void* allocate(void* ud, void* block, size_t old_size, size_t new_size);
  bool charge(uint64_t cost);
  bool out_of_time();
  void fail(Failure kind, Location location);
  [[noreturn]] void raise_abort();
  static void count_hook(lua_State* L, lua_Debug*);
  static void charge_steps(lua_State* L, uint64_t steps);
  void arm_budget_step();
  void begin_run();
  void end_run(int status);

  // The state and its _ENV (lua_sandbox_env.cc).
  void open();
  static int finish_pcall(lua_State* L, int status, int extra);
  static int sandbox_pcall(lua_State* L);
  static int guarded_handler(lua_State* L);
  static int sandbox_xpcall(lua_State* L);
  static int charged_function(lua_State* L);
  void charge_function(int library, const char* name, Cost cost);
  static int sandbox_setmetatable(lua_State* L);
  static int deterministic_random(lua_State* L);

  // Errors (lua_sandbox_errors.cc).
  static int panic(lua_State* L);
  static int record_error(lua_State* L);
  std::string render_failure(std::string_view subject, const Location& fallback) const;
};

}  // namespace cw::rules
