// Evaluates compiled rule expressions (rules::CompiledExpr) against events of a trace.
//
// An expression is prepared once per trace — string constants become the trace's StrIds,
// lists become sorted id sets, span names become SpanIds, Lua functions are looked up —
// and then evaluated without allocating (Lua calls aside).
//
// Preparing also compiles the tree into a flat postfix program (PreparedExpr::code): the
// rules' `where` clauses run millions of times per build, and a loop over instructions
// whose fields were resolved once (their kind, value index, whether they hold a string)
// costs a fraction of a recursive walk. The tree walk stays as the reference: the program
// hands it whole calls, and tests build every graph both ways and compare.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "engine/graph/span_tree.h"
#include "engine/graph/thread_slots.h"
#include "rules/lua_host.h"
#include "rules/ruleset.h"
#include "trace/trace.h"

namespace cw::engine {

inline constexpr uint32_t kNoEvent = 0xffffffffu;

// One event and the span context of its thread at that event.
struct EventCtx {
  uint32_t event = kNoEvent;
  uint32_t node = SpanTree::kRoot;
};

// The events an expression can name: Side::Self, Side::From, Side::To.
struct Value;

struct EvalScope {
  EventCtx self, from, to;
  // Boost and prune rules run on a classified candidate: `edge.kind` is its kind.
  const Value* edge_kind = nullptr;
};

// A value. Str: `i` is the StrId, or StringTable::kMissing when the text is not in the
// trace, then `text` holds it. Stack: `i` is the StackId. List: `i` is the list's node.
struct Value {
  rules::ValueType type = rules::ValueType::Null;
  int64_t i = 0;
  const char* text = nullptr;

  static Value null() { return {}; }
  static Value boolean(bool b) { return {rules::ValueType::Bool, b ? 1 : 0, nullptr}; }
  static Value integer(int64_t v) { return {rules::ValueType::Int, v, nullptr}; }
};

// An expression of one rule, resolved against one trace.
struct PreparedExpr {
  struct NodeExtra {
    StrId str = StringTable::kMissing;  // Const Str
    SpanId span = kNoSpan;              // Field with a span
    std::vector<StrId> strs;            // Const List: its strings (sorted)
    std::vector<uint64_t> str_bits;     // ... and as a bit per StrId: membership in one probe
    std::vector<int64_t> ints;          // Const List: its integers (sorted)
    std::vector<int8_t> glob_cache;     // Matches with a constant pattern: per StrId
    std::vector<int8_t> stack_cache;    // ... and per StackId (any frame matches)
    rules::LuaSandbox* lua = nullptr;   // Call lua.NAME
    std::string lua_name;
  };
  // One step of the flat program; operands are on a value stack.
  enum class Code : uint8_t {
    Const,       // push `value`
    EventField,  // push a field of the event on `side` (`kind`, value index `field`)
    SpanField,   // ... of the opener of its innermost open `span`
    SpanOpen,    // push whether `span` is open at the event on `side`
    Field,       // push field(node): the event's other attributes
    Tree,        // push eval_node(node): a call, evaluated by the tree walk
    Not,
    Neg,
    ToBool,       // replace the top by its truth
    JumpIfFalse,  // `and`: falsy top -> false, go to `jump`; else pop
    JumpIfTrue,   // `or`: truthy top -> true, go to `jump`; else pop
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    NotIn,
    Matches,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
  };
  struct Instr {
    Code code = Code::Const;
    rules::Side side = rules::Side::Self;
    bool valid = false;     // EventField/SpanField: the field exists in kind `kind`
    bool is_str = false;    // ... and holds a StrId
    KindId kind = kNoKind;  // EventField/SpanField
    SpanId span = kNoSpan;  // SpanField/SpanOpen
    int16_t field = 0;
    uint32_t node = 0;  // the tree node it comes from (errors, lists, patterns, Tree)
    uint32_t jump = 0;  // JumpIfFalse/JumpIfTrue: the instruction after the right operand
    // A binary step whose right operand is a constant takes it from `value`, not the
    // stack (`name == "read"`, `name in LIST`: most comparisons in rules).
    bool rhs_const = false;
    Value value;  // Const, or the constant right operand
  };
  // Deepest value stack a program may use; deeper expressions run as one Tree step.
  static constexpr size_t kMaxStack = 32;

