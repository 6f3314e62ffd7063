// A loaded, checked and compiled set of packs: what the engine applies to a trace.
//
// rules/ builds it from syntax trees (rules/loader.h); engine/ only reads it. Field
// references are resolved against Schema::builtin() (a trace's schema starts with the
// builtin kinds, so KindIds and field indexes are valid for every trace). String
// constants stay as text: the engine resolves them to a trace's StrIds once per trace.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/source.h"
#include "dsl/rule_kinds.h"
#include "trace/schema.h"

namespace cw::rules {

// ---- compiled expressions -------------------------------------------------------------

enum class ValueType : uint8_t { Null, Bool, Int, Str, Stack, List };

// Which event an expression talks about: the rule's own event, or one end of a link.
enum class Side : uint8_t { Self, From, To };

enum class FieldScope : uint8_t {
  EventField,  // a field of the event itself: `field` indexes its kind's fields
  SpanOpen,    // bool: a span named `span` is open on the thread
  SpanField,   // a field of the innermost open span's opening event (kind `kind`)
  Ts,
  Tid,
  Pid,
  Cpu,
  KindName,  // the event's own attributes
  Stack,     // the event's stack, else the innermost open span's with one
  ThreadComm,
  ThreadKernel,
  ProcessComm,
  ProcessExe,
  EdgeKind,  // `edge.kind`: the kind the classifying rule gave (boost/prune rules only)
};

struct FieldRef {
  Side side = Side::Self;
  FieldScope scope = FieldScope::EventField;
  KindId kind = kNoKind;  // EventField: the event's kind; SpanField: the span's opener kind
  int16_t field = -1;     // EventField/SpanField: index into the kind's fields
  std::string span;       // SpanOpen/SpanField
  ValueType type = ValueType::Null;
};

enum class Op : uint8_t {
  Const,  // ival / sval / list (kids = elements, all Const)
  Field,  // field
  Not,
  Neg,
  And,
  Or,
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
  Call,  // callee: "shared_symbols", "len", or "lua.NAME"; kids = arguments
};

struct ExprNode {
  Op op = Op::Const;
  ValueType type = ValueType::Null;  // result type
  SourceLoc loc;
  int64_t ival = 0;            // Const Int/Bool
  std::string sval;            // Const Str; Call callee
  FieldRef field;              // Field
  std::vector<uint32_t> kids;  // indexes into CompiledExpr::nodes
};

// A tree stored flat; `root` is the top node. An empty expression means "true".
struct CompiledExpr {
  std::vector<ExprNode> nodes;
  uint32_t root = 0;
  bool empty() const { return nodes.empty(); }
};

// Whether the expression calls a pack's Lua hook (`lua.NAME`): its value may then depend on
// the hook's state, that is on every call made before it.
bool calls_lua(const CompiledExpr& expr);

// ---- rules ----------------------------------------------------------------------------

struct RuleOrigin {
  std::string pack;   // pack id
  std::string id;     // qualified: "pack/rule"
  std::string local;  // "rule"
  SourcePtr source;
  SourceLoc loc;
  // The pack whose `disable` turned this rule off, or empty: the engine skips it.
  std::string disabled_by;
  bool active() const { return disabled_by.empty(); }
};

enum class Strength : uint8_t { Strong, Weak, Boost, Prune };
enum class Neighbour : uint8_t { None, Weak, Strong };

inline constexpr uint32_t kNoRule = std::numeric_limits<uint32_t>::max();

struct LinkRule {
  RuleOrigin origin;
  KindId from = kNoKind;
  KindId to = kNoKind;
  // Pairs (from field, to field) that must be equal. Fields are EventField, SpanField
  // (the innermost open span's opener, as `to.syscall.resource` on a syscall_exit), Tid or
  // Pid scope of their side.
  std::vector<std::pair<FieldRef, FieldRef>> join;
  enum class Pick : uint8_t { Next, Latest, Overlap } pick = Pick::Next;
  int16_t offset_field = -1;  // Overlap: fields of both kinds (same names on both)
  int16_t len_field = -1;
  int16_t to_offset_field = -1;
  int16_t to_len_field = -1;
  CompiledExpr where;
  uint64_t within_ns = 0;  // 0 = unbounded
  // `from_where` / `to_where`: over one event (Side::Self), before pairing: only events
  // that satisfy them are a cause / an effect, so `pick next` pairs a release with the
  // next successful acquire, not with whatever event of that kind comes next.
  CompiledExpr from_where, to_where;
};

struct SplitRule {
  RuleOrigin origin;
  enum class Mode : uint8_t { AtEvent, Peers } mode = Mode::AtEvent;
  KindId at = kNoKind;  // AtEvent
  CompiledExpr where;   // AtEvent: over Side::Self; Peers: over Side::Self too
  bool cut_after = false;
  // `cut SPAN` (a span name, "syscall"): the cut goes before the event that opened the
  // innermost open SPAN, so a call cuts only when something inside it (its block) matches.
  std::string cut_span;
  uint32_t link = kNoRule;  // Peers: index into RuleSet::links
  Neighbour neighbour = Neighbour::Weak;
  // `loop`: the cut is where the thread returns to its event loop, so the wait it starts
  // is idle time, not a hang (diagnosis, engine/diagnosis/symptom.h).
  bool loop = false;
  // When two split rules cut at one event, the higher priority names the cut (then load
  // order): a user pack's rule can take an event a stdlib rule also cuts at.
  int priority = 0;
};

struct BatchRule {
  RuleOrigin origin;
  // `within loop`: the loop is the thread's event loop, as split rules with `loop` declare
  // it; the thread is in it from its first loop cut on. Else the loop is a span:
  bool thread_loop = false;
  std::string span;            // "call", "syscall", "task", ...
  KindId span_open = kNoKind;  // the kind that opens it
  CompiledExpr within_where;   // over the opening event (Side::Self)
  KindId item = kNoKind;
  CompiledExpr item_where;  // over the item event (Side::Self)
  // `per EXPR` (an integer over the item event, a descriptor): consecutive items with the
  // same value are one item, until the thread returns to its loop. Empty: every item event
  // starts an item.
  CompiledExpr per;
  // `cut SPAN`: the item starts before the entry of the SPAN the item event belongs to (the
  // innermost open one, or the one that returned just before it: a `recv` is recorded as
  // its read returns). Empty: at the item event.
  std::string cut_span;
  Neighbour neighbour = Neighbour::None;
};

struct EdgeRule {
  RuleOrigin origin;
  uint32_t link = kNoRule;  // index into RuleSet::links
  CompiledExpr where;       // over Side::From / Side::To
  Strength strength = Strength::Weak;
  std::string kind;  // edge kind label
  int priority = 0;
  CompiledExpr cost;  // empty = default cost
  // `ends_polling`: an edge of this rule ends another thread's polling loop (a try that
  // fails, a sleep, another try), as a lock's release ends the polling of that lock. A
  // RepeatedYield the edge ends is explained by the edge's source, as a flag write is.
  bool ends_polling = false;
  // `request`: an edge of this rule carries another thread's request (a message), which
  // starts the work it lands in: the diagnosis shows the path from where it was sent (the
  // Argus paper, §4.2, batching), as for the bytes of a send read by a recv.
  bool request = false;
  // `from_thread FIELD`: the edge leaves the segment, at the from event's time, of the
  // thread that FIELD (a tid of the from event) names, when it is not 0: an interrupt's
  // wake-up raised for the thread that armed the expiring timer, not for the thread the
  // interrupt landed on. -1: the from event's own thread.
  int16_t from_thread = -1;
};

struct FlagRule {
  RuleOrigin origin;
  std::string symbol;
  std::string binary;
  uint64_t address = 0;  // 0 = resolve symbol
  int size = 4;
  CompiledExpr set;  // over a flag_write event (Side::Self); empty = value != 0
  enum class Access : uint8_t { Read, Write, Both } access = Access::Both;
  Strength strength = Strength::Strong;  // Strong or Weak
  std::string kind = "flag";
};

// Who holds what a thread still blocked in one of `syscalls` when a recording ends waits
// for (docs/rules.md "holder"). Owner: the call's first argument is the waited-on address
// and the owner's tid is the `size`-byte word `owner_offset` bytes from it (glibc's mutex:
// lock word at 0, owner at 8; recorder/mutex_owner.h). Peer: the first argument is an fd on
// a pipe or a socket, held at its other end by another process (recorder/stream_peer.h).
struct HolderRule {
  RuleOrigin origin;
  std::vector<std::string> syscalls;
  enum class Find : uint8_t { Owner, Peer } find = Find::Owner;
  int64_t owner_offset = 0;
  int size = 4;
};

// A saved answer to a diagnosis question (engine/diagnosis/questions.h): when the question of kind
// `question` is asked about a segment whose first event satisfies `subject`, the option
// that satisfies `choose` is taken without asking. Edge questions: `choose` is over
// Side::From / Side::To (the edge's evidence events) and may name `edge.kind`. Baseline
// questions: over Side::Self, the candidate segment's first event. `choose stop` (edge:
// stop slicing; baseline: none of them; recurse: do not recurse) and `choose recurse`
// (recurse questions) take no expression; a recurse question takes only those two.
// The events these expressions see are of no kind known when the pack is checked, so they
// name only what every event has: ts, tid, pid, cpu, kind, stack, thread.comm,
// thread.kernel, process.comm, process.exe (through from./to. for edges), and no span.
struct AnswerRule {
  RuleOrigin origin;
  enum class Question : uint8_t { Edge, Baseline, Recurse } question = Question::Edge;
  CompiledExpr subject;  // over Side::Self: the subject segment's first event
  enum class Choice : uint8_t { Option, Stop, Recurse } choice = Choice::Option;
  CompiledExpr choose;  // Choice::Option only
};

// A diagnosis symptom as written in a pack test's `hang` (and on the command line, --hang):
// "auto"; "TID@SECONDS", a thread and a time in seconds since the trace started
// ("811@1.5", "811@2"); or a thread's name (up to 15 characters, not all digits, no '@'
// or space: "cw-browser"), its longest stretch. nullopt for anything else.
struct HangSpec {
  bool automatic = true;
  uint32_t tid = 0;
  uint64_t offset_ns = 0;   // SECONDS in ns (digits past the ninth decimal are dropped)
  std::string thread_name;  // automatic, among the threads of this name only
};
std::optional<HangSpec> parse_hang_spec(std::string_view text);

struct LuaChunk {
  std::string pack;
  SourcePtr source;
  std::string code;
  uint32_t first_line = 1;
};

// A compiled pack test (docs/rules.md "Tests").
struct Expectation {
  SourceLoc loc;
  bool negated = false;
  // Hang, RootCause: `expect hang TID [kind K]`, `expect root_cause TID [kind K]` (K as
  // in hang_kind_name, kept in `kind`); Questions: `expect questions OP N` (cmp, value).
  enum class Subject : uint8_t {
    Edge,
    Split,
    Segments,
    Stat,
    Hang,
    RootCause,
    Questions
  } subject = Subject::Edge;
  uint32_t from_tid = 0, to_tid = 0;  // Edge; Split/Segments/Hang/RootCause use from_tid
  std::string kind, strength, rule;   // optional filters (rule as written)
  bool has_at = false;
  uint64_t at_ns = 0;
  std::string stat;  // Stat
  std::string cmp;   // Segments/Stat
  int64_t value = 0;
};

struct PackTest {
  std::string pack;
  std::string name;
  SourcePtr source;
  SourceLoc loc;
  std::string trace_text;
  SourceLoc trace_loc;     // where trace_text starts in `source` (for error positions)
  std::string trace_file;  // `trace file "PATH"` instead of text: resolved against the
                           // pack file's folder; a text or binary trace
  std::string hang;        // `hang "auto"` or `hang "TID@SECONDS"` for diagnosis expectations
  std::vector<Expectation> expects;
};

// What a pack is for (`applies library("libuv.so*"), program("node")`): a pack with
// conditions is loaded from the search path only for a trace that shows one of them.
struct PackCondition {
  enum class Kind : uint8_t { Library, Program, Symbol };
  Kind kind = Kind::Program;
  std::string glob;  // fnmatch pattern over a file name, a process name or a function name
};
std::string_view condition_kind_name(PackCondition::Kind kind);  // "library", ...

struct PackInfo {
  std::string id;
  std::string version;
  std::string engine;                  // constraint as written
  std::vector<std::string> requires_;  // pack ids
  // The version range each of `requires_` asks for (`requires glibc.pthread(">= 0.2, < 1")`),
  // "" for any version; same order as `requires_`.
  std::vector<std::string> requires_versions;
  std::string description;
  std::vector<PackCondition> applies;  // empty: the pack applies to every trace
  std::vector<std::string> files;
  std::vector<SourcePtr> sources;  // the files as loaded, like `files` (the cache keys on them)
  SourcePtr header_source;
  SourceLoc header_loc;
};

// A `disable PACK/RULE` item: `by` (a pack) turned `rule` (qualified) off.
struct DisabledRule {
  std::string rule;
  std::string by;
  SourcePtr source;
  SourceLoc loc;
};

// Rules are kept in evaluation order: `edges` sorted by (priority desc, pack load order
// desc, file order); `splits` by (priority desc, load order); every other list in load order.
struct RuleSet {
  std::vector<PackInfo> packs;  // load order
  std::vector<LinkRule> links;
  std::vector<SplitRule> splits;
  std::vector<BatchRule> batches;
  std::vector<EdgeRule> edges;
  std::vector<FlagRule> flags;
  std::vector<HolderRule> holders;  // load order
  std::vector<AnswerRule> answers;  // load order
  std::vector<LuaChunk> lua;
  std::vector<PackTest> tests;
  std::vector<DisabledRule> disabled;  // load order

  const PackInfo* pack(const std::string& id) const;
  // Where each compiled rule of `kind` (dsl/rule_kinds.h) came from, in its list's order.
  std::vector<RuleOrigin*> origins(dsl::RuleKind kind);
  std::vector<const RuleOrigin*> origins(dsl::RuleKind kind) const;
  // Whether an active cut rule (a split that is not `peers`, a batch) calls a Lua hook.
  // When none does, the hooks' calls in a graph build do not depend on the cut rules.
  bool cut_rules_call_lua() const;
};

}  // namespace cw::rules
