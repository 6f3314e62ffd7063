#include "rules/lint.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>

#include "trace/schema.h"

namespace cw::rules {

std::string field_display_name(const FieldRef& field) {
  const Schema& schema = Schema::builtin();
  std::string prefix = field.side == Side::From ? "from." : field.side == Side::To ? "to." : "";
  auto field_name = [&] { return schema.kind(field.kind).fields.at(field.field).name; };
  switch (field.scope) {
    case FieldScope::EventField: return prefix + field_name();
    case FieldScope::SpanOpen: return prefix + field.span;
    case FieldScope::SpanField: return prefix + field.span + "." + field_name();
    case FieldScope::Ts: return prefix + "ts";
    case FieldScope::Tid: return prefix + "tid";
    case FieldScope::Pid: return prefix + "pid";
    case FieldScope::Cpu: return prefix + "cpu";
    case FieldScope::KindName: return prefix + "kind";
    case FieldScope::Stack: return prefix + "stack";
    case FieldScope::ThreadComm: return prefix + "thread.comm";
    case FieldScope::ThreadKernel: return prefix + "thread.kernel";
    case FieldScope::ProcessComm: return prefix + "process.comm";
    case FieldScope::ProcessExe: return prefix + "process.exe";
    case FieldScope::EdgeKind: return "edge.kind";
  }
  return prefix + "?";
}

namespace {

// A value known without a trace.
struct Constant {
  bool text = false;  // else a number (ints and bools)
  int64_t number = 0;
  std::string str;
  bool operator==(const Constant&) const = default;
  std::string show() const { return text ? fmt::format("\"{}\"", str) : std::to_string(number); }
};

std::optional<Constant> fold(const CompiledExpr& e, uint32_t index) {
  const ExprNode& n = e.nodes[index];
  auto kid = [&](size_t i) { return fold(e, n.kids[i]); };
  auto number = [](int64_t v) { return Constant{false, v, {}}; };
  switch (n.op) {
    case Op::Const:
      if (n.type == ValueType::Str) return Constant{true, 0, n.sval};
      if (n.type == ValueType::Int || n.type == ValueType::Bool) return number(n.ival);
      return std::nullopt;
    case Op::Not: {
      auto a = kid(0);
      if (!a) return std::nullopt;
      return number(a->number == 0);
    }
    case Op::Neg: {
      auto a = kid(0);
      if (!a) return std::nullopt;
      return number(-a->number);
    }
    case Op::And:
    case Op::Or: {
      // One known side may decide the result: `false and x`, `x or true`.
      const bool decisive = n.op == Op::Or;
      auto a = kid(0), b = kid(1);
      if ((a && (a->number != 0) == decisive) || (b && (b->number != 0) == decisive))
        return number(decisive);
      if (a && b) return number(!decisive);
      return std::nullopt;
    }
    case Op::Eq:
    case Op::Ne:
    case Op::Lt:
    case Op::Le:
    case Op::Gt:
    case Op::Ge: {
      auto a = kid(0), b = kid(1);
      if (!a || !b || a->text != b->text) return std::nullopt;
      int c =
          a->text ? a->str.compare(b->str) : (a->number < b->number ? -1 : a->number > b->number);
      switch (n.op) {
        case Op::Eq: return number(c == 0);
        case Op::Ne: return number(c != 0);
        case Op::Lt: return number(c < 0);
        case Op::Le: return number(c <= 0);
        case Op::Gt: return number(c > 0);
        default: return number(c >= 0);
      }
    }
    case Op::In:
    case Op::NotIn: {
      const ExprNode& list = e.nodes[n.kids[1]];
      auto a = kid(0);
      if (!a || list.op != Op::Const || list.type != ValueType::List) return std::nullopt;
      bool found = false;
      for (uint32_t k : list.kids) {
        auto element = fold(e, k);
        if (!element) return std::nullopt;
        found = found || *element == *a;
      }
      return number(found == (n.op == Op::In));
    }
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
    case Op::Mod: {
      auto a = kid(0), b = kid(1);
      if (!a || !b) return std::nullopt;
      int64_t x = a->number, y = b->number;
      if (n.op == Op::Add) return number(static_cast<int64_t>(static_cast<uint64_t>(x) + y));
      if (n.op == Op::Sub) return number(static_cast<int64_t>(static_cast<uint64_t>(x) - y));
      if (n.op == Op::Mul) return number(static_cast<int64_t>(static_cast<uint64_t>(x) * y));
      if (y == 0 || (x == INT64_MIN && y == -1)) return std::nullopt;
      return number(n.op == Op::Div ? x / y : x % y);
    }
    default: return std::nullopt;
  }
}

bool same_field(const FieldRef& a, const FieldRef& b) {
  return a.side == b.side && a.scope == b.scope && a.kind == b.kind && a.field == b.field &&
         a.span == b.span;
}

// The conjuncts of a top-level `and` chain.
void conjuncts(const CompiledExpr& e, uint32_t index, std::vector<uint32_t>& out) {
  const ExprNode& n = e.nodes[index];
  if (n.op == Op::And) {
    conjuncts(e, n.kids[0], out);
    conjuncts(e, n.kids[1], out);
  } else {
    out.push_back(index);
  }
}

Diagnostic warning(const RuleOrigin& origin, SourceLoc loc, uint32_t length, std::string message) {
  Diagnostic d;
  d.severity = Severity::Warning;
  d.source = origin.source;
  d.loc = loc;
  d.length = std::max<uint32_t>(1, length);
  d.message = std::move(message);
  return d;
}

void lint_never_matches(const RuleOrigin& origin, const CompiledExpr& e, const char* clause,
                        std::vector<Diagnostic>& out) {
  if (e.empty()) return;
  if (auto value = fold(e, e.root); value && value->number == 0) {
    out.push_back(warning(
        origin, e.nodes[e.root].loc, 1,
        fmt::format("rule '{}' can never match: its '{}' is always false", origin.local, clause)));
    return;
  }
  std::vector<uint32_t> terms;
  conjuncts(e, e.root, terms);
  std::vector<std::pair<FieldRef, Constant>> required;
  for (uint32_t t : terms) {
    const ExprNode& n = e.nodes[t];
    if (n.op != Op::Eq) continue;
    for (size_t side = 0; side < 2; ++side) {
      const ExprNode& field = e.nodes[n.kids[side]];
      auto value = fold(e, n.kids[1 - side]);
      if (field.op != Op::Field || !value) continue;
      for (const auto& [earlier, earlier_value] : required)
        if (same_field(earlier, field.field) && !(earlier_value == *value)) {
          out.push_back(
              warning(origin, n.loc, 1,
                      fmt::format("rule '{}' can never match: '{}' cannot equal both {} and {}",
                                  origin.local, field_display_name(field.field),
                                  earlier_value.show(), value->show())));
          return;
        }
      required.emplace_back(field.field, *value);
    }
  }
}

bool always_matches(const CompiledExpr& e) {
  if (e.empty()) return true;
  auto value = fold(e, e.root);
  return value && value->number != 0;
}

}  // namespace

std::vector<Diagnostic> lint(const RuleSet& rules, const LintFacts& facts) {
  std::vector<Diagnostic> out;
  for (const auto& r : rules.links) lint_never_matches(r.origin, r.where, "where", out);
  for (const auto& r : rules.edges) lint_never_matches(r.origin, r.where, "where", out);
  for (const auto& r : rules.splits) lint_never_matches(r.origin, r.where, "where", out);
  for (const auto& r : rules.batches) {
    lint_never_matches(r.origin, r.within_where, "where", out);
    lint_never_matches(r.origin, r.item_where, "where", out);
  }
  for (const auto& r : rules.flags) lint_never_matches(r.origin, r.set, "set", out);
  for (const auto& r : rules.answers) {
    lint_never_matches(r.origin, r.subject, "subject", out);
    lint_never_matches(r.origin, r.choose, "choose", out);
  }

  // The first strong/weak rule that matches classifies a candidate: once a rule of a link
  // always matches, the classifying rules after it never run.
  std::map<uint32_t, const EdgeRule*> always;
  for (const auto& edge : rules.edges) {
    const bool classifies = edge.strength == Strength::Strong || edge.strength == Strength::Weak;
    if (!classifies) continue;
    if (auto it = always.find(edge.link); it != always.end()) {
      const RuleOrigin& first = it->second->origin;
      const bool same_pack = first.pack == edge.origin.pack;
      out.push_back(warning(edge.origin, edge.origin.loc,
                            static_cast<uint32_t>(edge.origin.local.size()),
                            fmt::format("rule '{}' is shadowed by '{}', which always matches first",
                                        same_pack ? edge.origin.local : edge.origin.id,
                                        same_pack ? first.local : first.id)));
      continue;
    }
    if (always_matches(edge.where)) always.emplace(edge.link, &edge);
  }

  std::set<uint32_t> used_links;
  for (const auto& edge : rules.edges) used_links.insert(edge.link);
  for (const auto& split : rules.splits) used_links.insert(split.link);
  for (uint32_t i = 0; i < rules.links.size(); ++i) {
    if (used_links.count(i)) continue;
    const RuleOrigin& o = rules.links[i].origin;
    out.push_back(
        warning(o, o.loc, static_cast<uint32_t>(o.local.size()),
                fmt::format("link '{}' has no edge rule, so it makes no edges", o.local)));
  }

  for (const auto& list : facts.lists) {
    if (list.used) continue;
    RuleOrigin o{list.pack, list.name, list.name, list.source, list.loc};
    out.push_back(warning(o, list.loc, 4, fmt::format("list '{}' is never used", list.name)));
  }
  return out;
}

}  // namespace cw::rules
