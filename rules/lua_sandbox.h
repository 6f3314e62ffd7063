// Sandboxed Lua for pack hooks (DESIGN §5): text chunks only, a whitelisted _ENV, no
// io/os/load/require/debug, an instruction budget, a memory cap and a CPU time limit per
// call.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cw::rules {

struct LuaValue {
  enum class Type : uint8_t { Nil, Bool, Int, Number, Str, List } type = Type::Nil;
  bool b = false;
  int64_t i = 0;
  double n = 0;
  std::string s;
  std::vector<LuaValue> list;

  static LuaValue nil() { return {}; }
  static LuaValue boolean(bool v) {
    LuaValue x;
    x.type = Type::Bool;
    x.b = v;
    return x;
  }
  static LuaValue integer(int64_t v) {
    LuaValue x;
    x.type = Type::Int;
    x.i = v;
    return x;
  }
  static LuaValue string(std::string v) {
    LuaValue x;
    x.type = Type::Str;
    x.s = std::move(v);
    return x;
  }
  static LuaValue number(double v) {
    LuaValue x;
    x.type = Type::Number;
    x.n = v;
    return x;
  }
  static LuaValue from_list(std::vector<LuaValue> v) {
    LuaValue x;
    x.type = Type::List;
    x.list = std::move(v);
    return x;
  }

  friend bool operator==(const LuaValue&, const LuaValue&) = default;
};

// Where a hook was called from, for error messages.
struct LuaCallSite {
  std::string pack;
  std::string rule;  // qualified rule id
};

// Errors name the pack, the rule and the line:
//   "pack.cw:14: error: lua hook 'score' (pack my.pack, rule my.pack/slow) exceeded its
//    instruction budget of 1000000"
struct LuaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct LuaLimits {
  uint64_t instructions = 1'000'000;  // per call (and per chunk load)
  size_t memory_bytes = 32u << 20;    // the state's whole heap
  // CPU time per call (and per chunk load), for work the budget cannot see: one VM
  // instruction comparing two long strings, say. A pack that stays within its budget
  // stays far within this, so results do not depend on the machine's speed.
  std::chrono::milliseconds cpu_time{2000};
};

// One Lua state per pack: packs cannot see each other's globals. Not thread-safe: one
// thread at a time per sandbox. After any error the sandbox stays usable.
//
// Work done inside library functions counts against the instruction budget too, since
// Lua's count hook only fires between instructions: the string pattern functions' steps
// (rules/lua_patterns.h), the elements the table functions move or visit, the bytes the
// state allocates. xpcall's message handler runs under the same budget and cap.
class LuaSandbox {
 public:
  LuaSandbox(std::string pack, LuaLimits limits = {});
  ~LuaSandbox();
  LuaSandbox(const LuaSandbox&) = delete;
  LuaSandbox& operator=(const LuaSandbox&) = delete;

  // Runs a text chunk (binary chunks are refused) from `file`, whose first line is
  // `first_line` of that file, so Lua's line numbers are the file's. Throws LuaError.
  void load(std::string_view file, std::string_view code, uint32_t first_line);
  bool has_function(std::string_view name) const;
  // Calls global function `name`. Throws LuaError naming site.pack, site.rule and line.
  LuaValue call(std::string_view name, std::span<const LuaValue> args, const LuaCallSite& site);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cw::rules
