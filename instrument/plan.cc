#include "instrument/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace cw::instrument {

namespace {

std::string where_of(const rules::RuleOrigin& origin, const SourceLoc& loc) {
  std::string path = origin.source ? origin.source->path : origin.pack;
  if (loc.line == 0) return path;
  return fmt::format("{}:{}:{}", path, loc.line, loc.col);
}

// Walks one rule's expressions for comparisons of a called function's name.
class FunctionNames {
 public:
  FunctionNames(const rules::RuleOrigin& origin, std::map<std::string, std::set<std::string>>& out,
                std::vector<std::string>& warnings)
      : origin_(origin), out_(out), warnings_(warnings) {
    const Schema& s = Schema::builtin();
    call_enter_ = s.find("call_enter");
    call_exit_ = s.find("call_exit");
  }

  // `about_calls`: the expression is over a call_enter/call_exit event (the rule's `at`
  // or `within call`), so naming no function there means "every call".
  void visit(const rules::CompiledExpr& e, bool about_calls) {
    if (e.empty()) {
      if (about_calls)
        warn({}, "names no function (add `where fn == \"NAME\"`); nothing is probed for it");
      return;
    }
    named_ = false;
    walk(e, e.root);
    if (about_calls && !named_ && !warned_)
      warn(e.nodes[e.root].loc, "names no function with == or in; nothing is probed for it");
  }

 private:
  bool is_fn(const rules::ExprNode& n) const {
    if (n.op != rules::Op::Field) return false;
    const rules::FieldRef& f = n.field;
    const Schema& s = Schema::builtin();
    if (f.scope == rules::FieldScope::EventField && (f.kind == call_enter_ || f.kind == call_exit_))
      return f.field >= 0 && s.kind(f.kind).fields[f.field].name == "fn";
    if (f.scope == rules::FieldScope::SpanField && f.span == "call")
      return f.kind != kNoKind && f.field >= 0 && s.kind(f.kind).fields[f.field].name == "fn";
    return false;
  }

  void add_const(const rules::CompiledExpr& e, const rules::ExprNode& c) {
    if (c.op != rules::Op::Const) return;
    if (c.type == rules::ValueType::Str) {
      out_[c.sval].insert(origin_.id);
      named_ = true;
    } else if (c.type == rules::ValueType::List) {
      for (uint32_t k : c.kids) add_const(e, e.nodes[k]);
    }
  }

  void walk(const rules::CompiledExpr& e, uint32_t at) {
    const rules::ExprNode& n = e.nodes[at];
    if ((n.op == rules::Op::Eq || n.op == rules::Op::In) && n.kids.size() == 2) {
      const rules::ExprNode& a = e.nodes[n.kids[0]];
      const rules::ExprNode& b = e.nodes[n.kids[1]];
      if (is_fn(a)) add_const(e, b);
      if (n.op == rules::Op::Eq && is_fn(b)) add_const(e, a);
    } else if (n.op == rules::Op::Matches && !n.kids.empty() && is_fn(e.nodes[n.kids[0]])) {
      warn(n.loc,
           "matches function names by pattern; the recorder probes only functions named "
           "with == or in");
    }
    for (uint32_t k : n.kids) walk(e, k);
  }

  void warn(const SourceLoc& loc, const std::string& text) {
    warned_ = true;
    const SourceLoc& at = loc.line != 0 ? loc : origin_.loc;
    warnings_.push_back(fmt::format("{}: rule {} {}", where_of(origin_, at), origin_.id, text));
  }

  const rules::RuleOrigin& origin_;
  std::map<std::string, std::set<std::string>>& out_;
  std::vector<std::string>& warnings_;
  KindId call_enter_ = kNoKind, call_exit_ = kNoKind;
  bool named_ = false;
  bool warned_ = false;
};

}  // namespace

InstrumentationPlan plan_instrumentation(const rules::RuleSet& rules) {
  InstrumentationPlan plan;
  for (const rules::FlagRule& f : rules.flags) {
    PlannedFlag p;
    p.id = f.origin.id;
    p.symbol = f.symbol;
    p.binary = f.binary;
    p.address = f.address;
    p.size = static_cast<uint8_t>(f.size);
    p.reads = f.access != rules::FlagRule::Access::Write;
    p.writes = f.access != rules::FlagRule::Access::Read;
    p.where = where_of(f.origin, f.origin.loc);
    plan.flags.push_back(std::move(p));
  }

  const Schema& s = Schema::builtin();
  const KindId call_enter = s.find("call_enter"), call_exit = s.find("call_exit");
  std::map<std::string, std::set<std::string>> names;
  for (const rules::SplitRule& r : rules.splits) {
    FunctionNames v(r.origin, names, plan.warnings);
    bool about_calls =
        r.mode == rules::SplitRule::Mode::AtEvent && (r.at == call_enter || r.at == call_exit);
    v.visit(r.where, about_calls);
  }
  for (const rules::BatchRule& r : rules.batches) {
    FunctionNames v(r.origin, names, plan.warnings);
    v.visit(r.within_where, r.span_open == call_enter);
    FunctionNames items(r.origin, names, plan.warnings);
    items.visit(r.item_where, r.item == call_enter || r.item == call_exit);
  }
  for (const rules::LinkRule& r : rules.links) {
    FunctionNames(r.origin, names, plan.warnings).visit(r.where, false);
    // A link that pairs calls names them in `from_where`/`to_where` as often as in `where`.
    FunctionNames(r.origin, names, plan.warnings).visit(r.from_where, false);
    FunctionNames(r.origin, names, plan.warnings).visit(r.to_where, false);
  }
  for (const rules::EdgeRule& r : rules.edges)
    FunctionNames(r.origin, names, plan.warnings).visit(r.where, false);

  for (auto& [name, ids] : names) plan.functions.push_back({name, {ids.begin(), ids.end()}});
  return plan;
}

}  // namespace cw::instrument