  const rules::CompiledExpr* expr = nullptr;
  const rules::RuleOrigin* origin = nullptr;
  mutable std::vector<NodeExtra> extra;
  std::vector<Instr> code;  // empty: evaluate by walking the tree
  // The names an event of `guard_kind` must have (the value of its naming field,
  // event_names.h) for the expression to hold there, a bit per StrId: outside them it is
  // false, with nothing that may fail evaluated (name_selector). A rule at syscall_enter
  // that names a few calls is false at most calls, and test() says so from one value
  // instead of running the program. `guard_whole`: the names are the whole test. Only with
  // the program: the walk stays the reference that tests compare with.
  KindId guard_kind = kNoKind;
  int guard_field = -1;
  bool guard_whole = false;
  std::vector<uint64_t> guard_bits;
  bool empty() const { return !expr || expr->empty(); }
};

class Evaluator {
 public:
  // `lua` may be null when no rule calls Lua. `interpret`: prepare no flat programs, so
  // every evaluation walks the tree (tests compare the two).
  Evaluator(const Trace& trace, const SpanTree& spans, LuaHost* lua, bool interpret = false);

  // Throws DiagnosticError (at the call) when a `lua.NAME` function is defined nowhere
  // the rule can see, and rules::LuaError when a pack's Lua chunk fails to load.
  PreparedExpr prepare(const rules::CompiledExpr& expr, const rules::RuleOrigin& origin) const;

  // True for an empty expression. Throws rules::LuaError from hooks, DiagnosticError for
  // a division by zero.
  bool test(const PreparedExpr& expr, const EvalScope& scope);
  Value eval(const PreparedExpr& expr, const EvalScope& scope);

  // Text of a string value.
  std::string_view text(const Value& v) const;
  bool truthy(const Value& v) const;
  // The stack `stack` names for an event: its own, else the innermost open span's.
  StackId stack_of(const EventCtx& ctx) const;

 private:
  Value eval_node(const PreparedExpr& p, uint32_t n, const EvalScope& scope);
  Value run(const PreparedExpr& p, const EvalScope& scope);
  void compile(PreparedExpr& p) const;
  void guard(PreparedExpr& p) const;
  Value event_field(const Event& ev, const PreparedExpr::Instr& in) const;
  Value field(const PreparedExpr& p, uint32_t n, const EvalScope& scope);
  Value call(const PreparedExpr& p, uint32_t n, const EvalScope& scope);
  bool equal(const Value& a, const Value& b) const;
  int compare(const PreparedExpr& p, uint32_t n, const Value& a, const Value& b) const;
  bool member(const PreparedExpr& p, const Value& x, const Value& list) const;
  bool matches(const PreparedExpr& p, uint32_t n, const Value& subject, const Value& pattern);
  bool glob(const PreparedExpr& p, uint32_t n, bool cached, StrId id, const char* pattern);
  Value string_value(std::string_view s);
  rules::LuaValue to_lua(const PreparedExpr& p, const Value& v) const;
  [[noreturn]] void fail(const PreparedExpr& p, uint32_t n, const std::string& message) const;

  const ThreadInfo* thread_info(Tid tid) const;
  const ProcessInfo* process_of(Tid tid) const;

  const Trace& trace_;
  const SpanTree& spans_;
  LuaHost* lua_;
  bool interpret_ = false;
  // tid -> index in trace.threads (keyed by tid, sized by the threads: ThreadSlots).
  ThreadSlots thread_slot_;
  std::vector<const ProcessInfo*> thread_process_;  // per trace.threads entry
  // The last few stack lookups: a rule names from.stack / to.stack several times.
  struct StackCacheEntry {
    uint32_t event = kNoEvent;
    uint32_t node = 0;
    StackId stack = 0;
  };
  mutable StackCacheEntry stack_cache_[4];
  Value stack_[PreparedExpr::kMaxStack];  // run()'s operands (it never runs re-entered)
  std::vector<StrId> kind_names_;         // per KindId: the kind's name in the trace's strings
  std::deque<std::string> scratch_;       // texts of Lua results not in the trace
};

}  // namespace cw::engine
