#include "engine/graph/expr_eval.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <cstring>
#include <span>

#include "base/source.h"
#include "engine/graph/event_names.h"

namespace cw::engine {

using rules::ExprNode;
using rules::FieldScope;
using rules::Op;
using rules::Side;
using rules::ValueType;

namespace {

// Integer arithmetic wraps (two's complement) instead of overflowing: times and offsets
// are unsigned 64-bit in the trace.
int64_t wrap(int64_t a, int64_t b, char op) {
  auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  uint64_t r = op == '+' ? ua + ub : op == '-' ? ua - ub : ua * ub;
  return static_cast<int64_t>(r);
}

// The value of constant node `n` of a prepared expression, as the walk and the compiled
// program both use it.
Value constant_value(const PreparedExpr& p, uint32_t n) {
  const ExprNode& node = p.expr->nodes[n];
  switch (node.type) {
    case ValueType::Str: {
      StrId id = p.extra[n].str;
      return {ValueType::Str, id, id == StringTable::kMissing ? node.sval.c_str() : nullptr};
    }
    case ValueType::List: return {ValueType::List, n, nullptr};
    case ValueType::Null: return Value::null();
    default: return {node.type, node.ival, nullptr};
  }
}

}  // namespace

Evaluator::Evaluator(const Trace& trace, const SpanTree& spans, LuaHost* lua, bool interpret)
    : trace_(trace), spans_(spans), lua_(lua), interpret_(interpret) {
  for (size_t k = 0; k < trace.schema.size(); ++k)
    kind_names_.push_back(trace.strings.find(trace.schema.kind(static_cast<KindId>(k)).name));
  for (uint32_t i = 0; i < trace.threads.size(); ++i) thread_slot_.set(trace.threads[i].tid, i);
  for (const ThreadInfo& t : trace.threads) thread_process_.push_back(trace.process(t.pid));
}

const ThreadInfo* Evaluator::thread_info(Tid tid) const {
  const uint32_t slot = thread_slot_.get(tid);
  return slot == ThreadSlots::kNone ? nullptr : &trace_.threads[slot];
}

const ProcessInfo* Evaluator::process_of(Tid tid) const {
  const uint32_t slot = thread_slot_.get(tid);
  return slot == ThreadSlots::kNone ? nullptr : thread_process_[slot];
}

PreparedExpr Evaluator::prepare(const rules::CompiledExpr& expr,
                                const rules::RuleOrigin& origin) const {
  PreparedExpr p;
  p.expr = &expr;
  p.origin = &origin;
  p.extra.resize(expr.nodes.size());
  for (size_t i = 0; i < expr.nodes.size(); ++i) {
    const ExprNode& node = expr.nodes[i];
    auto& x = p.extra[i];
    switch (node.op) {
      case Op::Const:
        if (node.type == ValueType::Str) x.str = trace_.strings.find(node.sval);
        if (node.type == ValueType::List) {
          for (uint32_t kid : node.kids) {
            const ExprNode& k = expr.nodes[kid];
            if (k.type == ValueType::Str) {
              StrId id = trace_.strings.find(k.sval);
              if (id != StringTable::kMissing) x.strs.push_back(id);
            } else {
              x.ints.push_back(k.ival);
            }
          }
          std::sort(x.strs.begin(), x.strs.end());
          std::sort(x.ints.begin(), x.ints.end());
          if (!x.strs.empty()) {
            x.str_bits.assign(trace_.strings.size() / 64 + 1, 0);
            for (StrId id : x.strs) x.str_bits[id >> 6] |= uint64_t{1} << (id & 63);
          }
        }
        break;
      case Op::Field:
        if (!node.field.span.empty()) x.span = spans_.span_id(node.field.span);
        break;
      case Op::Call:
        if (node.sval.starts_with("lua.")) {
          x.lua_name = node.sval.substr(4);
          if (lua_) x.lua = lua_->find(origin.pack, x.lua_name);
          if (!x.lua) {
            Diagnostic d;
            d.source = origin.source;
            d.loc = node.loc;
            d.length = static_cast<uint32_t>(node.sval.size());
            d.message =
                fmt::format("lua function '{}' is not defined in pack {} or the packs it requires",
                            x.lua_name, origin.pack);
            throw DiagnosticError(std::move(d));
          }
        }
        break;
      default: break;
    }
  }
  if (!interpret_) {
    compile(p);
    guard(p);
  }
  return p;
}

// The kind whose naming field the expression tests on its own event (one kind only), and
// the names that bound it there.
void Evaluator::guard(PreparedExpr& p) const {
  KindId kind = kNoKind;
  for (const ExprNode& node : p.expr->nodes) {
    if (node.op != Op::Field || node.field.side != Side::Self ||
        node.field.scope != FieldScope::EventField || node.field.kind == kNoKind ||
        static_cast<int>(node.field.field) != naming_field(trace_.schema, node.field.kind))
      continue;
    if (kind != kNoKind && kind != node.field.kind) return;
    kind = node.field.kind;
  }
  if (kind == kNoKind) return;
  const NameSelector names = name_selector(*p.expr, kind, trace_.schema);
  if (!names.by_name) return;
  p.guard_kind = kind;
  p.guard_field = naming_field(trace_.schema, kind);
  p.guard_whole = names.whole;
  for (const std::string& name : names.names) {
    const StrId id = trace_.strings.find(name);
    if (id == StringTable::kMissing) continue;  // no event has it
    if ((id >> 6) >= p.guard_bits.size()) p.guard_bits.resize((id >> 6) + 1, 0);
    p.guard_bits[id >> 6] |= uint64_t{1} << (id & 63);
  }
}

void Evaluator::compile(PreparedExpr& p) const {
  using Code = PreparedExpr::Code;
  using Instr = PreparedExpr::Instr;
  const auto& nodes = p.expr->nodes;
  if (nodes.empty()) return;
  // Where the order of evaluation could show — a Lua call (it may keep state, or fail) or
  // a division that may fail — the whole expression is one Tree step: the walk's order
  // stays the only one.
  for (const ExprNode& node : nodes) {
    bool order_shows = node.op == Op::Call && node.sval.starts_with("lua.");
    if (node.op == Op::Div || node.op == Op::Mod) {
      const ExprNode& divisor = nodes[node.kids.at(1)];
      order_shows =
          !(divisor.op == Op::Const && divisor.type == ValueType::Int && divisor.ival != 0);
    }
    if (order_shows) {
      Instr in;
      in.code = Code::Tree;
      in.node = p.expr->root;
      p.code = {in};
      return;
    }
  }
  std::vector<Instr> code;
  size_t depth = 0, max_depth = 0;
  auto push = [&](Instr in) {
    code.push_back(in);
    max_depth = std::max(max_depth, ++depth);
  };
  auto resolve = [&](Instr& in, const rules::FieldRef& ref) {
    in.kind = ref.kind;
    in.field = ref.field;
    if (ref.field >= 0 && ref.kind < trace_.schema.size()) {
      const auto& fields = trace_.schema.kind(ref.kind).fields;
      in.valid = static_cast<size_t>(ref.field) < fields.size();
      in.is_str = in.valid && fields[ref.field].type == FieldType::Str;
    }
  };
  auto const_value = [&](uint32_t n) { return constant_value(p, n); };
  auto emit = [&](auto& self, uint32_t n) -> void {
    const ExprNode& node = nodes[n];
    Instr in;
    in.node = n;
    auto binary = [&](Code c) {
      self(self, node.kids[0]);
      in.code = c;
      if (nodes[node.kids[1]].op == Op::Const) {
        in.rhs_const = true;
        in.value = const_value(node.kids[1]);
        code.push_back(in);
        return;
      }
      self(self, node.kids[1]);
      code.push_back(in);
      --depth;
    };
    switch (node.op) {
      case Op::Const:
        in.code = Code::Const;
        in.value = const_value(n);
        push(in);
        return;
      case Op::Field:
        in.side = node.field.side;
        switch (node.field.scope) {
          case FieldScope::EventField:
            in.code = Code::EventField;
            resolve(in, node.field);
            break;
          case FieldScope::SpanField:
            in.code = Code::SpanField;
            in.span = p.extra[n].span;
            resolve(in, node.field);
            break;
          case FieldScope::SpanOpen:
            in.code = Code::SpanOpen;
            in.span = p.extra[n].span;
            break;
          default: in.code = Code::Field; break;
        }
        push(in);
        return;
      case Op::Call:
        in.code = Code::Tree;
        push(in);
        return;
      case Op::Not:
      case Op::Neg:
        self(self, node.kids[0]);
        in.code = node.op == Op::Not ? Code::Not : Code::Neg;
        code.push_back(in);
        return;
      case Op::And:
      case Op::Or: {
        self(self, node.kids[0]);
        size_t jump = code.size();
        in.code = node.op == Op::And ? Code::JumpIfFalse : Code::JumpIfTrue;
        code.push_back(in);
        --depth;
        self(self, node.kids[1]);
        in.code = Code::ToBool;
        code.push_back(in);
        code[jump].jump = static_cast<uint32_t>(code.size());
        return;
      }
      case Op::Eq: return binary(Code::Eq);
      case Op::Ne: return binary(Code::Ne);
      case Op::Lt: return binary(Code::Lt);
      case Op::Le: return binary(Code::Le);
      case Op::Gt: return binary(Code::Gt);
      case Op::Ge: return binary(Code::Ge);
      case Op::In: return binary(Code::In);
      case Op::NotIn: return binary(Code::NotIn);
      case Op::Matches: return binary(Code::Matches);
      case Op::Add: return binary(Code::Add);
      case Op::Sub: return binary(Code::Sub);
      case Op::Mul: return binary(Code::Mul);
      case Op::Div: return binary(Code::Div);
      case Op::Mod: return binary(Code::Mod);
    }
    in.code = Code::Tree;  // a form this compiler does not know: the walk evaluates it
    push(in);
  };
  emit(emit, p.expr->root);
  if (max_depth > PreparedExpr::kMaxStack) {
    Instr in;
    in.code = Code::Tree;
    in.node = p.expr->root;
    code = {in};
  }
  p.code = std::move(code);
}

bool Evaluator::test(const PreparedExpr& expr, const EvalScope& scope) {
  if (expr.empty()) return true;
  if (expr.guard_kind != kNoKind && scope.self.event < trace_.events.size()) {
    const Event& ev = trace_.events[scope.self.event];
    if (ev.kind == expr.guard_kind) {
      const uint64_t name = trace_.value(ev, expr.guard_field);
      if ((name >> 6) >= expr.guard_bits.size() ||
          !((expr.guard_bits[name >> 6] >> (name & 63)) & 1))
        return false;
      if (expr.guard_whole) return true;
    }
  }
  return truthy(eval(expr, scope));
}

Value Evaluator::eval(const PreparedExpr& expr, const EvalScope& scope) {
  if (expr.empty()) return Value::boolean(true);
  if (!scratch_.empty()) scratch_.clear();
  if (!expr.code.empty()) return run(expr, scope);
  return eval_node(expr, expr.expr->root, scope);
}

Value Evaluator::event_field(const Event& ev, const PreparedExpr::Instr& in) const {
  if (ev.kind != in.kind || !in.valid) return Value::null();
  uint64_t raw = trace_.value(ev, in.field);
  if (in.is_str) return {ValueType::Str, static_cast<int64_t>(raw), nullptr};
  return Value::integer(static_cast<int64_t>(raw));
}

// The flat program: each step does what eval_node does for its node (see there).
Value Evaluator::run(const PreparedExpr& p, const EvalScope& scope) {
  using Code = PreparedExpr::Code;
  Value* st = stack_;
  size_t sp = 0;
  const auto* code = p.code.data();
  const size_t size = p.code.size();
  auto side = [&](rules::Side s) -> const EventCtx& {
    return s == Side::From ? scope.from : s == Side::To ? scope.to : scope.self;
  };
  for (size_t pc = 0; pc < size;) {
    const PreparedExpr::Instr& in = code[pc++];
    switch (in.code) {
      case Code::Const: st[sp++] = in.value; break;
      case Code::EventField: {
        const EventCtx& ctx = side(in.side);
        st[sp++] =
            ctx.event == kNoEvent ? Value::null() : event_field(trace_.events[ctx.event], in);
        break;
      }
      case Code::SpanField: {
        const EventCtx& ctx = side(in.side);
        Value v = Value::null();
        if (ctx.event != kNoEvent && in.span != kNoSpan) {
          uint32_t open = spans_.innermost(ctx.node, in.span);
          if (open != SpanTree::kRoot) v = event_field(trace_.events[spans_.at(open).opener], in);
        }
        st[sp++] = v;
        break;
      }
      case Code::SpanOpen: {
        const EventCtx& ctx = side(in.side);
        st[sp++] = ctx.event == kNoEvent
                       ? Value::null()
                       : Value::boolean(in.span != kNoSpan &&
                                        spans_.innermost(ctx.node, in.span) != SpanTree::kRoot);
        break;
      }
      case Code::Field: st[sp++] = field(p, in.node, scope); break;
      case Code::Tree: st[sp++] = eval_node(p, in.node, scope); break;
      case Code::Not: st[sp - 1] = Value::boolean(!truthy(st[sp - 1])); break;
      case Code::Neg: st[sp - 1] = Value::integer(wrap(0, st[sp - 1].i, '-')); break;
      case Code::ToBool: st[sp - 1] = Value::boolean(truthy(st[sp - 1])); break;
      case Code::JumpIfFalse:
        if (!truthy(st[sp - 1])) {
          st[sp - 1] = Value::boolean(false);
          pc = in.jump;
        } else {
          --sp;
        }
        break;
      case Code::JumpIfTrue:
        if (truthy(st[sp - 1])) {
          st[sp - 1] = Value::boolean(true);
          pc = in.jump;
        } else {
          --sp;
        }
        break;
      default: {
        const Value b = in.rhs_const ? in.value : st[--sp];
        Value& a = st[sp - 1];
        switch (in.code) {
          case Code::Eq: a = Value::boolean(equal(a, b)); break;
          case Code::Ne: a = Value::boolean(!equal(a, b)); break;
          case Code::Lt: a = Value::boolean(compare(p, in.node, a, b) == -1); break;
          case Code::Le: {
            int c = compare(p, in.node, a, b);
            a = Value::boolean(c == -1 || c == 0);
            break;
          }
          case Code::Gt: a = Value::boolean(compare(p, in.node, a, b) == 1); break;
          case Code::Ge: {
            int c = compare(p, in.node, a, b);
            a = Value::boolean(c == 1 || c == 0);
            break;
          }
          case Code::In: a = Value::boolean(member(p, a, b)); break;
          case Code::NotIn: a = Value::boolean(!member(p, a, b)); break;
          case Code::Matches: a = Value::boolean(matches(p, in.node, a, b)); break;
          case Code::Add: a = Value::integer(wrap(a.i, b.i, '+')); break;
          case Code::Sub: a = Value::integer(wrap(a.i, b.i, '-')); break;
          case Code::Mul: a = Value::integer(wrap(a.i, b.i, '*')); break;
          case Code::Div:
          case Code::Mod: {
            const bool div = in.code == Code::Div;
            if (b.i == 0) fail(p, in.node, div ? "division by zero" : "modulo by zero");
            if (b.i == -1)
              a = Value::integer(div ? wrap(0, a.i, '-') : 0);
            else
              a = Value::integer(div ? a.i / b.i : a.i % b.i);
            break;
          }
          default: break;
        }
      }
    }
  }
  // Field by field: the steps stored them so, and one wide load of what narrower stores
  // just wrote waits for them to reach the cache (a visible cost per evaluation).
  return Value{st[0].type, st[0].i, st[0].text};
}

std::string_view Evaluator::text(const Value& v) const {
  if (v.type != ValueType::Str) return {};
  if (v.text) return v.text;
  return trace_.strings.get(static_cast<StrId>(v.i));
}

bool Evaluator::truthy(const Value& v) const {
  switch (v.type) {
    case ValueType::Null: return false;
    case ValueType::Bool:
    case ValueType::Int: return v.i != 0;
    case ValueType::Str: return !text(v).empty();
    case ValueType::Stack: return v.i != 0 && !trace_.stacks[v.i].ips.empty();
    case ValueType::List: return true;
  }
  return false;
}

StackId Evaluator::stack_of(const EventCtx& ctx) const {
  StackCacheEntry& cached = stack_cache_[ctx.event & 3];
  if (cached.event == ctx.event && cached.node == ctx.node) return cached.stack;
  StackId found = trace_.events[ctx.event].stack;
  for (uint32_t n = ctx.node; !found && n != SpanTree::kRoot; n = spans_.at(n).parent)
    found = trace_.events[spans_.at(n).opener].stack;
  cached = {ctx.event, ctx.node, found};
  return found;
}

void Evaluator::fail(const PreparedExpr& p, uint32_t n, const std::string& message) const {
  Diagnostic d;
  d.source = p.origin->source;
  d.loc = p.expr->nodes[n].loc;
  d.message = fmt::format("{} (rule {})", message, p.origin->id);
  throw DiagnosticError(std::move(d));
}

Value Evaluator::string_value(std::string_view s) {
  StrId id = trace_.strings.find(s);
  if (id != StringTable::kMissing) return {ValueType::Str, id, nullptr};
  scratch_.emplace_back(s);
  return {ValueType::Str, StringTable::kMissing, scratch_.back().c_str()};
}

Value Evaluator::field(const PreparedExpr& p, uint32_t n, const EvalScope& scope) {
  const rules::FieldRef& ref = p.expr->nodes[n].field;
  if (ref.scope == FieldScope::EdgeKind) return scope.edge_kind ? *scope.edge_kind : Value::null();
  const EventCtx& ctx = ref.side == Side::From ? scope.from
                        : ref.side == Side::To ? scope.to
                                               : scope.self;
  if (ctx.event == kNoEvent) return Value::null();
  const Event& e = trace_.events[ctx.event];
  auto event_field = [&](const Event& ev) -> Value {
    if (ev.kind != ref.kind || ref.field < 0) return Value::null();
    const auto& fields = trace_.schema.kind(ev.kind).fields;
    if (static_cast<size_t>(ref.field) >= fields.size()) return Value::null();
    uint64_t raw = trace_.value(ev, ref.field);
    if (fields[ref.field].type == FieldType::Str)
      return {ValueType::Str, static_cast<int64_t>(raw), nullptr};
    return Value::integer(static_cast<int64_t>(raw));
  };
  switch (ref.scope) {
    case FieldScope::EventField: return event_field(e);
    case FieldScope::SpanOpen: {
      SpanId span = p.extra[n].span;
      return Value::boolean(span != kNoSpan && spans_.innermost(ctx.node, span) != SpanTree::kRoot);
    }
    case FieldScope::SpanField: {
      SpanId span = p.extra[n].span;
      if (span == kNoSpan) return Value::null();
      uint32_t open = spans_.innermost(ctx.node, span);
      if (open == SpanTree::kRoot) return Value::null();
      return event_field(trace_.events[spans_.at(open).opener]);
    }
    case FieldScope::Ts: return Value::integer(static_cast<int64_t>(e.ts));
    case FieldScope::Tid: return Value::integer(e.tid);
    case FieldScope::Pid: {
      const ThreadInfo* t = thread_info(e.tid);
      return Value::integer(t ? t->pid : 0);
    }
    case FieldScope::Cpu: return Value::integer(e.cpu);
    case FieldScope::KindName: {
      StrId id = kind_names_[e.kind];
      if (id != StringTable::kMissing) return {ValueType::Str, id, nullptr};
      return {ValueType::Str, StringTable::kMissing, trace_.schema.kind(e.kind).name.c_str()};
    }
    case FieldScope::Stack: return {ValueType::Stack, stack_of(ctx), nullptr};
    case FieldScope::ThreadComm: {
      const ThreadInfo* t = thread_info(e.tid);
      return {ValueType::Str, t ? t->comm : 0, nullptr};
    }
    case FieldScope::ThreadKernel: {
      const ThreadInfo* t = thread_info(e.tid);
      return Value::boolean(t && t->kernel);
    }
    case FieldScope::ProcessComm:
    case FieldScope::ProcessExe: {
      const ProcessInfo* pr = process_of(e.tid);
      StrId id = !pr ? 0 : ref.scope == FieldScope::ProcessComm ? pr->comm : pr->exe;
      return {ValueType::Str, id, nullptr};
    }
    case FieldScope::EdgeKind: break;  // answered above: it needs no event
  }
  return Value::null();
}

bool Evaluator::equal(const Value& a, const Value& b) const {
  if (a.type == ValueType::Str && b.type == ValueType::Str) {
    bool a_in = a.i != StringTable::kMissing, b_in = b.i != StringTable::kMissing;
    if (a_in && b_in) return a.i == b.i;
    if (a_in != b_in) return false;  // a text the trace lacks cannot equal one it has
    return text(a) == text(b);
  }
  bool a_num = a.type == ValueType::Int || a.type == ValueType::Bool;
  bool b_num = b.type == ValueType::Int || b.type == ValueType::Bool;
  if (a_num && b_num) return a.i == b.i;
  if (a.type == ValueType::Null || b.type == ValueType::Null) return a.type == b.type;
  if (a.type == ValueType::Stack && b.type == ValueType::Stack) return a.i == b.i;
  return false;
}

// -1, 0, 1; 2 when the two cannot be ordered (then every ordering comparison is false).
int Evaluator::compare(const PreparedExpr&, uint32_t, const Value& a, const Value& b) const {
  if (a.type == ValueType::Str && b.type == ValueType::Str) {
    int c = text(a).compare(text(b));
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  bool a_num = a.type == ValueType::Int || a.type == ValueType::Bool;
  bool b_num = b.type == ValueType::Int || b.type == ValueType::Bool;
  if (a_num && b_num) return a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
  return 2;
}

namespace {

// The user frames' symbols of a stack. Rules see the user stack only, as before kernel
// frames were recorded: every blocked call's kernel stack shares the scheduler's frames,
// which would make any two stacks look related.
std::span<const StrId> user_symbols(const Stack& s) {
  const size_t kernel = std::min<size_t>(s.kernel, s.symbols.size());
  return std::span<const StrId>(s.symbols).subspan(kernel);
}

}  // namespace

bool Evaluator::member(const PreparedExpr& p, const Value& x, const Value& list) const {
  if (list.type == ValueType::List) {
    const auto& extra = p.extra[list.i];
    if (x.type == ValueType::Str) {
      if (x.i != StringTable::kMissing) {
        const auto id = static_cast<StrId>(x.i);
        return (id >> 6) < extra.str_bits.size() && (extra.str_bits[id >> 6] >> (id & 63)) & 1;
      }
      // A text the trace lacks: compare with the list's texts.
      for (uint32_t kid : p.expr->nodes[list.i].kids)
        if (p.expr->nodes[kid].type == ValueType::Str && p.expr->nodes[kid].sval == x.text)
          return true;
      return false;
    }
    if (x.type == ValueType::Int || x.type == ValueType::Bool)
      return std::binary_search(extra.ints.begin(), extra.ints.end(), x.i);
    return false;
  }
  if (list.type == ValueType::Stack) {
    if (x.type != ValueType::Str || x.i == StringTable::kMissing || list.i == 0) return false;
    for (StrId sym : user_symbols(trace_.stacks[list.i]))
      if (sym == static_cast<StrId>(x.i)) return true;
  }
  return false;
}

bool Evaluator::glob(const PreparedExpr& p, uint32_t n, bool cached, StrId id,
                     const char* pattern) {
  if (!cached) return fnmatch(pattern, trace_.strings.get(id).data(), 0) == 0;
  auto& cache = p.extra[n].glob_cache;
  if (cache.size() <= id) cache.resize(trace_.strings.size(), -1);
  if (cache[id] < 0) cache[id] = fnmatch(pattern, trace_.strings.get(id).data(), 0) == 0;
  return cache[id] == 1;
}

bool Evaluator::matches(const PreparedExpr& p, uint32_t n, const Value& subject,
                        const Value& pattern) {
  if (pattern.type != ValueType::Str) return false;
  const ExprNode& node = p.expr->nodes[n];
  // Cache per string id when the pattern is a constant (the common case).
  bool cached = p.expr->nodes[node.kids[1]].op == Op::Const;
  // Every text a Value names is NUL-terminated (trace strings, constants, Lua results).
  const char* pat = text(pattern).data();
  if (subject.type == ValueType::Str) {
    if (subject.i == StringTable::kMissing) return fnmatch(pat, subject.text, 0) == 0;
    return glob(p, n, cached, static_cast<StrId>(subject.i), pat);
  }
  if (subject.type == ValueType::Stack && subject.i != 0) {
    // A few thousand stacks serve millions of wake-ups: remember each stack's answer.
    int8_t* known = nullptr;
    if (cached) {
      auto& cache = p.extra[n].stack_cache;
      if (cache.size() <= static_cast<size_t>(subject.i)) cache.resize(trace_.stacks.size(), -1);
      known = &cache[subject.i];
      if (*known >= 0) return *known == 1;
    }
    bool any = false;
    for (StrId sym : user_symbols(trace_.stacks[subject.i]))
      if (sym != 0 && glob(p, n, cached, sym, pat)) {
        any = true;
        break;
      }
    if (known) *known = any;
    return any;
  }
  return false;
}

rules::LuaValue Evaluator::to_lua(const PreparedExpr& p, const Value& v) const {
  using rules::LuaValue;
  switch (v.type) {
    case ValueType::Null: return LuaValue::nil();
    case ValueType::Bool: return LuaValue::boolean(v.i != 0);
    case ValueType::Int: return LuaValue::integer(v.i);
    case ValueType::Str: return LuaValue::string(std::string(text(v)));
    case ValueType::Stack: {
      LuaValue list;
      list.type = LuaValue::Type::List;
      if (v.i == 0) return list;
      const Stack& s = trace_.stacks[v.i];
      for (size_t f = std::min<size_t>(s.kernel, s.ips.size()); f < s.ips.size(); ++f) {
        StrId sym = f < s.symbols.size() ? s.symbols[f] : 0;
        list.list.push_back(LuaValue::string(sym ? std::string(trace_.strings.get(sym))
                                                 : fmt::format("{:#x}", s.ips[f])));
      }
      return list;
    }
    case ValueType::List: {
      LuaValue list;
      list.type = LuaValue::Type::List;
      for (uint32_t kid : p.expr->nodes[v.i].kids) {
        const ExprNode& k = p.expr->nodes[kid];
        list.list.push_back(k.type == ValueType::Str ? LuaValue::string(k.sval)
                                                     : LuaValue::integer(k.ival));
      }
      return list;
    }
  }
  return LuaValue::nil();
}

Value Evaluator::call(const PreparedExpr& p, uint32_t n, const EvalScope& scope) {
  const ExprNode& node = p.expr->nodes[n];
  if (node.sval == "len") {
    Value x = eval_node(p, node.kids.at(0), scope);
    switch (x.type) {
      case ValueType::Str: return Value::integer(static_cast<int64_t>(text(x).size()));
      case ValueType::Stack:
        return Value::integer(
            x.i ? static_cast<int64_t>(
                      trace_.stacks[x.i].ips.size() -
                      std::min<size_t>(trace_.stacks[x.i].kernel, trace_.stacks[x.i].ips.size()))
                : 0);
      case ValueType::List:
        return Value::integer(static_cast<int64_t>(p.expr->nodes[x.i].kids.size()));
      default: return Value::integer(0);
    }
  }
  if (node.sval == "shared_symbols") {
    Value a = eval_node(p, node.kids.at(0), scope);
    Value b = eval_node(p, node.kids.at(1), scope);
    Value ignore = node.kids.size() > 2 ? eval_node(p, node.kids[2], scope) : Value::null();
    if (a.type != ValueType::Stack || b.type != ValueType::Stack || a.i == 0 || b.i == 0)
      return Value::integer(0);
    const auto sa = user_symbols(trace_.stacks[a.i]);
    const auto sb = user_symbols(trace_.stacks[b.i]);
    int64_t shared = 0;
    for (size_t i = 0; i < sa.size(); ++i) {
      StrId sym = sa[i];
      if (sym == 0 || std::find(sa.begin(), sa.begin() + i, sym) != sa.begin() + i) continue;
      if (std::find(sb.begin(), sb.end(), sym) == sb.end()) continue;
      if (ignore.type == ValueType::List && member(p, Value{ValueType::Str, sym, nullptr}, ignore))
        continue;
      ++shared;
    }
    return Value::integer(shared);
  }
  // lua.NAME (prepare() guarantees the sandbox).
  const auto& extra = p.extra[n];
  std::vector<rules::LuaValue> args;
  args.reserve(node.kids.size());
  for (uint32_t kid : node.kids) args.push_back(to_lua(p, eval_node(p, kid, scope)));
  rules::LuaValue r = extra.lua->call(extra.lua_name, args, {p.origin->pack, p.origin->id});
  switch (r.type) {
    case rules::LuaValue::Type::Bool: return Value::boolean(r.b);
    case rules::LuaValue::Type::Int: return Value::integer(r.i);
    case rules::LuaValue::Type::Number: return Value::integer(static_cast<int64_t>(r.n));
    case rules::LuaValue::Type::Str: return string_value(r.s);
    default: return Value::null();
  }
}

Value Evaluator::eval_node(const PreparedExpr& p, uint32_t n, const EvalScope& scope) {
  const ExprNode& node = p.expr->nodes[n];
  auto kid = [&](size_t k) { return eval_node(p, node.kids[k], scope); };
  switch (node.op) {
    case Op::Const: return constant_value(p, n);
    case Op::Field: return field(p, n, scope);
    case Op::Not: return Value::boolean(!truthy(kid(0)));
    case Op::Neg: return Value::integer(wrap(0, kid(0).i, '-'));
    case Op::And: return Value::boolean(truthy(kid(0)) && truthy(kid(1)));
    case Op::Or: return Value::boolean(truthy(kid(0)) || truthy(kid(1)));
    case Op::Eq: return Value::boolean(equal(kid(0), kid(1)));
    case Op::Ne: return Value::boolean(!equal(kid(0), kid(1)));
    case Op::Lt: return Value::boolean(compare(p, n, kid(0), kid(1)) == -1);
    case Op::Le: {
      int c = compare(p, n, kid(0), kid(1));
      return Value::boolean(c == -1 || c == 0);
    }
    case Op::Gt: return Value::boolean(compare(p, n, kid(0), kid(1)) == 1);
    case Op::Ge: {
      int c = compare(p, n, kid(0), kid(1));
      return Value::boolean(c == 1 || c == 0);
    }
    case Op::In:
    case Op::NotIn: {
      Value x = kid(0), list = kid(1);
      bool in = member(p, x, list);
      return Value::boolean(node.op == Op::In ? in : !in);
    }
    case Op::Matches: {
      Value subject = kid(0), pattern = kid(1);
      return Value::boolean(matches(p, n, subject, pattern));
    }
    case Op::Add: return Value::integer(wrap(kid(0).i, kid(1).i, '+'));
    case Op::Sub: return Value::integer(wrap(kid(0).i, kid(1).i, '-'));
    case Op::Mul: return Value::integer(wrap(kid(0).i, kid(1).i, '*'));
    case Op::Div:
    case Op::Mod: {
      int64_t a = kid(0).i, b = kid(1).i;
      if (b == 0) fail(p, n, node.op == Op::Div ? "division by zero" : "modulo by zero");
      if (b == -1) return Value::integer(node.op == Op::Div ? wrap(0, a, '-') : 0);
      return Value::integer(node.op == Op::Div ? a / b : a % b);
    }
    case Op::Call: return call(p, n, scope);
  }
  return Value::null();
}

}  // namespace cw::engine
