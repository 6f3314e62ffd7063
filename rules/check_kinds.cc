// Checker pass: one rule by its kind. The clauses each kind takes and needs come from
// dsl/rule_kinds.h (collected by check_clauses.cc); what their values must be, and what a
// rule compiles to (rules/ruleset.h), is here, one check per kind, and the table of kind
// semantics (rules/kind_semantics.h) at the end pairs each kind with its check and list.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>

#include "dsl/rule_kinds.h"
#include "rules/check_context.h"
#include "rules/kind_semantics.h"

namespace cw::rules::check {

using K = dsl::RuleKind;

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

template <>
void Checker::check<K::Link>(const dsl::Rule& rule) {
  // Made by index_links before the pass, so edge and split rules can name any link.
  LinkRule& link = out_.links[link_of_rule_.at(&rule)];
  auto c = collect(rule);
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

template <>
void Checker::check<K::Edge>(const dsl::Rule& rule) {
  auto c = collect(rule);
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
  if (c.count("ends_polling"))
    edge.ends_polling = bare(*c["ends_polling"], "ends_polling",
                             "the edge ends another thread's polling loop");
  if (c.count("request"))
    edge.request = bare(*c["request"], "request", "the edge carries another thread's request");
  const bool kinds_known = link && link->from != kNoKind && link->to != kNoKind;
  if (c.count("from_thread") && kinds_known)
    if (const dsl::Expr* e = single(*c["from_thread"])) {
      const KindDef& from = schema().kind(link->from);
      std::vector<std::string> tids;
      for (const auto& f : from.fields)
        if (f.type == FieldType::Tid) tids.push_back(f.name);
      if (e->kind != dsl::ExprKind::Name || e->path.size() != 1) {
        error(*e, "expected a field name here",
              {fmt::format("from_thread names a tid field of event '{}': {}", from.name,
                           tids.empty() ? std::string("it has none")
                                        : fmt::format("{}", fmt::join(tids, ", ")))});
      } else {
        const std::string& name = e->path[0];
        int index = schema().field_index(link->from, name);
        if (index < 0)
          error(*e, fmt::format("unknown field '{}' of event '{}'", name, from.name),
                did_you_mean(name, tids));
        else if (from.fields[index].type != FieldType::Tid)
          error(*e,
                fmt::format("field '{}' of event '{}' is of type {}, not tid", name, from.name,
                            field_type_name(from.fields[index].type)),
                {"from_thread names the thread the edge leaves from: a tid field"});
        else
          edge.from_thread = static_cast<int16_t>(index);
      }
    }
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

template <>
void Checker::check<K::Split>(const dsl::Rule& rule) {
  auto c = collect(rule);
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
  if (c.count("loop"))
    split.loop = bare(*c["loop"], "loop", "the cut is where the thread returns to its loop");
  if (c.count("priority"))
    if (auto p = priority(*c["priority"])) split.priority = *p;
  out_.splits.push_back(std::move(split));
}

template <>
void Checker::check<K::Batch>(const dsl::Rule& rule) {
  BatchRule batch;
  batch.origin = origin(rule);
  const dsl::RuleKindInfo& kind = dsl::rule_kind_info(dsl::RuleKind::Batch);
  const std::vector<std::string> allowed = strings(kind.clauses);
  const dsl::Clause* within = nullptr;
  const dsl::Clause* item = nullptr;
  const dsl::Clause* within_where = nullptr;
  const dsl::Clause* item_where = nullptr;
  const dsl::Clause* per = nullptr;
  const dsl::Clause* cut = nullptr;
  const dsl::Clause* neighbour = nullptr;
  const dsl::Clause* last = nullptr;  // `where` belongs to the clause before it
  // The clauses read below, by name (see LintFacts::clauses_read).
  facts_.clauses_read[dsl::RuleKind::Batch].insert(
      {"within", "item", "where", "per", "cut", "neighbour"});
  for (const auto& clause : rule.clauses) {
    const dsl::Clause** slot = nullptr;
    if (clause.keyword == "within")
      slot = &within;
    else if (clause.keyword == "item")
      slot = &item;
    else if (clause.keyword == "per")
      slot = &per;
    else if (clause.keyword == "cut")
      slot = &cut;
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
               fmt::format("unknown clause '{}' in {} rule", clause.keyword, kind.keyword),
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
  for (const std::string& name : strings(kind.required)) {
    const dsl::Clause* given = nullptr;
    if (name == "within") given = within;
    if (name == "item") given = item;
    if (!given)
      error_at(rule.id_loc, rule.id.size(),
               fmt::format("missing clause '{}' in {} rule '{}'", name, kind.keyword, rule.id));
  }
  if (within)
    if (const dsl::Expr* e = single(*within))
      if (auto span = word(*e, "a span name, or loop")) {
        if (*span == "loop") {
          batch.thread_loop = true;
        } else {
          batch.span_open = schema().span_opener(*span);
          if (batch.span_open == kNoKind) {
            std::vector<std::string> names = schema().span_names();
            names.push_back("loop");
            error(*e, fmt::format("unknown span '{}' (expected {})", *span, alternatives(names)),
                  did_you_mean(*span, names));
          } else {
            batch.span = *span;
          }
        }
      }
  if (item) batch.item = event_kind(*item);
  if (within_where && batch.thread_loop)
    error_at(within_where->loc, within_where->keyword.size(),
             "'within loop' takes no 'where': the loop is the thread's, where split rules with "
             "'loop' cut",
             {"choose the items with 'item KIND where ...'"});
  if (within_where && batch.span_open != kNoKind)
    if (const dsl::Expr* e = single(*within_where))
      compile_root(*e, Scope{false, batch.span_open}, ValueType::Bool, "where", batch.within_where);
  if (item_where && batch.item != kNoKind)
    if (const dsl::Expr* e = single(*item_where))
      compile_root(*e, Scope{false, batch.item}, ValueType::Bool, "where", batch.item_where);
  if (per && batch.item != kNoKind)
    if (const dsl::Expr* e = single(*per))
      compile_root(*e, Scope{false, batch.item}, ValueType::Int, "per", batch.per);
  if (cut)
    if (auto c = choice(*cut, "cut", schema().span_names()))
      batch.cut_span = schema().span_names()[*c];
  if (neighbour)
    if (auto n = choice(*neighbour, "neighbour", {"weak", "strong", "none"}))
      batch.neighbour = std::array{Neighbour::Weak, Neighbour::Strong, Neighbour::None}[*n];
  out_.batches.push_back(std::move(batch));
}

template <>
void Checker::check<K::Flag>(const dsl::Rule& rule) {
  auto c = collect(rule);
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
template <>
void Checker::check<K::Holder>(const dsl::Rule& rule) {
  auto c = collect(rule);
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

template <>
void Checker::check<K::Answer>(const dsl::Rule& rule) {
  auto c = collect(rule);
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

}  // namespace cw::rules::check

namespace cw::rules {

namespace {
template <auto list>
std::vector<RuleOrigin*> origins_of(RuleSet& rules) {
  std::vector<RuleOrigin*> found;
  for (auto& rule : rules.*list) found.push_back(&rule.origin);
  return found;
}
}  // namespace

using check::Checker;
using check::K;

// Each kind's check, and the RuleSet list it compiles into.
constexpr std::array<RuleKindSemantics, dsl::kRuleKinds.size()> kRuleKindSemantics = {{
    {K::Split, &Checker::check<K::Split>, origins_of<&RuleSet::splits>},
    {K::Batch, &Checker::check<K::Batch>, origins_of<&RuleSet::batches>},
    {K::Link, &Checker::check<K::Link>, origins_of<&RuleSet::links>},
    {K::Edge, &Checker::check<K::Edge>, origins_of<&RuleSet::edges>},
    {K::Flag, &Checker::check<K::Flag>, origins_of<&RuleSet::flags>},
    {K::Holder, &Checker::check<K::Holder>, origins_of<&RuleSet::holders>},
    {K::Answer, &Checker::check<K::Answer>, origins_of<&RuleSet::answers>},
}};

// A row for every kind of the table, in its order: a kind added there does not build until
// its row is here. (Whether each row has its check and its list is asked by
// rules/rule_kinds_test.cc, which runs both for every kind: comparing a function's address
// with null is not a constant expression under the sanitizers' build.)
static_assert([] {
  for (size_t k = 0; k < kRuleKindSemantics.size(); ++k) {
    if (kRuleKindSemantics[k].kind != dsl::kRuleKinds[k].kind) return false;
  }
  return true;
}());

}  // namespace cw::rules
