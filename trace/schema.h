// The event schema: which kinds of events a trace holds and the typed fields of each.
//
// The schema names tracing *mechanisms* (a syscall was entered, a thread was woken, bytes
// were sent on a stream); which syscalls block or which wake-ups are causal is decided by
// rule packs, never here. Every trace carries its schema, so a reader can keep events of
// kinds it does not know; rules are checked against Schema::builtin().
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace cw {

using KindId = uint16_t;
inline constexpr KindId kNoKind = std::numeric_limits<KindId>::max();
// A syscall_exit's `ret` when the recorder did not see the call return (a call taken at the
// scheduler, kernel/bpf/calls_at_switch.bpf.h): no return value a call gives.
inline constexpr int64_t kUnknownReturn = std::numeric_limits<int64_t>::min();

enum class FieldType : uint8_t {
  Int,   // signed 64-bit
  Uint,  // unsigned 64-bit (addresses, offsets, object identities)
  Str,   // interned string id (StrId)
  Tid,   // a thread id
};

std::string_view field_type_name(FieldType t);

// What a field's value means beyond its type, where joining traces of several hosts into
// one (trace/host_join.h) must change it: a process or thread (ids are per host), an
// object's identity (a kernel or user address, an inode: per host unless a message proved
// both hosts name the same TCP flow), or a time on the recording's clock.
enum class FieldRole : uint8_t { Plain, Task, Identity, Time };

struct FieldDef {
  std::string name;
  FieldType type;
  std::string doc;
  FieldRole role = FieldRole::Plain;  // a Tid field is a task whatever this says
};

// Spans: a kind may open or close a nested interval on its thread (a syscall, a
// function call, an interrupt). Rules reach the innermost open span of a given name as
// `syscall.name`, `call.fn`, or test whether one is open with a bare `irq`.
enum class SpanRole : uint8_t { None, Open, Close };

struct KindDef {
  std::string name;
  std::vector<FieldDef> fields;
  SpanRole span_role = SpanRole::None;
  std::string span;  // span name ("syscall", "call", "irq", ...) when span_role != None
  std::string doc;
};

class Schema {
 public:
  // The kinds causeway's recorder and instrumentation write, version 1.
  static const Schema& builtin();

  KindId find(std::string_view kind) const;  // kNoKind when absent
  const KindDef& kind(KindId id) const { return kinds_[id]; }
  size_t size() const { return kinds_.size(); }
  // Index of a field in the kind's value list, or -1.
  int field_index(KindId id, std::string_view field) const;
  // The kind that opens span `span` (e.g. "syscall" -> syscall_enter), or kNoKind.
  KindId span_opener(std::string_view span) const;
  KindId span_closer(std::string_view span) const;
  std::vector<std::string> span_names() const;

  KindId add(KindDef def);  // appends; returns its id
  const std::vector<KindDef>& kinds() const { return kinds_; }

 private:
  std::vector<KindDef> kinds_;
};

}  // namespace cw
