// What the checker's passes share (rules/checker.h runs them). One Checker object walks
// the packs; its member functions are defined by pass, one file each:
//   checker.cc            the driver: set-up order, the pass over files, dispatch by kind
//   check_resolve.cc      requires (visibility), lists, Lua, links, rule ids, names
//   check_kinds.cc        each rule kind's check: what its clauses' values compile to
//   check_clauses.cc      a rule's clauses by the table of kinds (dsl/rule_kinds.h), and
//                         the values several kinds read alike
//   check_expressions.cc  expressions: names, calls, operators, types
//   check_pack_tests.cc   `test` blocks and their expectations
//   check_disables.cc     `disable PACK/RULE`
// Internal to rules/: nothing outside includes this.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "dsl/ast.h"
#include "rules/checker.h"
#include "rules/lua_sandbox.h"
#include "trace/schema.h"

namespace cw::rules::check {

inline const Schema& schema() {
  return Schema::builtin();
}

inline std::string joined(const std::vector<std::string>& path, size_t from = 0) {
  std::string out;
  for (size_t i = from; i < path.size(); ++i) {
    if (i > from) out += '.';
    out += path[i];
  }
  return out;
}

inline uint32_t width(size_t n) {
  return static_cast<uint32_t>(std::max<size_t>(1, n));
}

// "a, b or c"
inline std::string alternatives(const std::vector<std::string>& options) {
  std::string out;
  for (size_t i = 0; i < options.size(); ++i) {
    if (i > 0) out += (i + 1 == options.size()) ? " or " : ", ";
    out += options[i];
  }
  return out;
}

inline std::vector<std::string> strings(std::span<const std::string_view> words) {
  return {words.begin(), words.end()};
}

std::string_view type_name(ValueType t);
ValueType value_type(FieldType t);
// Int and Bool compare with each other; a Lua result compares with anything.
bool comparable(ValueType a, ValueType b);
inline bool is_bool(ValueType t) {
  return t == ValueType::Bool || t == ValueType::Null;
}
inline bool is_int(ValueType t) {
  return t == ValueType::Int || t == ValueType::Null;
}
std::optional<int64_t> const_int(const dsl::Expr& e);

// The names one event offers (docs/rules.md "Names"), for resolution and hints.
std::vector<std::string> names_on(KindId kind);
std::optional<FieldRef> resolve_on(KindId kind, std::span<const std::string> path, Side side);

// How names in an expression resolve: one event (split, batch, flag) or a pair of events
// reached through `from.` and `to.` (link, edge).
struct Scope {
  bool pair = false;
  KindId self = kNoKind;
  KindId from = kNoKind, to = kNoKind;
  bool classified = false;  // a boost/prune rule: `edge.kind` names the classified kind
  // An answer rule's clause ("subject" or "choose"): its events are of no known kind, so
  // only the names every event has are allowed (answer_names()).
  const char* answer = nullptr;
};

// What an answer rule can name on an event of unknown kind: no event fields, and no span
// (diagnosis evaluates answers on a segment's first event or an edge's evidence, outside
// the span walk of the graph build).
const std::vector<std::string>& answer_names();
std::string answer_names_text();

struct NamedList {
  std::vector<ExprNode> elements;  // Const nodes
  size_t use = 0;                  // index into LintFacts::lists
};

struct PackState {
  const PackUnit* unit = nullptr;
  std::vector<size_t> visible;  // this pack, then everything it requires, in load order
  std::map<std::string, NamedList> lists;
  std::unique_ptr<LuaSandbox> lua;
  std::map<std::string, uint32_t> links;  // local id -> index in RuleSet::links
  std::map<std::string, std::pair<SourcePtr, SourceLoc>> rule_ids;
  std::map<std::string, std::pair<SourcePtr, SourceLoc>> test_names;
};

// A rule's clauses by keyword. Every keyword a check asks about is noted in `read` (see
// LintFacts::clauses_read).
class ClauseMap {
 public:
  explicit ClauseMap(std::set<std::string>& read) : read_(read) {}
  size_t count(const std::string& keyword) const {
    read_.insert(keyword);
    return clauses_.count(keyword);
  }
  // The clause, or nullptr.
  const dsl::Clause* operator[](const std::string& keyword) const {
    read_.insert(keyword);
    auto it = clauses_.find(keyword);
    return it == clauses_.end() ? nullptr : it->second;
  }
  bool add(const dsl::Clause& clause) { return clauses_.emplace(clause.keyword, &clause).second; }
  bool has(const std::string& keyword) const { return clauses_.count(keyword) != 0; }

