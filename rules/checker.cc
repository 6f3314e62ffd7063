#include "rules/checker.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <unordered_map>

#include "rules/lua_sandbox.h"
#include "trace/schema.h"

namespace cw::rules {

// ---- diagnostics ----------------------------------------------------------------------

void Diagnostics::add(Diagnostic d) {
  groups_.push_back({std::move(d)});
}

void Diagnostics::error(const SourcePtr& source, SourceLoc loc, uint32_t length,
                        std::string message, std::vector<std::string> hints) {
  Diagnostic d;
  d.severity = Severity::Error;
  d.source = source;
  d.loc = loc;
  d.length = std::max<uint32_t>(1, length);
  d.message = std::move(message);
  d.hints = std::move(hints);
  add(std::move(d));
}

void Diagnostics::note(const SourcePtr& source, SourceLoc loc, uint32_t length,
                       std::string message) {
  Diagnostic d;
  d.severity = Severity::Note;
  d.source = source;
  d.loc = loc;
  d.length = std::max<uint32_t>(1, length);
  d.message = std::move(message);
  if (groups_.empty()) groups_.emplace_back();
  groups_.back().push_back(std::move(d));
}

bool Diagnostics::has_errors() const {
  return std::any_of(groups_.begin(), groups_.end(), [](const auto& g) {
    return std::any_of(g.begin(), g.end(),
                       [](const Diagnostic& d) { return d.severity == Severity::Error; });
  });
}

std::vector<Diagnostic> Diagnostics::sorted(const std::vector<SourcePtr>& file_order) const {
  auto rank = [&](const std::vector<Diagnostic>& g) {
    const Diagnostic& d = g.front();
    long file = -1;
    for (size_t i = 0; i < file_order.size(); ++i)
      if (file_order[i] == d.source) file = static_cast<long>(i);
    return std::tuple(d.severity == Severity::Warning, file, d.loc.byte);
  };
  std::vector<const std::vector<Diagnostic>*> order;
  for (const auto& g : groups_)
    if (!g.empty()) order.push_back(&g);
  std::stable_sort(order.begin(), order.end(),
                   [&](const auto* a, const auto* b) { return rank(*a) < rank(*b); });
  std::vector<Diagnostic> out;
  for (const auto* g : order) out.insert(out.end(), g->begin(), g->end());
  return out;
}

std::vector<std::string> did_you_mean(const std::string& word,
                                      const std::vector<std::string>& candidates) {
  std::string best = closest_match(word, candidates);
  // Swapped neighbours ("nmae") are the commonest typo; plain edit distance counts two.
  for (size_t i = 0; best.empty() && i + 1 < word.size(); ++i) {
    std::string swapped = word;
    std::swap(swapped[i], swapped[i + 1]);
    if (std::find(candidates.begin(), candidates.end(), swapped) != candidates.end())
      best = swapped;
  }
  if (best.empty() || best == word) return {};
  return {fmt::format("did you mean '{}'?", best)};
}

namespace {

const Schema& schema() {
  return Schema::builtin();
}

std::string joined(const std::vector<std::string>& path, size_t from = 0) {
  std::string out;
  for (size_t i = from; i < path.size(); ++i) {
    if (i > from) out += '.';
    out += path[i];
  }
  return out;
}

uint32_t width(size_t n) {
  return static_cast<uint32_t>(std::max<size_t>(1, n));
}

// "a, b or c"
std::string alternatives(const std::vector<std::string>& options) {
  std::string out;
  for (size_t i = 0; i < options.size(); ++i) {
    if (i > 0) out += (i + 1 == options.size()) ? " or " : ", ";
    out += options[i];
  }
  return out;
}

std::string_view type_name(ValueType t) {
  switch (t) {
    case ValueType::Null: return "lua value";
    case ValueType::Bool: return "bool";
    case ValueType::Int: return "int";
    case ValueType::Str: return "str";
    case ValueType::Stack: return "stack";
    case ValueType::List: return "list";
  }
  return "?";
}

ValueType value_type(FieldType t) {
  return t == FieldType::Str ? ValueType::Str : ValueType::Int;
}

// Int and Bool compare with each other; a Lua result compares with anything.
enum class Category { Any, Number, Text, Other };
Category category(ValueType t) {
  switch (t) {
    case ValueType::Null: return Category::Any;
    case ValueType::Bool:
    case ValueType::Int: return Category::Number;
    case ValueType::Str: return Category::Text;
    default: return Category::Other;
  }
}

bool comparable(ValueType a, ValueType b) {
  Category ca = category(a), cb = category(b);
  if (ca == Category::Other || cb == Category::Other) return false;
  return ca == Category::Any || cb == Category::Any || ca == cb;
}

bool is_bool(ValueType t) {
  return t == ValueType::Bool || t == ValueType::Null;
}
bool is_int(ValueType t) {
  return t == ValueType::Int || t == ValueType::Null;
}

std::optional<int64_t> const_int(const dsl::Expr& e) {
  if (e.kind == dsl::ExprKind::Int) return e.ival;
  if (e.kind == dsl::ExprKind::Unary && e.op == "-" && e.args.size() == 1 &&
      e.args[0]->kind == dsl::ExprKind::Int)
    return -e.args[0]->ival;
  return std::nullopt;
}

// ---- names ----------------------------------------------------------------------------

// The names one event offers (docs/rules.md "Names"), for resolution and hints.
std::vector<std::string> names_on(KindId kind) {
  std::vector<std::string> out;
  if (kind != kNoKind)
    for (const auto& f : schema().kind(kind).fields) out.push_back(f.name);
  for (const char* n : {"ts", "tid", "pid", "cpu", "kind", "stack", "thread.comm", "thread.kernel",
                        "process.comm", "process.exe"})
    out.emplace_back(n);
  for (const auto& span : schema().span_names()) {
    out.push_back(span);
    for (const auto& f : schema().kind(schema().span_opener(span)).fields)
      out.push_back(span + "." + f.name);
  }
  return out;
}

std::optional<FieldRef> resolve_on(KindId kind, std::span<const std::string> path, Side side) {
  FieldRef ref;
  ref.side = side;
  auto attribute = [&](FieldScope scope, ValueType type) {
    ref.scope = scope;
    ref.type = type;
    return ref;
  };
  if (path.size() == 1) {
    const std::string& name = path[0];
    if (kind != kNoKind) {
      int index = schema().field_index(kind, name);
      if (index >= 0) {
        ref.scope = FieldScope::EventField;
        ref.kind = kind;
        ref.field = static_cast<int16_t>(index);
        ref.type = value_type(schema().kind(kind).fields[index].type);
        return ref;
      }
    }
    if (name == "ts") return attribute(FieldScope::Ts, ValueType::Int);
    if (name == "tid") return attribute(FieldScope::Tid, ValueType::Int);
    if (name == "pid") return attribute(FieldScope::Pid, ValueType::Int);
    if (name == "cpu") return attribute(FieldScope::Cpu, ValueType::Int);
    if (name == "kind") return attribute(FieldScope::KindName, ValueType::Str);
    if (name == "stack") return attribute(FieldScope::Stack, ValueType::Stack);
    if (schema().span_opener(name) != kNoKind) {
      ref.span = name;
      return attribute(FieldScope::SpanOpen, ValueType::Bool);
    }
    return std::nullopt;
  }
  if (path.size() == 2) {
    const std::string& a = path[0];
    const std::string& b = path[1];
    if (a == "thread" && b == "comm") return attribute(FieldScope::ThreadComm, ValueType::Str);
    if (a == "thread" && b == "kernel") return attribute(FieldScope::ThreadKernel, ValueType::Bool);
    if (a == "process" && b == "comm") return attribute(FieldScope::ProcessComm, ValueType::Str);
    if (a == "process" && b == "exe") return attribute(FieldScope::ProcessExe, ValueType::Str);
    KindId opener = schema().span_opener(a);
    if (opener != kNoKind) {
      int index = schema().field_index(opener, b);
      if (index < 0) return std::nullopt;
      ref.scope = FieldScope::SpanField;
      ref.kind = opener;
      ref.field = static_cast<int16_t>(index);
      ref.span = a;
      ref.type = value_type(schema().kind(opener).fields[index].type);
      return ref;
    }
  }
  return std::nullopt;
}

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
const std::vector<std::string>& answer_names() {
  static const std::vector<std::string> names = {
      "ts",    "tid",         "pid",           "cpu",          "kind",
      "stack", "thread.comm", "thread.kernel", "process.comm", "process.exe"};
  return names;
}

std::string answer_names_text() {
  std::string out;
  const auto& names = answer_names();
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

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

using ClauseMap = std::map<std::string, const dsl::Clause*>;

class Checker {
 public:
  Checker(const std::vector<PackUnit>& units, RuleSet& out, Diagnostics& diags)
      : units_(units), out_(out), diags_(diags) {}

  LintFacts run();

 private:
  // set-up, before the pass over the files
  void compute_visibility();
  void collect_lists(size_t p);
  void load_lua(size_t p);
  void index_links(size_t p);

  void check_rule(const dsl::Rule& rule);
  void check_link(const dsl::Rule& rule, LinkRule& link);
  void check_edge(const dsl::Rule& rule);
  void check_split(const dsl::Rule& rule);
  void check_batch(const dsl::Rule& rule);
  void check_flag(const dsl::Rule& rule);
  void check_holder(const dsl::Rule& rule);
  void check_answer(const dsl::Rule& rule);
  void check_test(const dsl::TestBlock& test);
  void apply_disables();
  std::optional<int> priority(const dsl::Clause& clause);
  bool check_expect(const dsl::Expect& expect, Expectation& out);

  // clauses and their values
  ClauseMap collect(const dsl::Rule& rule, std::vector<std::string> allowed,
                    const std::vector<std::string>& required);
  const dsl::Expr* single(const dsl::Clause& clause);
  std::optional<std::string> word(const dsl::Expr& e, const std::string& what);
  std::optional<size_t> choice(const dsl::Clause& clause, const std::string& what,
                               const std::vector<std::string>& options);
  KindId event_kind(const dsl::Clause& clause);
  std::optional<uint64_t> duration(const dsl::Expr& e, const std::string& clause);
  std::optional<std::string> id_text(const dsl::Expr& e);
  std::optional<uint32_t> find_link(const dsl::Expr& e, const dsl::Rule& rule);

  // expressions
  bool compile_root(const dsl::Expr& e, const Scope& scope, ValueType want,
                    const std::string& clause, CompiledExpr& out);
  std::optional<uint32_t> compile(const dsl::Expr& e, const Scope& scope, CompiledExpr& out);
  std::optional<uint32_t> compile_name(const dsl::Expr& e, const Scope& scope, CompiledExpr& out);
  std::optional<uint32_t> compile_call(const dsl::Expr& e, const Scope& scope, CompiledExpr& out);
  std::optional<uint32_t> compile_binary(const dsl::Expr& e, const Scope& scope, CompiledExpr& out);
  std::optional<uint32_t> compile_list(const dsl::Expr& e, CompiledExpr& out);
  const NamedList* find_list(const std::string& name);
  bool lua_function_visible(const std::string& name) const;
  void compile_join(const dsl::Expr& e, LinkRule& link);

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

// ---- set-up ---------------------------------------------------------------------------

LintFacts Checker::run() {
  packs_.resize(units_.size());
  for (size_t p = 0; p < units_.size(); ++p) {
    packs_[p].unit = &units_[p];
    pack_index_[units_[p].info.id] = p;
    out_.packs.push_back(units_[p].info);
  }
  compute_visibility();
  for (size_t p = 0; p < units_.size(); ++p) collect_lists(p);
  for (size_t p = 0; p < units_.size(); ++p) load_lua(p);
  for (size_t p = 0; p < units_.size(); ++p) index_links(p);
  for (size_t p = 0; p < units_.size(); ++p) {
    pack_ = p;
    for (const dsl::File* file : units_[p].files) {
      source_ = file->source;
      for (const auto& rule : file->rules) check_rule(rule);
      for (const auto& test : file->tests) check_test(test);
    }
  }
  apply_disables();
  return std::move(facts_);
}

void Checker::compute_visibility() {
  for (size_t p = 0; p < units_.size(); ++p) {
    std::set<size_t> seen{p};
    std::vector<size_t> pending{p};
    while (!pending.empty()) {
      size_t q = pending.back();
      pending.pop_back();
      for (const auto& req : units_[q].info.requires_) {
        auto it = pack_index_.find(req);
        if (it != pack_index_.end() && seen.insert(it->second).second)
          pending.push_back(it->second);
      }
    }
    packs_[p].visible.push_back(p);
    for (size_t q : seen)
      if (q != p) packs_[p].visible.push_back(q);
  }
}

void Checker::collect_lists(size_t p) {
  PackState& pack = packs_[p];
  for (const dsl::File* file : units_[p].files) {
    source_ = file->source;
    for (const auto& decl : file->lists) {
      if (auto it = pack.lists.find(decl.name); it != pack.lists.end()) {
        error_at(decl.loc, decl.name.size() + 5,
                 fmt::format("duplicate list '{}' in pack '{}'", decl.name, units_[p].info.id));
        const ListUse& first = facts_.lists[it->second.use];
        diags_.note(first.source, first.loc, 1, "first defined here");
        continue;
      }
      if (!decl.value || decl.value->kind != dsl::ExprKind::List) {
        if (decl.value)
          error(*decl.value, fmt::format("list '{}' needs a [ ... ] value", decl.name));
        continue;
      }
      CompiledExpr scratch;
      auto root = compile_list(*decl.value, scratch);
      if (!root) continue;
      NamedList list;
      for (uint32_t kid : scratch.nodes[*root].kids) list.elements.push_back(scratch.nodes[kid]);
      list.use = facts_.lists.size();
      facts_.lists.push_back(ListUse{decl.name, units_[p].info.id, source_, decl.loc, false});
      pack.lists.emplace(decl.name, std::move(list));
    }
  }
}

// Sandbox errors read "FILE:LINE: error: message"; point the diagnostic at that line.
void report_lua_error(Diagnostics& diags, const SourcePtr& source, SourceLoc fallback,
                      const std::string& what) {
  std::string message = what;
  SourceLoc loc = fallback;
  for (size_t colon = what.find(':'); colon != std::string::npos;
       colon = what.find(':', colon + 1)) {
    size_t end = colon + 1;
    while (end < what.size() && isdigit(static_cast<unsigned char>(what[end]))) ++end;
    if (end == colon + 1 || end >= what.size() || what[end] != ':') continue;
    if (end - colon > 9) continue;
    auto line = static_cast<uint32_t>(std::stoul(what.substr(colon + 1, end - colon - 1)));
    if (line == 0) break;
    size_t byte = 0;
    for (uint32_t l = 1; l < line && byte != std::string::npos; ++l) {
      byte = source->text.find('\n', byte);
      if (byte != std::string::npos) ++byte;
    }
    if (byte == std::string::npos) break;
    loc = SourceLoc{line, 1, static_cast<uint32_t>(byte)};
    message = what.substr(end + 1);
    break;
  }
  // The sandbox says "error: ..." itself; the diagnostic adds its own severity.
  while (!message.empty() && message.front() == ' ') message.erase(0, 1);
  if (message.starts_with("error: ")) message.erase(0, 7);
  diags.error(source, loc, 1, message);
}

void Checker::load_lua(size_t p) {
  const std::string& id = units_[p].info.id;
  for (const dsl::File* file : units_[p].files) {
    for (const auto& block : file->lua) {
      out_.lua.push_back(LuaChunk{id, file->source, block.code, block.first_line});
      try {
        if (!packs_[p].lua) packs_[p].lua = std::make_unique<LuaSandbox>(id);
        packs_[p].lua->load(file->source->path, block.code, block.first_line);
      } catch (const LuaError& e) {
        report_lua_error(diags_, file->source, block.loc, e.what());
      }
    }
  }
}

void Checker::index_links(size_t p) {
  for (const dsl::File* file : units_[p].files) {
    source_ = file->source;
    for (const auto& rule : file->rules) {
      if (rule.kind != "link") continue;
      auto index = static_cast<uint32_t>(out_.links.size());
      LinkRule link;
      link.origin = origin(rule);
      // Kinds are resolved quietly here, so edge rules can see them; the pass reports.
      for (const auto& clause : rule.clauses) {
        if (clause.args.size() != 1 || clause.args[0]->kind != dsl::ExprKind::Name) continue;
        KindId kind = schema().find(joined(clause.args[0]->path));
        if (clause.keyword == "from") link.from = kind;
        if (clause.keyword == "to") link.to = kind;
      }
      out_.links.push_back(std::move(link));
      link_of_rule_[&rule] = index;
      packs_[p].links.emplace(rule.id, index);  // the first of duplicates wins
    }
  }
}

RuleOrigin Checker::origin(const dsl::Rule& rule) const {
  const std::string& pack = units_[pack_].info.id;
  return RuleOrigin{pack, pack + "/" + rule.id, rule.id, source_, rule.id_loc};
}

// ---- clauses --------------------------------------------------------------------------

ClauseMap Checker::collect(const dsl::Rule& rule, std::vector<std::string> allowed,
                           const std::vector<std::string>& required) {
  ClauseMap out;
  for (const auto& clause : rule.clauses) {
    if (std::find(allowed.begin(), allowed.end(), clause.keyword) == allowed.end()) {
      error_at(clause.loc, clause.keyword.size(),
               fmt::format("unknown clause '{}' in {} rule", clause.keyword, rule.kind),
               did_you_mean(clause.keyword, allowed));
      continue;
    }
    if (out.count(clause.keyword)) {
      error_at(clause.loc, clause.keyword.size(),
               fmt::format("clause '{}' given twice", clause.keyword));
      continue;
    }
    out[clause.keyword] = &clause;
  }
  for (const auto& name : required)
    if (!out.count(name))
      error_at(rule.id_loc, rule.id.size(),
               fmt::format("missing clause '{}' in {} rule '{}'", name, rule.kind, rule.id));
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

// A rule or link id as written: a name, a string, or a qualified "pack/rule" (which
// the expression parser reads as a division, so it is taken from the source text).
std::optional<std::string> Checker::id_text(const dsl::Expr& e) {
  if (e.kind == dsl::ExprKind::Name) return joined(e.path);
  if (e.kind == dsl::ExprKind::Str) return e.sval;
  if (source_ && e.loc.byte + e.length <= source_->text.size()) {
    std::string text = source_->text.substr(e.loc.byte, e.length);
    bool ok = !text.empty();
    for (char c : text)
      ok = ok &&
           (isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '/');
    if (ok) return text;
  }
  error(e, "expected a rule id here");
  return std::nullopt;
}

std::optional<uint32_t> Checker::find_link(const dsl::Expr& e, const dsl::Rule& rule) {
  auto name = id_text(e);
  if (!name) return std::nullopt;
  std::string pack_part, local = *name;
  if (size_t slash = name->find('/'); slash != std::string::npos) {
    pack_part = name->substr(0, slash);
    local = name->substr(slash + 1);
  }
  std::vector<std::string> candidates;
  for (size_t q : packs_[pack_].visible) {
    const PackState& pack = packs_[q];
    if (!pack_part.empty() && pack.unit->info.id != pack_part) continue;
    if (auto it = pack.links.find(local); it != pack.links.end()) return it->second;
    for (const auto& [id, index] : pack.links) candidates.push_back(id);
  }
  error(e, fmt::format("{} rule '{}' uses unknown link '{}'", rule.kind, rule.id, *name),
        did_you_mean(local, candidates));
  return std::nullopt;
}

// ---- expressions ----------------------------------------------------------------------

uint32_t push(CompiledExpr& out, ExprNode node) {
  out.nodes.push_back(std::move(node));
  return static_cast<uint32_t>(out.nodes.size() - 1);
}

bool Checker::compile_root(const dsl::Expr& e, const Scope& scope, ValueType want,
                           const std::string& clause, CompiledExpr& out) {
  out = {};
  auto root = compile(e, scope, out);
  if (!root) {
    out = {};
    return false;
  }
  ValueType got = out.nodes[*root].type;
  bool ok = want == ValueType::Bool ? is_bool(got) : is_int(got);
  if (!ok) {
    error(e,
          fmt::format("'{}' needs {}, not {}", clause,
                      want == ValueType::Bool ? "a condition (bool)" : "an int", type_name(got)));
    out = {};
    return false;
  }
  out.root = *root;
  return true;
}

std::optional<uint32_t> Checker::compile(const dsl::Expr& e, const Scope& scope,
                                         CompiledExpr& out) {
  ExprNode node;
  node.loc = e.loc;
  switch (e.kind) {
    case dsl::ExprKind::Int:
      node.type = ValueType::Int;
      node.ival = e.ival;
      return push(out, std::move(node));
    case dsl::ExprKind::Bool:
      node.type = ValueType::Bool;
      node.ival = e.ival != 0;
      return push(out, std::move(node));
    case dsl::ExprKind::Str:
      node.type = ValueType::Str;
      node.sval = e.sval;
      return push(out, std::move(node));
    case dsl::ExprKind::List: return compile_list(e, out);
    case dsl::ExprKind::Name: return compile_name(e, scope, out);
    case dsl::ExprKind::Call: return compile_call(e, scope, out);
    case dsl::ExprKind::Binary: return compile_binary(e, scope, out);
    case dsl::ExprKind::Unary: {
      if (e.args.size() != 1) break;
      auto kid = compile(*e.args[0], scope, out);
      if (!kid) return std::nullopt;
      ValueType t = out.nodes[*kid].type;
      if (e.op == "not") {
        if (!is_bool(t)) {
          error(*e.args[0], fmt::format("'not' needs a bool operand, not {}", type_name(t)));
          return std::nullopt;
        }
        node.op = Op::Not;
        node.type = ValueType::Bool;
      } else {
        if (!is_int(t)) {
          error(*e.args[0], fmt::format("'-' needs an int operand, not {}", type_name(t)));
          return std::nullopt;
        }
        node.op = Op::Neg;
        node.type = ValueType::Int;
      }
      node.kids = {*kid};
      return push(out, std::move(node));
    }
  }
  error(e, "malformed expression");
  return std::nullopt;
}

std::optional<uint32_t> Checker::compile_list(const dsl::Expr& e, CompiledExpr& out) {
  ExprNode node;
  node.loc = e.loc;
  node.op = Op::Const;
  node.type = ValueType::List;
  for (const auto& element : e.args) {
    ExprNode item;
    item.loc = element->loc;
    if (element->kind == dsl::ExprKind::Str) {
      item.type = ValueType::Str;
      item.sval = element->sval;
    } else if (element->kind == dsl::ExprKind::Bool) {
      item.type = ValueType::Bool;
      item.ival = element->ival != 0;
    } else if (auto value = const_int(*element)) {
      item.type = ValueType::Int;
      item.ival = *value;
    } else {
      error(*element, "list elements must be strings, integers or booleans");
      return std::nullopt;
    }
    node.kids.push_back(push(out, std::move(item)));
  }
  return push(out, std::move(node));
}

const NamedList* Checker::find_list(const std::string& name) {
  for (size_t q : packs_[pack_].visible) {
    auto it = packs_[q].lists.find(name);
    if (it != packs_[q].lists.end()) {
      facts_.lists[it->second.use].used = true;
      return &it->second;
    }
  }
  return nullptr;
}

std::optional<uint32_t> Checker::compile_name(const dsl::Expr& e, const Scope& scope,
                                              CompiledExpr& out) {
  const std::string name = joined(e.path);
  std::optional<FieldRef> ref;
  std::vector<std::string> candidates;
  std::span<const std::string> path(e.path);
  if (scope.pair && path.size() == 2 && path[0] == "edge" && path[1] == "kind") {
    if (!scope.classified) {
      error(e, "'edge.kind' is known only to boost and prune rules",
            {"a strong or weak rule decides the kind; a boost or prune rule sees it"});
      return std::nullopt;
    }
    ExprNode node;
    node.loc = e.loc;
    node.op = Op::Field;
    node.type = ValueType::Str;
    node.field.scope = FieldScope::EdgeKind;
    node.field.type = ValueType::Str;
    return push(out, std::move(node));
  }
  // An answer's events have no span context: `syscall`, `call.fn` and the like are unknown.
  auto allowed = [&](std::span<const std::string> p) {
    return !scope.answer || p.empty() || schema().span_opener(p[0]) == kNoKind;
  };
  if (scope.pair) {
    if (path.size() >= 2 && (path[0] == "from" || path[0] == "to") && allowed(path.subspan(1))) {
      bool from = path[0] == "from";
      ref = resolve_on(from ? scope.from : scope.to, path.subspan(1), from ? Side::From : Side::To);
    }
    for (const char* side : {"from", "to"})
      for (const auto& n :
           scope.answer ? answer_names() : names_on(side[0] == 'f' ? scope.from : scope.to))
        candidates.push_back(std::string(side) + "." + n);
    if (scope.answer) candidates.push_back("edge.kind");
  } else {
    if (!path.empty() && allowed(path)) ref = resolve_on(scope.self, path, Side::Self);
    candidates = scope.answer ? answer_names() : names_on(scope.self);
  }
  if (ref) {
    ExprNode node;
    node.loc = e.loc;
    node.op = Op::Field;
    node.type = ref->type;
    node.field = std::move(*ref);
    return push(out, std::move(node));
  }
  if (const NamedList* list = find_list(name)) {
    ExprNode node;
    node.loc = e.loc;
    node.op = Op::Const;
    node.type = ValueType::List;
    for (ExprNode element : list->elements) {
      element.loc = e.loc;
      node.kids.push_back(push(out, std::move(element)));
    }
    return push(out, std::move(node));
  }
  for (size_t q : packs_[pack_].visible)
    for (const auto& [list_name, list] : packs_[q].lists) candidates.push_back(list_name);
  auto hints = did_you_mean(name, candidates);
  if (scope.answer) {
    const bool subject = std::string_view(scope.answer) == "subject";
    const std::string what = subject      ? "the subject is a segment's first event"
                             : scope.pair ? "the edge's events are"
                                          : "a baseline candidate is a segment's first event";
    hints.push_back(scope.pair
                        ? fmt::format("{} of no known kind: name from. or to. with {}; "
                                      "or edge.kind",
                                      what, answer_names_text())
                        : fmt::format("{}, of no known kind: name {}", what, answer_names_text()));
    error(e,
          fmt::format("unknown field '{}' in an answer's {}", name, subject ? "subject" : "choice"),
          std::move(hints));
  } else if (scope.pair) {
    if (hints.empty() && !(path.size() >= 2 && (path[0] == "from" || path[0] == "to")))
      hints.push_back("name the events' fields through `from.` or `to.`");
    error(e, fmt::format("unknown field '{}'", name), std::move(hints));
  } else if (scope.self != kNoKind) {
    error(e, fmt::format("unknown field '{}' of event '{}'", name, schema().kind(scope.self).name),
          std::move(hints));
  } else {
    error(e, fmt::format("unknown name '{}'", name), std::move(hints));
  }
  return std::nullopt;
}

bool Checker::lua_function_visible(const std::string& name) const {
  for (size_t q : packs_[pack_].visible)
    if (packs_[q].lua && packs_[q].lua->has_function(name)) return true;
  return false;
}

std::optional<uint32_t> Checker::compile_call(const dsl::Expr& e, const Scope& scope,
                                              CompiledExpr& out) {
  const std::string callee = joined(e.path);
  std::vector<uint32_t> kids;
  for (const auto& arg : e.args) {
    auto kid = compile(*arg, scope, out);
    if (!kid) return std::nullopt;
    kids.push_back(*kid);
  }
  auto arg_type = [&](size_t i) { return out.nodes[kids[i]].type; };
  ExprNode node;
  node.loc = e.loc;
  node.op = Op::Call;
  node.sval = callee;
  if (callee == "shared_symbols") {
    if (kids.size() != 2 && kids.size() != 3) {
      error(e, fmt::format("shared_symbols() takes 2 or 3 arguments, not {}", kids.size()));
      return std::nullopt;
    }
    for (size_t i = 0; i < kids.size(); ++i) {
      ValueType want = i < 2 ? ValueType::Stack : ValueType::List;
      if (arg_type(i) != want && arg_type(i) != ValueType::Null) {
        error(*e.args[i], fmt::format("argument {} of shared_symbols() must be a {}, not {}", i + 1,
                                      type_name(want), type_name(arg_type(i))));
        return std::nullopt;
      }
    }
    node.type = ValueType::Int;
  } else if (callee == "len") {
    if (kids.size() != 1) {
      error(e, fmt::format("len() takes 1 argument, not {}", kids.size()));
      return std::nullopt;
    }
    ValueType t = arg_type(0);
    if (t != ValueType::List && t != ValueType::Str && t != ValueType::Stack &&
        t != ValueType::Null) {
      error(*e.args[0],
            fmt::format("len() needs a list, a string or a stack, not {}", type_name(t)));
      return std::nullopt;
    }
    node.type = ValueType::Int;
  } else if (e.path.size() == 2 && e.path[0] == "lua") {
    if (!lua_function_visible(e.path[1])) {
      error(e, fmt::format("unknown Lua function '{}'", e.path[1]),
            {fmt::format("define it in a `lua [[ ... ]]` block of pack '{}' or of a pack it "
                         "requires",
                         units_[pack_].info.id)});
      return std::nullopt;
    }
    node.type = ValueType::Null;  // whatever Lua returns; the engine converts it
  } else {
    error(e, fmt::format("unknown function '{}'", callee),
          did_you_mean(callee, {"shared_symbols", "len"}));
    return std::nullopt;
  }
  node.kids = std::move(kids);
  return push(out, std::move(node));
}

std::optional<uint32_t> Checker::compile_binary(const dsl::Expr& e, const Scope& scope,
                                                CompiledExpr& out) {
  static const std::map<std::string, Op> ops = {{"or", Op::Or},
                                                {"and", Op::And},
                                                {"==", Op::Eq},
                                                {"!=", Op::Ne},
                                                {"<", Op::Lt},
                                                {"<=", Op::Le},
                                                {">", Op::Gt},
                                                {">=", Op::Ge},
                                                {"in", Op::In},
                                                {"not in", Op::NotIn},
                                                {"matches", Op::Matches},
                                                {"+", Op::Add},
                                                {"-", Op::Sub},
                                                {"*", Op::Mul},
                                                {"/", Op::Div},
                                                {"%", Op::Mod}};
  auto op = ops.find(e.op);
  if (op == ops.end() || e.args.size() != 2) {
    error(e, fmt::format("unknown operator '{}'", e.op));
    return std::nullopt;
  }
  auto left = compile(*e.args[0], scope, out);
  if (!left) return std::nullopt;
  auto right = compile(*e.args[1], scope, out);
  if (!right) return std::nullopt;
  const ValueType lt = out.nodes[*left].type, rt = out.nodes[*right].type;
  ExprNode node;
  node.loc = e.loc;
  node.op = op->second;
  node.kids = {*left, *right};
  switch (node.op) {
    case Op::And:
    case Op::Or:
      for (size_t i = 0; i < 2; ++i) {
        ValueType t = i == 0 ? lt : rt;
        if (!is_bool(t)) {
          error(*e.args[i], fmt::format("'{}' needs bool operands, not {}", e.op, type_name(t)));
          return std::nullopt;
        }
      }
      node.type = ValueType::Bool;
      break;
    case Op::Eq:
    case Op::Ne:
      if (!comparable(lt, rt)) {
        error(e, fmt::format("cannot compare {} with {}", type_name(lt), type_name(rt)));
        return std::nullopt;
      }
      node.type = ValueType::Bool;
      break;
    case Op::Lt:
    case Op::Le:
    case Op::Gt:
    case Op::Ge:
      if (!comparable(lt, rt)) {
        error(e, fmt::format("cannot compare {} with {}", type_name(lt), type_name(rt)));
        return std::nullopt;
      }
      if (!is_int(lt) || !is_int(rt)) {
        error(e, fmt::format("'{}' needs int operands, not {}", e.op,
                             type_name(is_int(lt) ? rt : lt)));
        return std::nullopt;
      }
      node.type = ValueType::Bool;
      break;
    case Op::In:
    case Op::NotIn: {
      if (rt != ValueType::List && rt != ValueType::Stack && rt != ValueType::Null) {
        error(*e.args[1], fmt::format("'{}' needs a list or a stack on its right", e.op));
        return std::nullopt;
      }
      ValueType element = ValueType::Null;
      if (rt == ValueType::Stack) element = ValueType::Str;
      if (rt == ValueType::List) {
        const auto& kids = out.nodes[*right].kids;
        if (!kids.empty()) element = out.nodes[kids[0]].type;
        for (uint32_t kid : kids)
          if (!comparable(out.nodes[kid].type, element)) element = ValueType::Null;
      }
      if (!comparable(lt, element)) {
        error(e, fmt::format("cannot compare {} with {}", type_name(lt), type_name(element)));
        return std::nullopt;
      }
      node.type = ValueType::Bool;
      break;
    }
    case Op::Matches: {
      const ExprNode& pattern = out.nodes[*right];
      if (pattern.op != Op::Const || pattern.type != ValueType::Str) {
        error(*e.args[1], "'matches' needs a string pattern");
        return std::nullopt;
      }
      if (lt != ValueType::Str && lt != ValueType::Stack && lt != ValueType::Null) {
        error(*e.args[0], fmt::format("'matches' needs a string or a stack on its left, not {}",
                                      type_name(lt)));
        return std::nullopt;
      }
      node.type = ValueType::Bool;
      break;
    }
    default:  // arithmetic
      for (size_t i = 0; i < 2; ++i) {
        ValueType t = i == 0 ? lt : rt;
        if (!is_int(t)) {
          error(*e.args[i], fmt::format("'{}' needs int operands, not {}", e.op, type_name(t)));
          return std::nullopt;
        }
      }
      node.type = ValueType::Int;
      break;
  }
  return push(out, std::move(node));
}

// ---- rules ----------------------------------------------------------------------------

void Checker::check_rule(const dsl::Rule& rule) {
  PackState& pack = packs_[pack_];
  if (auto it = pack.rule_ids.find(rule.id); it != pack.rule_ids.end()) {
    error_at(rule.id_loc, rule.id.size(),
             fmt::format("duplicate rule id '{}' in pack '{}'", rule.id, units_[pack_].info.id));
    diags_.note(it->second.first, it->second.second, width(rule.id.size()), "first defined here");
  } else {
    pack.rule_ids.emplace(rule.id, std::pair(source_, rule.id_loc));
  }
  if (rule.kind == "link")
    check_link(rule, out_.links[link_of_rule_.at(&rule)]);
  else if (rule.kind == "edge")
    check_edge(rule);
  else if (rule.kind == "split")
    check_split(rule);
  else if (rule.kind == "batch")
    check_batch(rule);
  else if (rule.kind == "flag")
    check_flag(rule);
  else if (rule.kind == "holder")
    check_holder(rule);
  else if (rule.kind == "answer")
    check_answer(rule);
  else
    error_at(
        rule.loc, rule.kind.size(), fmt::format("unknown rule kind '{}'", rule.kind),
        did_you_mean(rule.kind, {"split", "batch", "link", "edge", "flag", "holder", "answer"}));
}

// `join from.F == to.G and ...`: each side a field, the tid or the pid of its event.
void Checker::compile_join(const dsl::Expr& e, LinkRule& link) {
  if (e.kind == dsl::ExprKind::Binary && e.op == "and" && e.args.size() == 2) {
    compile_join(*e.args[0], link);
    compile_join(*e.args[1], link);
    return;
  }
  auto side_of = [](const dsl::Expr& x) -> int {
    if (x.kind != dsl::ExprKind::Name || x.path.size() < 2) return -1;
    return x.path[0] == "from" ? 0 : x.path[0] == "to" ? 1 : -1;
  };
  if (e.kind != dsl::ExprKind::Binary || e.op != "==" || e.args.size() != 2 ||
      side_of(*e.args[0]) < 0 || side_of(*e.args[1]) < 0 ||
      side_of(*e.args[0]) == side_of(*e.args[1])) {
    error(e, "'join' must be equalities like from.F == to.G joined by 'and'");
    return;
  }
  Scope scope{true, kNoKind, link.from, link.to};
  CompiledExpr scratch;
  FieldRef refs[2];
  for (size_t i = 0; i < 2; ++i) {
    auto node = compile_name(*e.args[i], scope, scratch);
    if (!node) return;
    const FieldRef& ref = scratch.nodes[*node].field;
    if (scratch.nodes[*node].op != Op::Field ||
        (ref.scope != FieldScope::EventField && ref.scope != FieldScope::SpanField &&
         ref.scope != FieldScope::Tid && ref.scope != FieldScope::Pid)) {
      error(*e.args[i], "'join' pairs a field, a span's field, the tid or the pid of each event");
      return;
    }
    refs[side_of(*e.args[i])] = ref;
  }
  if (!comparable(refs[0].type, refs[1].type)) {
    error(e, fmt::format("cannot compare {} with {}", type_name(refs[0].type),
                         type_name(refs[1].type)));
    return;
  }
  link.join.emplace_back(std::move(refs[0]), std::move(refs[1]));
}

void Checker::check_link(const dsl::Rule& rule, LinkRule& link) {
  auto c = collect(
      rule, {"from", "to", "join", "pick", "range", "where", "within", "from_where", "to_where"},
      {"from", "to", "join"});
  link.origin = origin(rule);
  if (c.count("from")) link.from = event_kind(*c["from"]);
  if (c.count("to")) link.to = event_kind(*c["to"]);
  const bool kinds_known = link.from != kNoKind && link.to != kNoKind;
  if (c.count("join") && kinds_known)
    for (const auto& arg : c["join"]->args) compile_join(*arg, link);
  if (c.count("pick"))
    if (auto pick = choice(*c["pick"], "pick", {"next", "latest", "overlap"}))
      link.pick = static_cast<LinkRule::Pick>(*pick);
  if (c.count("range")) {
    const dsl::Clause& range = *c["range"];
    if (link.pick != LinkRule::Pick::Overlap) {
      error_at(range.loc, range.keyword.size(), "clause 'range' needs 'pick overlap'");
    } else if (range.args.size() != 2) {
      error_at(range.loc, range.keyword.size(), "clause 'range' takes two fields: OFFSET, LEN");
    } else if (kinds_known) {
      int16_t* slots[2][2] = {{&link.offset_field, &link.to_offset_field},
                              {&link.len_field, &link.to_len_field}};
      for (size_t i = 0; i < 2; ++i) {
        auto name = word(*range.args[i], "a field name");
        if (!name) continue;
        KindId kinds[2] = {link.from, link.to};
        for (size_t side = 0; side < 2; ++side) {
          int index = schema().field_index(kinds[side], *name);
          if (index < 0 ||
              value_type(schema().kind(kinds[side]).fields[index].type) != ValueType::Int) {
            std::vector<std::string> fields;
            for (const auto& f : schema().kind(kinds[side]).fields) fields.push_back(f.name);
            error(*range.args[i],
                  fmt::format("unknown field '{}' of event '{}'", *name,
                              schema().kind(kinds[side]).name),
                  did_you_mean(*name, fields));
            break;
          }
          *slots[i][side] = static_cast<int16_t>(index);
        }
      }
    }
  } else if (link.pick == LinkRule::Pick::Overlap) {
    error_at(rule.id_loc, rule.id.size(),
             fmt::format("missing clause 'range' in link rule '{}'", rule.id),
             {"pick overlap pairs byte ranges: say which fields hold them, `range offset, len`"});
  }
  if (c.count("where") && kinds_known)
    if (const dsl::Expr* e = single(*c["where"]))
      compile_root(*e, Scope{true, kNoKind, link.from, link.to}, ValueType::Bool, "where",
                   link.where);
  if (c.count("within"))
    if (const dsl::Expr* e = single(*c["within"]))
      if (auto ns = duration(*e, "within")) link.within_ns = *ns;
  for (auto [name, kind, out] : {std::tuple{"from_where", link.from, &link.from_where},
                                 std::tuple{"to_where", link.to, &link.to_where}})
    if (c.count(name) && kind != kNoKind)
      if (const dsl::Expr* e = single(*c[name])) {
        Scope self;
        self.self = kind;
        compile_root(*e, self, ValueType::Bool, name, *out);
      }
}

void Checker::check_edge(const dsl::Rule& rule) {
  auto c = collect(rule, {"link", "where", "strength", "kind", "priority", "cost", "ends_polling"},
                   {"link", "strength"});
  EdgeRule edge;
  edge.origin = origin(rule);
  const LinkRule* link = nullptr;
  if (c.count("link"))
    if (const dsl::Expr* e = single(*c["link"]))
      if (auto index = find_link(*e, rule)) {
        edge.link = *index;
        link = &out_.links[*index];
        edge.kind = link->origin.local;
      }
  if (c.count("strength"))
    if (auto s = choice(*c["strength"], "strength", {"strong", "weak", "boost", "prune"}))
      edge.strength = static_cast<Strength>(*s);
  if (c.count("kind"))
    if (const dsl::Expr* e = single(*c["kind"]))
      if (auto kind = word(*e, "an edge kind")) edge.kind = *kind;
  if (c.count("priority"))
    if (auto p = priority(*c["priority"])) edge.priority = *p;
  if (c.count("ends_polling")) {
    const dsl::Clause& ends = *c["ends_polling"];
    if (ends.args.empty())
      edge.ends_polling = true;
    else
      error(*ends.args[0], "clause 'ends_polling' takes no value",
            {"write `ends_polling` alone on its line: the edge ends another thread's polling "
             "loop"});
  }
  const bool kinds_known = link && link->from != kNoKind && link->to != kNoKind;
  Scope scope{true, kNoKind, link ? link->from : kNoKind, link ? link->to : kNoKind,
              edge.strength == Strength::Boost || edge.strength == Strength::Prune};
  if (c.count("where") && kinds_known)
    if (const dsl::Expr* e = single(*c["where"]))
      compile_root(*e, scope, ValueType::Bool, "where", edge.where);
  if (c.count("cost") && kinds_known)
    if (const dsl::Expr* e = single(*c["cost"]))
      compile_root(*e, scope, ValueType::Int, "cost", edge.cost);
  out_.edges.push_back(std::move(edge));
}

void Checker::check_split(const dsl::Rule& rule) {
  auto c = collect(rule, {"at", "peers", "where", "cut", "neighbour", "loop", "priority"}, {});
  SplitRule split;
  split.origin = origin(rule);
  Scope scope;
  bool usable = true;
  if (c.count("at") && c.count("peers")) {
    const dsl::Clause& peers = *c["peers"];
    error_at(peers.loc, peers.keyword.size(), "clause 'peers' cannot be used with 'at'");
  } else if (c.count("at")) {
    split.at = event_kind(*c["at"]);
    scope.self = split.at;
    usable = split.at != kNoKind;
  } else if (c.count("peers")) {
    split.mode = SplitRule::Mode::Peers;
    usable = false;
    if (const dsl::Expr* e = single(*c["peers"]))
      if (auto index = find_link(*e, rule)) {
        split.link = *index;
        const LinkRule& link = out_.links[*index];
        // Both ends of the link are cut points: fields are names only when they agree.
        if (link.from == link.to) scope.self = link.from;
        usable = true;
      }
  } else {
    error_at(rule.id_loc, rule.id.size(),
             fmt::format("missing clause 'at' in split rule '{}'", rule.id),
             {"or cut between messages with disjoint peers: `peers LINK`"});
    usable = false;
  }
  if (c.count("where") && usable)
    if (const dsl::Expr* e = single(*c["where"]))
      compile_root(*e, scope, ValueType::Bool, "where", split.where);
  if (c.count("cut")) {
    std::vector<std::string> cuts{"before", "after"};
    for (const auto& span : schema().span_names()) cuts.push_back(span);
    if (auto cut = choice(*c["cut"], "cut", cuts)) {
      split.cut_after = *cut == 1;
      if (*cut >= 2) split.cut_span = cuts[*cut];
    }
  }
  if (c.count("neighbour"))
    if (auto n = choice(*c["neighbour"], "neighbour", {"weak", "strong", "none"}))
      split.neighbour = std::array{Neighbour::Weak, Neighbour::Strong, Neighbour::None}[*n];
  if (c.count("loop")) {
    const dsl::Clause& loop = *c["loop"];
    if (loop.args.empty())
      split.loop = true;
    else
      error(*loop.args[0], "clause 'loop' takes no value",
            {"write `loop` alone on its line: the cut is where the thread returns to its loop"});
  }
  if (c.count("priority"))
    if (auto p = priority(*c["priority"])) split.priority = *p;
  out_.splits.push_back(std::move(split));
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

// ---- disable: a pack turns off another pack's rule --------------------------------------

// `disable PACK/RULE` (or a local id, this pack's own): marks the rule, which the engine
// then skips. Only rules that act on a graph can be disabled; a link's candidates are left
// to its edge rules, which can be.
void Checker::apply_disables() {
  std::map<std::string, RuleOrigin*> rules;
  for (auto& r : out_.splits) rules[r.origin.id] = &r.origin;
  for (auto& r : out_.batches) rules[r.origin.id] = &r.origin;
  for (auto& r : out_.edges) rules[r.origin.id] = &r.origin;
  for (auto& r : out_.flags) rules[r.origin.id] = &r.origin;
  for (auto& r : out_.holders) rules[r.origin.id] = &r.origin;
  std::vector<std::string> ids;
  for (const auto& [id, _] : rules) ids.push_back(id);
  for (size_t p = 0; p < units_.size(); ++p) {
    const std::string& me = units_[p].info.id;
    for (const dsl::File* file : units_[p].files) {
      source_ = file->source;
      for (const dsl::Disable& d : file->disables) {
        const std::string id = d.rule.find('/') == std::string::npos ? me + "/" + d.rule : d.rule;
        const std::string owner = id.substr(0, id.find('/'));
        auto it = rules.find(id);
        auto pack = pack_index_.find(owner);
        const auto& visible = packs_[p].visible;
        if (pack != pack_index_.end() &&
            std::find(visible.begin(), visible.end(), pack->second) == visible.end()) {
          error_at(
              d.rule_loc, d.rule.size(),
              fmt::format("pack '{}' disables '{}' but does not require pack '{}'", me, id, owner),
              {fmt::format("add `requires {}` to the pack header", owner)});
        } else if (it == rules.end()) {
          bool link = std::any_of(out_.links.begin(), out_.links.end(),
                                  [&](const LinkRule& l) { return l.origin.id == id; });
          if (link)
            error_at(d.rule_loc, d.rule.size(),
                     fmt::format("'{}' is a link: disable the edge "
                                 "rules that classify its candidates",
                                 id));
          else
            error_at(d.rule_loc, d.rule.size(),
                     fmt::format("no split, batch, edge or flag rule '{}' to disable", id),
                     did_you_mean(id, ids));
        } else {
          if (it->second->active()) it->second->disabled_by = me;
          out_.disabled.push_back({id, me, source_, d.loc});
        }
      }
    }
  }
}

void Checker::check_batch(const dsl::Rule& rule) {
  BatchRule batch;
  batch.origin = origin(rule);
  const std::vector<std::string> allowed = {"within", "item", "where", "neighbour"};
  const dsl::Clause* within = nullptr;
  const dsl::Clause* item = nullptr;
  const dsl::Clause* within_where = nullptr;
  const dsl::Clause* item_where = nullptr;
  const dsl::Clause* neighbour = nullptr;
  const dsl::Clause* last = nullptr;  // `where` belongs to the clause before it
  for (const auto& clause : rule.clauses) {
    const dsl::Clause** slot = nullptr;
    if (clause.keyword == "within")
      slot = &within;
    else if (clause.keyword == "item")
      slot = &item;
    else if (clause.keyword == "neighbour")
      slot = &neighbour;
    else if (clause.keyword == "where") {
      if (last == within && within)
        slot = &within_where;
      else if (last == item && item)
        slot = &item_where;
      else {
        error_at(clause.loc, clause.keyword.size(),
                 "in a batch rule, 'where' follows 'within SPAN' or 'item KIND'");
        continue;
      }
    } else {
      error_at(clause.loc, clause.keyword.size(),
               fmt::format("unknown clause '{}' in batch rule", clause.keyword),
               did_you_mean(clause.keyword, allowed));
      continue;
    }
    if (*slot) {
      error_at(clause.loc, clause.keyword.size(),
               fmt::format("clause '{}' given twice", clause.keyword));
      continue;
    }
    *slot = &clause;
    last = &clause;
  }
  for (auto [clause, name] : {std::pair{within, "within"}, std::pair{item, "item"}})
    if (!clause)
      error_at(rule.id_loc, rule.id.size(),
               fmt::format("missing clause '{}' in batch rule '{}'", name, rule.id));
  if (within)
    if (const dsl::Expr* e = single(*within))
      if (auto span = word(*e, "a span name")) {
        batch.span_open = schema().span_opener(*span);
        if (batch.span_open == kNoKind)
          error(*e,
                fmt::format("unknown span '{}' (expected {})", *span,
                            alternatives(schema().span_names())),
                did_you_mean(*span, schema().span_names()));
        else
          batch.span = *span;
      }
  if (item) batch.item = event_kind(*item);
  if (within_where && batch.span_open != kNoKind)
    if (const dsl::Expr* e = single(*within_where))
      compile_root(*e, Scope{false, batch.span_open}, ValueType::Bool, "where", batch.within_where);
  if (item_where && batch.item != kNoKind)
    if (const dsl::Expr* e = single(*item_where))
      compile_root(*e, Scope{false, batch.item}, ValueType::Bool, "where", batch.item_where);
  if (neighbour)
    if (auto n = choice(*neighbour, "neighbour", {"weak", "strong", "none"}))
      batch.neighbour = std::array{Neighbour::Weak, Neighbour::Strong, Neighbour::None}[*n];
  out_.batches.push_back(std::move(batch));
}

void Checker::check_flag(const dsl::Rule& rule) {
  auto c = collect(rule, {"symbol", "binary", "address", "size", "set", "access", "strength"}, {});
  FlagRule flag;
  flag.origin = origin(rule);
  if (!c.count("symbol") && !c.count("address"))
    error_at(rule.id_loc, rule.id.size(),
             fmt::format("missing clause 'symbol' in flag rule '{}'", rule.id),
             {"or give its fixed address: `address 0x...`"});
  for (auto [name, slot] : {std::pair{"symbol", &flag.symbol}, std::pair{"binary", &flag.binary}})
    if (c.count(name))
      if (const dsl::Expr* e = single(*c[name])) {
        if (e->kind == dsl::ExprKind::Str && !e->sval.empty())
          *slot = e->sval;
        else
          error(*e, fmt::format("'{}' needs a string", name));
      }
  if (c.count("address"))
    if (const dsl::Expr* e = single(*c["address"])) {
      if (e->kind == dsl::ExprKind::Int && !e->is_duration && e->ival > 0)
        flag.address = static_cast<uint64_t>(e->ival);
      else
        error(*e, "'address' needs a positive integer like 0x601040");
    }
  if (c.count("size"))
    if (const dsl::Expr* e = single(*c["size"])) {
      auto size = const_int(*e);
      if (!size || e->is_duration || (*size != 1 && *size != 2 && *size != 4 && *size != 8))
        error(*e, "'size' must be 1, 2, 4 or 8 (bytes)");
      else
        flag.size = static_cast<int>(*size);
    }
  if (c.count("set"))
    if (const dsl::Expr* e = single(*c["set"]))
      compile_root(*e, Scope{false, schema().find("flag_write")}, ValueType::Bool, "set", flag.set);
  if (c.count("access"))
    if (auto a = choice(*c["access"], "access", {"read", "write", "both"}))
      flag.access = static_cast<FlagRule::Access>(*a);
  if (c.count("strength"))
    if (auto s = choice(*c["strength"], "strength", {"strong", "weak"}))
      flag.strength = *s == 0 ? Strength::Strong : Strength::Weak;
  out_.flags.push_back(std::move(flag));
}

// `holder ID { syscall "NAME", ...  owner OFFSET [size 4|8] }` (the owner's tid beside the
// waited-on word) or `holder ID { syscall "NAME", ...  peer fd }` (the process at the other
// end of the pipe or socket the call's fd names).
void Checker::check_holder(const dsl::Rule& rule) {
  auto c = collect(rule, {"syscall", "owner", "size", "peer"}, {"syscall"});
  HolderRule holder;
  holder.origin = origin(rule);
  if (c.count("syscall"))
    for (const auto& e : c["syscall"]->args) {
      if (e->kind == dsl::ExprKind::Str && !e->sval.empty())
        holder.syscalls.push_back(e->sval);
      else
        error(*e, "'syscall' needs system calls' names, like \"futex\"");
    }
  if (c.count("owner") == c.count("peer"))
    error_at(rule.id_loc, rule.id.size(),
             fmt::format("holder rule '{}' needs one of 'owner OFFSET' (the owner's thread id "
                         "beside the waited-on word) or 'peer fd' (the other end of a stream)",
                         rule.id));
  if (c.count("owner"))
    if (const dsl::Expr* e = single(*c["owner"])) {
      auto offset = const_int(*e);
      if (!offset || e->is_duration || *offset < -4096 || *offset > 4096)
        error(*e,
              "'owner' needs the owner's offset in bytes from the waited-on address, "
              "between -4096 and 4096");
      else
        holder.owner_offset = *offset;
    }
  if (c.count("peer") && choice(*c["peer"], "peer", {"fd"})) holder.find = HolderRule::Find::Peer;
  if (c.count("size")) {
    if (c.count("peer")) error_at(c["size"]->loc, 4, "'size' is the owner word's: not with 'peer'");
    if (const dsl::Expr* e = single(*c["size"])) {
      auto size = const_int(*e);
      if (!size || e->is_duration || (*size != 4 && *size != 8))
        error(*e, "'size' must be 4 or 8 (bytes)");
      else
        holder.size = static_cast<int>(*size);
    }
  }
  out_.holders.push_back(std::move(holder));
}

void Checker::check_answer(const dsl::Rule& rule) {
  auto c = collect(rule, {"question", "subject", "choose"}, {"question", "subject", "choose"});
  AnswerRule answer;
  answer.origin = origin(rule);
  static const std::vector<std::string> questions = {"edge", "baseline", "recurse"};
  bool question_known = false;
  if (c.count("question"))
    if (const dsl::Expr* e = single(*c["question"]))
      if (auto w = word(*e, "a question kind")) {
        auto it = std::find(questions.begin(), questions.end(), *w);
        if (it == questions.end()) {
          error(
              *e,
              fmt::format("unknown question kind '{}' (expected {})", *w, alternatives(questions)),
              did_you_mean(*w, questions));
        } else {
          answer.question = static_cast<AnswerRule::Question>(it - questions.begin());
          question_known = true;
        }
      }
  using Q = AnswerRule::Question;
  if (c.count("subject"))
    if (const dsl::Expr* e = single(*c["subject"])) {
      Scope scope;
      scope.answer = "subject";
      compile_root(*e, scope, ValueType::Bool, "subject", answer.subject);
    }
  const dsl::Expr* choose = c.count("choose") ? single(*c["choose"]) : nullptr;
  if (choose && question_known) {
    const bool bare = choose->kind == dsl::ExprKind::Name && choose->path.size() == 1;
    const std::string word = bare ? choose->path[0] : std::string();
    if (word == "stop") {
      answer.choice = AnswerRule::Choice::Stop;
    } else if (word == "recurse") {
      if (answer.question == Q::Recurse)
        answer.choice = AnswerRule::Choice::Recurse;
      else
        error(*choose,
              fmt::format("'choose recurse' answers a recurse question, not {} question",
                          answer.question == Q::Edge ? "an edge" : "a baseline"),
              {answer.question == Q::Edge
                   ? "an edge question chooses an edge (over from., to. and edge.kind) or stop"
                   : "a baseline question chooses a segment (over its first event) or stop"});
    } else if (answer.question == Q::Recurse) {
      error(*choose, "a recurse question is answered by 'choose recurse' or 'choose stop'");
    } else {
      Scope scope;
      scope.answer = "choose";
      if (answer.question == Q::Edge) {
        scope.pair = true;
        scope.classified = true;  // the edge exists: `edge.kind` is its kind
      }
      compile_root(*choose, scope, ValueType::Bool, "choose", answer.choose);
    }
  }
  out_.answers.push_back(std::move(answer));
}

// ---- tests ----------------------------------------------------------------------------

void Checker::check_test(const dsl::TestBlock& test) {
  PackState& pack = packs_[pack_];
  if (auto it = pack.test_names.find(test.name); it != pack.test_names.end()) {
    error_at(test.loc, 4,
             fmt::format("duplicate test '{}' in pack '{}'", test.name, units_[pack_].info.id));
    diags_.note(it->second.first, it->second.second, 4, "first defined here");
  } else {
    pack.test_names.emplace(test.name, std::pair(source_, test.loc));
  }
  PackTest out;
  out.hang = "auto";
  const dsl::Clause* hang = nullptr;
  for (const auto& clause : test.clauses) {
    if (clause.keyword != "hang") {
      error_at(clause.loc, clause.keyword.size(),
               fmt::format("unknown clause '{}' in test", clause.keyword),
               // An expectation's misspelt attribute ends it and reads as a clause.
               did_you_mean(clause.keyword,
                            {"trace", "expect", "hang", "kind", "strength", "rule", "at"}));
      continue;
    }
    if (hang) {
      error_at(clause.loc, clause.keyword.size(), "clause 'hang' given twice");
      continue;
    }
    hang = &clause;
    const dsl::Expr* e = single(clause);
    if (!e) continue;
    if (e->kind == dsl::ExprKind::Str && parse_hang_spec(e->sval))
      out.hang = e->sval;
    else
      error(*e, "'hang' needs \"auto\", \"TID@SECONDS\" or a thread name",
            {"SECONDS count from the start of the trace, as in \"811@1.5\"; a thread name "
             "(\"cw-browser\") picks that thread's longest stretch"});
  }
  if (!test.has_trace)
    error_at(test.loc, 4, fmt::format("test '{}' has no trace", test.name),
             {"add one: trace [[ causeway-trace 1 ... ]] or trace file \"PATH\""});
  out.pack = units_[pack_].info.id;
  out.name = test.name;
  out.source = source_;
  out.loc = test.loc;
  out.trace_text = test.trace_text;
  out.trace_loc = test.trace_loc;
  if (test.trace_is_file) {
    out.trace_loc = test.trace_file_loc;
    if (test.trace_file.empty()) {
      error_at(test.trace_file_loc, 2, "'trace file' needs a path");
    } else {
      // Relative to the folder of the file that holds the test.
      std::filesystem::path path(test.trace_file);
      if (path.is_relative()) path = std::filesystem::path(source_->path).parent_path() / path;
      out.trace_file = path.lexically_normal().generic_string();
    }
  }
  bool diagnoses = false;
  for (const auto& expect : test.expects) {
    diagnoses = diagnoses || expect.subject == "hang" || expect.subject == "root_cause" ||
                expect.subject == "questions";
    Expectation e;
    if (check_expect(expect, e)) out.expects.push_back(std::move(e));
  }
  if (hang && !diagnoses)
    error_at(hang->loc, hang->keyword.size(),
             "'hang' names the symptom of a diagnosis, and this test expects none",
             {"add `expect hang TID`, `expect root_cause TID` or `expect questions OP N`"});
  out_.tests.push_back(std::move(out));
}

bool Checker::check_expect(const dsl::Expect& expect, Expectation& out) {
  static const std::vector<std::string> subjects = {"edge", "split",      "segments", "stat",
                                                    "hang", "root_cause", "questions"};
  auto subject = std::find(subjects.begin(), subjects.end(), expect.subject);
  if (subject == subjects.end()) {
    error_at(expect.subject_loc, expect.subject.size(),
             fmt::format("unknown expectation '{}' (expected {})", expect.subject,
                         alternatives(subjects)));
    return false;
  }
  out.loc = expect.loc;
  out.negated = expect.negated;
  out.subject = static_cast<Expectation::Subject>(subject - subjects.begin());
  using S = Expectation::Subject;
  const bool counted =
      out.subject == S::Segments || out.subject == S::Stat || out.subject == S::Questions;
  if (expect.negated && counted) {
    error_at(expect.subject_loc, expect.subject.size(),
             "'expect no' works with edge and split only");
    return false;
  }
  const bool one_thread =
      out.subject == S::Split || out.subject == S::Hang || out.subject == S::RootCause;
  const size_t operands = one_thread || out.subject == S::Questions ? 1 : 2;
  const char* usage = out.subject == S::Edge        ? "expect edge A -> B"
                      : out.subject == S::Split     ? "expect split T"
                      : out.subject == S::Segments  ? "expect segments T OP N"
                      : out.subject == S::Stat      ? "expect stat NAME OP N"
                      : out.subject == S::Hang      ? "expect hang T"
                      : out.subject == S::RootCause ? "expect root_cause T"
                                                    : "expect questions OP N";
  if (expect.operands.size() != operands || counted == expect.cmp.empty()) {
    error_at(expect.loc, 6, fmt::format("malformed expectation: the form is `{}`", usage));
    return false;
  }
  bool ok = true;
  auto tid = [&](const dsl::Expr& e, uint32_t& slot) {
    if (e.kind == dsl::ExprKind::Int && !e.is_duration && e.ival > 0 && e.ival <= UINT32_MAX) {
      slot = static_cast<uint32_t>(e.ival);
    } else {
      error(e, "expected a thread id");
      ok = false;
    }
  };
  out.cmp = expect.cmp;
  if (out.subject == S::Stat) {
    if (expect.operands[0]->kind == dsl::ExprKind::Name) {
      out.stat = joined(expect.operands[0]->path);
    } else {
      error(*expect.operands[0], "expected a statistic name");
      ok = false;
    }
  } else if (out.subject != S::Questions) {
    tid(*expect.operands[0], out.from_tid);
  }
  if (out.subject == S::Edge) tid(*expect.operands[1], out.to_tid);
  if (counted) {
    const dsl::Expr& n = *expect.operands.back();
    auto value = const_int(n);
    if (value && !n.is_duration) {
      out.value = *value;
    } else {
      error(n, "expected an integer");
      ok = false;
    }
  }
  std::vector<std::string> attributes;
  if (out.subject == S::Edge) attributes = {"kind", "strength", "rule", "at"};
  if (out.subject == S::Split) attributes = {"at", "rule"};
  if (out.subject == S::Hang || out.subject == S::RootCause) attributes = {"kind"};
  std::set<std::string> seen;
  for (const auto& attr : expect.attrs) {
    if (std::find(attributes.begin(), attributes.end(), attr.name) == attributes.end()) {
      error_at(attr.loc, attr.name.size(),
               fmt::format("unknown attribute '{}' of expect {}", attr.name, expect.subject),
               did_you_mean(attr.name, attributes));
      ok = false;
      continue;
    }
    if (!seen.insert(attr.name).second) {
      error_at(attr.loc, attr.name.size(), fmt::format("attribute '{}' given twice", attr.name));
      ok = false;
      continue;
    }
    if (!attr.value) continue;
    const dsl::Expr& v = *attr.value;
    if (attr.name == "at") {
      if (v.kind == dsl::ExprKind::Int && v.is_duration && v.ival >= 0) {
        out.has_at = true;
        out.at_ns = static_cast<uint64_t>(v.ival);
      } else {
        error(v, "'at' needs a time like 1.5ms");
        ok = false;
      }
    } else if (attr.name == "rule") {
      if (auto id = id_text(v))
        out.rule = *id;
      else
        ok = false;
    } else if (attr.name == "kind" && (out.subject == S::Hang || out.subject == S::RootCause)) {
      static const std::vector<std::string> kinds = {"LongRunning", "RepeatedYield", "LongWait"};
      auto kind = word(v, "a hang kind");
      if (kind && std::find(kinds.begin(), kinds.end(), *kind) != kinds.end()) {
        out.kind = *kind;
      } else {
        if (kind)
          error(v, fmt::format("unknown hang kind '{}' (expected {})", *kind, alternatives(kinds)),
                did_you_mean(*kind, kinds));
        ok = false;
      }
    } else if (attr.name == "kind") {
      if (auto kind = word(v, "an edge kind"))
        out.kind = *kind;
      else
        ok = false;
    } else {
      static const std::vector<std::string> strengths = {"strong", "weak", "boosted", "boost"};
      auto s = word(v, "a strength");
      if (s && std::find(strengths.begin(), strengths.end(), *s) != strengths.end()) {
        out.strength = *s;
      } else {
        if (s)
          error(v, fmt::format("unknown strength '{}' (expected strong, weak or boosted)", *s));
        ok = false;
      }
    }
  }
  return ok;
}

}  // namespace

LintFacts check_packs(const std::vector<PackUnit>& packs, RuleSet& out, Diagnostics& diags) {
  return Checker(packs, out, diags).run();
}

void sort_edges(RuleSet& out) {
  std::map<std::string, size_t> load_index;
  for (size_t i = 0; i < out.packs.size(); ++i) load_index[out.packs[i].id] = i;
  std::stable_sort(out.edges.begin(), out.edges.end(), [&](const EdgeRule& a, const EdgeRule& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    return load_index[a.origin.pack] > load_index[b.origin.pack];
  });
  std::stable_sort(out.splits.begin(), out.splits.end(),
                   [](const SplitRule& a, const SplitRule& b) { return a.priority > b.priority; });
}

}  // namespace cw::rules
