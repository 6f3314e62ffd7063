// Checker pass: a clause's value, as each kind's check (check_kinds.cc) reads it: the
// rule's clauses by keyword, checked against the table of kinds (dsl/rule_kinds.h), and
// the values every kind spells the same way (a word, a choice, an event kind, a duration,
// a priority).
#include <fmt/format.h>

#include "dsl/rule_kinds.h"
#include "rules/check_context.h"

namespace cw::rules::check {

// The rule's clauses by keyword; unknown, repeated and missing ones (by the table of
// kinds) are reported.
ClauseMap Checker::collect(const dsl::Rule& rule) {
  const dsl::RuleKindInfo& kind = dsl::rule_kind_info(rule.kind);
  const std::vector<std::string> allowed = strings(kind.clauses);
  ClauseMap out(facts_.clauses_read[rule.kind]);
  for (const auto& clause : rule.clauses) {
    if (std::find(allowed.begin(), allowed.end(), clause.keyword) == allowed.end()) {
      error_at(clause.loc, clause.keyword.size(),
               fmt::format("unknown clause '{}' in {} rule", clause.keyword, kind.keyword),
               did_you_mean(clause.keyword, allowed));
      continue;
    }
    if (!out.add(clause)) {
      error_at(clause.loc, clause.keyword.size(),
               fmt::format("clause '{}' given twice", clause.keyword));
      continue;
    }
  }
  for (const std::string& name : strings(kind.required))
    if (!out.has(name))
      error_at(rule.id_loc, rule.id.size(),
               fmt::format("missing clause '{}' in {} rule '{}'", name, kind.keyword, rule.id));
  return out;
}

const dsl::Expr* Checker::single(const dsl::Clause& clause) {
  if (clause.args.size() == 1) return clause.args[0].get();
  error_at(clause.loc, clause.keyword.size(),
           fmt::format("clause '{}' takes one value, not {}", clause.keyword, clause.args.size()));
  return nullptr;
}

std::optional<std::string> Checker::word(const dsl::Expr& e, const std::string& what) {
  if (e.kind == dsl::ExprKind::Name) return joined(e.path);
  if (e.kind == dsl::ExprKind::Str) return e.sval;
  error(e, fmt::format("expected {} here", what));
  return std::nullopt;
}

std::optional<size_t> Checker::choice(const dsl::Clause& clause, const std::string& what,
                                      const std::vector<std::string>& options) {
  const dsl::Expr* e = single(clause);
  if (!e) return std::nullopt;
  auto w = word(*e, "a " + what);
  if (!w) return std::nullopt;
  auto it = std::find(options.begin(), options.end(), *w);
  if (it != options.end()) return static_cast<size_t>(it - options.begin());
  error(*e, fmt::format("unknown {} '{}' (expected {})", what, *w, alternatives(options)));
  return std::nullopt;
}

KindId Checker::event_kind(const dsl::Clause& clause) {
  const dsl::Expr* e = single(clause);
  if (!e) return kNoKind;
  auto name = word(*e, "an event kind");
  if (!name) return kNoKind;
  KindId kind = schema().find(*name);
  if (kind == kNoKind) {
    std::vector<std::string> kinds;
    for (const auto& k : schema().kinds()) kinds.push_back(k.name);
    error(*e, fmt::format("unknown event kind '{}'", *name), did_you_mean(*name, kinds));
  }
  return kind;
}

std::optional<uint64_t> Checker::duration(const dsl::Expr& e, const std::string& clause) {
  if (e.kind == dsl::ExprKind::Int && e.is_duration && e.ival >= 0)
    return static_cast<uint64_t>(e.ival);
  error(e, fmt::format("'{}' needs a duration like 10ms", clause));
  return std::nullopt;
}

bool Checker::bare(const dsl::Clause& clause, const std::string& name,
                   const std::string& meaning) {
  if (clause.args.empty()) return true;
  error(*clause.args[0], fmt::format("clause '{}' takes no value", name),
        {fmt::format("write `{}` alone on its line: {}", name, meaning)});
  return false;
}

std::optional<int> Checker::priority(const dsl::Clause& clause) {
  const dsl::Expr* e = single(clause);
  if (!e) return std::nullopt;
  auto value = const_int(*e);
  if (!value || e->is_duration || *value < -1000000 || *value > 1000000) {
    error(*e, "'priority' needs an integer between -1000000 and 1000000");
    return std::nullopt;
  }
  return static_cast<int>(*value);
}

}  // namespace cw::rules::check
