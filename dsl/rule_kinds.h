// The rule kinds of the rule language (docs/rules.md "Rules"), in one table. The grammar
// (dsl/grammar.h) spells its rule keywords, clause words and bare clause words from it, the
// parser stores the kind's enum value, the checker (rules/) takes each kind's clauses from it
// and each kind's check from a table in its order (rules/kind_semantics.h), `disable` reads
// its flags, the graph keeps the ids of each kind the graph build applies, by its enum, for
// the cache to encode, and `causeway rules kinds` prints it (tests/rule_removal.sh reads
// that). A new kind is added here first (docs/rules.md "Adding a rule kind"); rules does not
// build, and dsl, rules and graph tests fail, until the rest agrees with the table.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace cw::dsl {

enum class RuleKind : uint8_t { Split, Batch, Link, Edge, Flag, Holder, Answer };

struct RuleKindInfo {
  RuleKind kind;
  std::string_view keyword;      // as written: `split ID { ... }`
  std::string_view description;  // one line, for `causeway rules kinds`
  // `disable PACK/ID` can turn a rule of this kind off (docs/rules.md "Overriding").
  bool disableable;
  // The graph build applies it, so a pack test's graph shows what it does (holder rules
  // act when recording, answer rules when diagnosing).
  bool builds_graph;
  std::span<const std::string_view> clauses;   // the clauses it takes, in the docs' order
  std::span<const std::string_view> required;  // of those, the ones it must have
  std::span<const std::string_view> bare;      // of those, the ones written without a value
};

namespace rule_kind_clauses {
using C = std::string_view;
inline constexpr std::array<C, 7> split = {"at",        "peers", "where",   "cut",
                                           "neighbour", "loop",  "priority"};
inline constexpr std::array<C, 1> split_bare = {"loop"};
inline constexpr std::array<C, 6> batch = {"within", "item", "where", "per", "cut", "neighbour"};
inline constexpr std::array<C, 2> batch_required = {"within", "item"};
inline constexpr std::array<C, 9> link = {"from",  "to",     "join",       "pick",    "range",
                                          "where", "within", "from_where", "to_where"};
inline constexpr std::array<C, 3> link_required = {"from", "to", "join"};
inline constexpr std::array<C, 9> edge = {"link",         "where",       "strength",
                                          "kind",         "priority",    "cost",
                                          "ends_polling", "from_thread", "request"};
inline constexpr std::array<C, 2> edge_required = {"link", "strength"};
inline constexpr std::array<C, 2> edge_bare = {"ends_polling", "request"};
inline constexpr std::array<C, 7> flag = {"symbol", "binary", "address", "size",
                                          "set",    "access", "strength"};
inline constexpr std::array<C, 4> holder = {"syscall", "owner", "size", "peer"};
inline constexpr std::array<C, 1> holder_required = {"syscall"};
inline constexpr std::array<C, 3> answer = {"question", "subject", "choose"};
}  // namespace rule_kind_clauses

// In the order items are listed in messages ("expected pack, list, lua, split, ...").
inline constexpr std::array<RuleKindInfo, 7> kRuleKinds = {{
    {RuleKind::Split,
     "split",
     "where a thread's execution is cut into segments",
     true,
     true,
     rule_kind_clauses::split,
     {},
     rule_kind_clauses::split_bare},
    {RuleKind::Batch,
     "batch",
     "a loop that serves many requests",
     true,
     true,
     rule_kind_clauses::batch,
     rule_kind_clauses::batch_required,
     {}},
    {RuleKind::Link,
     "link",
     "which events pair up (candidate edges)",
     false,
     true,
     rule_kind_clauses::link,
     rule_kind_clauses::link_required,
     {}},
    {RuleKind::Edge, "edge", "how strong a link's candidate edge is", true, true,
     rule_kind_clauses::edge, rule_kind_clauses::edge_required, rule_kind_clauses::edge_bare},
    {RuleKind::Flag,
     "flag",
     "a global variable used as a signal",
     true,
     true,
     rule_kind_clauses::flag,
     {},
     {}},
    {RuleKind::Holder,
     "holder",
     "where a lock keeps its owner (read when recording)",
     true,
     false,
     rule_kind_clauses::holder,
     rule_kind_clauses::holder_required,
     {}},
    {RuleKind::Answer,
     "answer",
     "a saved answer to a diagnosis question",
     false,
     false,
     rule_kind_clauses::answer,
     rule_kind_clauses::answer,
     {}},
}};

constexpr const RuleKindInfo& rule_kind_info(RuleKind kind) {
  return kRuleKinds[static_cast<size_t>(kind)];
}
constexpr std::string_view rule_keyword(RuleKind kind) {
  return rule_kind_info(kind).keyword;
}
// The kind a keyword names, or nullptr.
constexpr const RuleKindInfo* find_rule_kind(std::string_view keyword) {
  for (const auto& k : kRuleKinds)
    if (k.keyword == keyword) return &k;
  return nullptr;
}

// The clause words of the table, once each, in table order: all of them (`clauses`), and
// those written alone (`bare`). The grammar spells its clause words from them
// (dsl/grammar.h clause_word, bare_keyword).
namespace rule_kind_clauses {
using List = std::span<const std::string_view> RuleKindInfo::*;
template <List list, typename Visit>
constexpr void each_word(Visit visit) {
  for (size_t k = 0; k < kRuleKinds.size(); ++k)
    for (std::string_view clause : kRuleKinds[k].*list) {
      bool seen = false;
      for (size_t j = 0; j < k; ++j)
        for (std::string_view earlier : kRuleKinds[j].*list) seen = seen || earlier == clause;
      if (!seen) visit(clause);
    }
}
template <List list>
inline constexpr size_t word_count = [] {
  size_t n = 0;
  each_word<list>([&](std::string_view) { ++n; });
  return n;
}();
template <List list>
inline constexpr std::array<std::string_view, word_count<list>> words = [] {
  std::array<std::string_view, word_count<list>> out{};
  size_t n = 0;
  each_word<list>([&](std::string_view clause) { out[n++] = clause; });
  return out;
}();
}  // namespace rule_kind_clauses
inline constexpr std::array<std::string_view, kRuleKinds.size()> kRuleKindKeywords = [] {
  std::array<std::string_view, kRuleKinds.size()> out{};
  for (size_t k = 0; k < kRuleKinds.size(); ++k) out[k] = kRuleKinds[k].keyword;
  return out;
}();
inline constexpr const auto& kRuleClauseWords = rule_kind_clauses::words<&RuleKindInfo::clauses>;
inline constexpr const auto& kRuleBareWords = rule_kind_clauses::words<&RuleKindInfo::bare>;

// The table is indexed by the enum, and every keyword is there once.
static_assert([] {
  for (size_t i = 0; i < kRuleKinds.size(); ++i) {
    if (static_cast<size_t>(kRuleKinds[i].kind) != i) return false;
    for (size_t j = 0; j < i; ++j)
      if (kRuleKinds[j].keyword == kRuleKinds[i].keyword) return false;
  }
  return static_cast<size_t>(RuleKind::Answer) + 1 == kRuleKinds.size();
}());

}  // namespace cw::dsl
