// Checker pass: what names and ids resolve to. `requires` (which packs a pack sees), named
// lists, Lua blocks, links (indexed before the pass so edge rules can name them), rule ids,
// and the names an expression can use on an event (docs/rules.md "Names").
#include <fmt/format.h>

#include <cctype>
#include <set>

#include "dsl/rule_kinds.h"
#include "rules/check_context.h"

namespace cw::rules::check {

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

// ---- set-up ---------------------------------------------------------------------------

// What every pack sees is the transitive closure of `requires`: quadratic in a long chain
// (20,000 packs each requiring the next took 50 s and 1.7 GB). Past this many entries in
// all, loading stops with an error at the pack that crossed it.
constexpr size_t kMaxVisible = size_t{1} << 20;

void Checker::compute_visibility() {
  size_t total = 0;
  bool over = false;
  for (size_t p = 0; p < units_.size(); ++p) {
    packs_[p].visible.push_back(p);
    if (over) continue;
    std::set<size_t> seen{p};
    std::vector<size_t> pending{p};
    while (!pending.empty() && !over) {
      size_t q = pending.back();
      pending.pop_back();
      for (const auto& req : units_[q].info.requires_) {
        auto it = pack_index_.find(req);
        if (it != pack_index_.end() && seen.insert(it->second).second) {
          pending.push_back(it->second);
          if (total + seen.size() > kMaxVisible) {
            over = true;
            break;
          }
        }
      }
    }
    if (over) {
      const PackInfo& info = units_[p].info;
      diags_.error(info.header_source, info.header_loc, 4,
                   fmt::format("pack '{}' and the packs loaded before it see more than {} packs "
                               "through their requirements, counted per pack",
                               info.id, kMaxVisible),
                   {"a pack sees every pack its requirements require, transitively: a long "
                    "chain of requirements makes that quadratic; require fewer packs"});
      continue;
    }
    total += seen.size();
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
      if (rule.kind != dsl::RuleKind::Link) continue;
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

// Ids are unique within a pack; the first of duplicates is kept.
void Checker::check_rule_id(const dsl::Rule& rule) {
  PackState& pack = packs_[pack_];
  if (auto it = pack.rule_ids.find(rule.id); it != pack.rule_ids.end()) {
    error_at(rule.id_loc, rule.id.size(),
             fmt::format("duplicate rule id '{}' in pack '{}'", rule.id, units_[pack_].info.id));
    diags_.note(it->second.first, it->second.second, width(rule.id.size()), "first defined here");
  } else {
    pack.rule_ids.emplace(rule.id, std::pair(source_, rule.id_loc));
  }
}

// ---- ids ------------------------------------------------------------------------------

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
  error(e,
        fmt::format("{} rule '{}' uses unknown link '{}'", dsl::rule_keyword(rule.kind), rule.id,
                    *name),
        did_you_mean(local, candidates));
  return std::nullopt;
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

bool Checker::lua_function_visible(const std::string& name) const {
  for (size_t q : packs_[pack_].visible)
    if (packs_[q].lua && packs_[q].lua->has_function(name)) return true;
  return false;
}

}  // namespace cw::rules::check