 private:
  std::map<std::string, const dsl::Clause*> clauses_;
  std::set<std::string>& read_;
};

uint32_t push(CompiledExpr& out, ExprNode node);

// Sandbox errors read "FILE:LINE: error: message"; point the diagnostic at that line.
void report_lua_error(Diagnostics& diags, const SourcePtr& source, SourceLoc fallback,
                      const std::string& what);

class Checker {
 public:
  Checker(const std::vector<PackUnit>& units, RuleSet& out, Diagnostics& diags)
      : units_(units), out_(out), diags_(diags) {}

  LintFacts run();

  // Each kind's check (check_kinds.cc): reads a rule's clauses and appends what it
  // compiles to to its kind's RuleSet list. Specialised there once per kind of the table,
  // where the kind's row of kRuleKindSemantics (rules/kind_semantics.h) names it; this
  // one is deleted, so a row whose kind has no check does not build.
  template <dsl::RuleKind kind>
  void check(const dsl::Rule& rule) = delete;

 private:
  // set-up, before the pass over the files (check_resolve.cc)
  void compute_visibility();
  void collect_lists(size_t p);
  void load_lua(size_t p);
  void index_links(size_t p);
  void check_rule_id(const dsl::Rule& rule);

  // one rule: its id, then its kind's check (checker.cc)
  void check_rule(const dsl::Rule& rule);
  // the link check's `join` (check_kinds.cc)
  void compile_join(const dsl::Expr& e, LinkRule& link);

  // tests (check_pack_tests.cc)
  void check_test(const dsl::TestBlock& test);
  bool check_expect(const dsl::Expect& expect, Expectation& out);

  // disables (check_disables.cc)
  void apply_disables();

  // clauses and their values (check_clauses.cc)
  ClauseMap collect(const dsl::Rule& rule);
  const dsl::Expr* single(const dsl::Clause& clause);
  std::optional<std::string> word(const dsl::Expr& e, const std::string& what);
  std::optional<size_t> choice(const dsl::Clause& clause, const std::string& what,
                               const std::vector<std::string>& options);
  KindId event_kind(const dsl::Clause& clause);
  std::optional<uint64_t> duration(const dsl::Expr& e, const std::string& clause);
  std::optional<int> priority(const dsl::Clause& clause);
  // A clause that takes no value (`loop`, `ends_polling`): true when written alone; a value
  // is an error whose hint says what the clause means.
  bool bare(const dsl::Clause& clause, const std::string& name, const std::string& meaning);

  // ids (check_resolve.cc)
  std::optional<std::string> id_text(const dsl::Expr& e);
  std::optional<uint32_t> find_link(const dsl::Expr& e, const dsl::Rule& rule);
  const NamedList* find_list(const std::string& name);
  bool lua_function_visible(const std::string& name) const;

  // expressions (check_expressions.cc)
  bool compile_root(const dsl::Expr& e, const Scope& scope, ValueType want,
                    const std::string& clause, CompiledExpr& out);
  std::optional<uint32_t> compile(const dsl::Expr& e, const Scope& scope, CompiledExpr& out);
  std::optional<uint32_t> compile_name(const dsl::Expr& e, const Scope& scope, CompiledExpr& out);
  std::optional<uint32_t> compile_call(const dsl::Expr& e, const Scope& scope, CompiledExpr& out);
  std::optional<uint32_t> compile_binary(const dsl::Expr& e, const Scope& scope, CompiledExpr& out);
  std::optional<uint32_t> compile_list(const dsl::Expr& e, CompiledExpr& out);

  void error(const dsl::Expr& e, std::string message, std::vector<std::string> hints = {}) {
    diags_.error(source_, e.loc, e.length, std::move(message), std::move(hints));
  }
  void error_at(SourceLoc loc, size_t length, std::string message,
                std::vector<std::string> hints = {}) {
    diags_.error(source_, loc, width(length), std::move(message), std::move(hints));
  }
  RuleOrigin origin(const dsl::Rule& rule) const;

  const std::vector<PackUnit>& units_;
  RuleSet& out_;
  Diagnostics& diags_;
  std::vector<PackState> packs_;
  std::map<std::string, size_t> pack_index_;
  std::unordered_map<const dsl::Rule*, uint32_t> link_of_rule_;
  LintFacts facts_;

  // what the pass is looking at
  size_t pack_ = 0;
  SourcePtr source_;
};

}  // namespace cw::rules::check
