#include "engine/graph/event_names.h"

#include <algorithm>
#include <optional>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "base/varint.h"

namespace cw::engine {

using rules::ExprNode;
using rules::Op;
using rules::ValueType;

int naming_field(const Schema& schema, KindId kind) {
  if (kind >= schema.size()) return -1;
  const KindDef& def = schema.kind(kind);
  return !def.fields.empty() && def.fields[0].type == FieldType::Str ? 0 : -1;
}

namespace {

// Whether node `n` reads the naming field of the rule's own event of `kind`.
bool is_naming_field(const rules::CompiledExpr& e, uint32_t n, KindId kind, int field) {
  const ExprNode& node = e.nodes[n];
  return node.op == Op::Field && node.field.side == rules::Side::Self &&
         node.field.scope == rules::FieldScope::EventField && node.field.kind == kind &&
         node.field.field == field;
}

bool is_text(const ExprNode& node) {
  return node.op == Op::Const && node.type == ValueType::Str;
}

// The names a conjunct allows, when it is a test of the naming field against constants.
std::optional<std::vector<std::string>> names_of(const rules::CompiledExpr& e, uint32_t n,
                                                 KindId kind, int field) {
  const ExprNode& node = e.nodes[n];
  if (node.kids.size() != 2) return std::nullopt;
  const uint32_t a = node.kids[0], b = node.kids[1];
  if (node.op == Op::Eq) {
    if (is_naming_field(e, a, kind, field) && is_text(e.nodes[b])) return {{e.nodes[b].sval}};
    if (is_naming_field(e, b, kind, field) && is_text(e.nodes[a])) return {{e.nodes[a].sval}};
    return std::nullopt;
  }
  if (node.op == Op::In && is_naming_field(e, a, kind, field)) {
    const ExprNode& list = e.nodes[b];
    if (list.op != Op::Const || list.type != ValueType::List) return std::nullopt;
    std::vector<std::string> names;
    for (uint32_t k : list.kids) {
      if (!is_text(e.nodes[k])) return std::nullopt;
      names.push_back(e.nodes[k].sval);
    }
    return names;
  }
  return std::nullopt;
}

// Whether evaluating node `n` may fail (a division or modulo by zero, a hook's error).
bool may_fail(const rules::CompiledExpr& e, uint32_t n) {
  std::vector<uint32_t> pending{n};
  while (!pending.empty()) {
    const uint32_t m = pending.back();
    pending.pop_back();
    if (m >= e.nodes.size()) return true;
    const ExprNode& node = e.nodes[m];
    if (node.op == Op::Div || node.op == Op::Mod || node.op == Op::Call) return true;
    pending.insert(pending.end(), node.kids.begin(), node.kids.end());
  }
  return false;
}

// The names outside which node `n` is false, reached with nothing evaluated that may fail
// (nullopt: no such names). A conjunction is bounded by any conjunct that names names,
// when no conjunct before it may fail: at an event of another name that one would still
// be evaluated, and its error is the rule's (a whole build's) even there. A disjunction
// is bounded when every disjunct is, by their union: outside it each is false in turn.
// `whole`: the names are the node's whole test (a name test, or a disjunction of them).
std::optional<std::vector<std::string>> bound(const rules::CompiledExpr& e, uint32_t n, KindId kind,
                                              int field, bool& whole) {
  if (n >= e.nodes.size()) return std::nullopt;
  const ExprNode& node = e.nodes[n];
  if (node.op == Op::And) {
    whole = false;
    for (const uint32_t kid : node.kids) {
      bool unused = false;
      if (auto names = bound(e, kid, kind, field, unused)) return names;
      if (may_fail(e, kid)) return std::nullopt;
    }
    return std::nullopt;
  }
  if (node.op == Op::Or) {
    std::vector<std::string> all;
    bool all_whole = true;
    for (const uint32_t kid : node.kids) {
      bool kid_whole = false;
      auto names = bound(e, kid, kind, field, kid_whole);
      if (!names) return std::nullopt;
      all.insert(all.end(), names->begin(), names->end());
      all_whole = all_whole && kid_whole;
    }
    whole = all_whole;
    return all;
  }
  auto names = names_of(e, n, kind, field);
  whole = names.has_value();
  return names;
}

}  // namespace

NameSelector name_selector(const rules::CompiledExpr& where, KindId kind, const Schema& schema) {
  NameSelector out;
  const int field = naming_field(schema, kind);
  if (field < 0 || where.empty() || where.root >= where.nodes.size()) return out;
  bool whole = false;
  auto names = bound(where, where.root, kind, field, whole);
  if (!names) return out;
  out.by_name = true;
  std::sort(names->begin(), names->end());
  names->erase(std::unique(names->begin(), names->end()), names->end());
  out.names = std::move(*names);
  out.whole = whole;
  return out;
}

EventNames::EventNames(std::vector<List> lists, std::string_view bytes,
                       std::shared_ptr<const void> keep, uint64_t events)
    : lists_(std::move(lists)), bytes_(bytes), keep_(std::move(keep)), events_(events) {
  uint64_t total = 0;
  std::set<std::pair<KindId, std::string_view>> seen;
  for (const List& l : lists_) {
    if (l.at > bytes_.size() || l.size > bytes_.size() - l.at)
      throw std::invalid_argument("an event list outside the index's bytes");
    // Every event takes a byte at least.
    if (l.count > l.size) throw std::invalid_argument("an event list shorter than its count");
    if (!l.named && !l.name.empty()) throw std::invalid_argument("a name on an unnamed list");
    if (!seen.emplace(l.kind, l.name).second)
      throw std::invalid_argument("a kind and name listed twice");
    total += l.count;
  }
  if (total != events_) throw std::invalid_argument("the event lists do not cover the trace");
}

EventNames EventNames::of(const Trace& trace) {
  const uint64_t n = trace.events.size();
  if (n >= UINT32_MAX) throw std::length_error("trace has too many events to list by name");
  std::vector<int> field(trace.schema.size());
  for (size_t k = 0; k < field.size(); ++k)
    field[k] = naming_field(trace.schema, static_cast<KindId>(k));
  // Each list's bytes and its last event, keyed by (kind, name's StrId) (an unnamed kind's
  // name is 0); the lists come out ordered by kind, then name.
  struct Building {
    std::string bytes;
    uint64_t count = 0;
    int64_t last = -1;
  };
  std::vector<std::unordered_map<StrId, Building>> by_kind(field.size());
  for (uint64_t i = 0; i < n; ++i) {
    const Event& e = trace.events[i];
    if (e.kind >= by_kind.size())
      throw std::invalid_argument("an event of a kind the schema lacks");
    const StrId name = field[e.kind] >= 0 ? static_cast<StrId>(trace.value(e, field[e.kind])) : 0;
    Building& b = by_kind[e.kind][name];
    put_varint(b.bytes, static_cast<uint64_t>(static_cast<int64_t>(i) - b.last - 1));
    b.last = static_cast<int64_t>(i);
    ++b.count;
  }
  auto bytes = std::make_shared<std::string>();
  std::vector<List> lists;
  for (size_t k = 0; k < by_kind.size(); ++k) {
    std::vector<std::pair<std::string_view, Building*>> names;
    for (auto& [id, b] : by_kind[k])
      names.emplace_back(field[k] >= 0 ? trace.strings.get(id) : std::string_view{}, &b);
    std::sort(names.begin(), names.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [name, b] : names) {
      lists.push_back({static_cast<KindId>(k), field[k] >= 0, std::string(name), b->count,
                       bytes->size(), b->bytes.size()});
      bytes->append(b->bytes);
      std::string().swap(b->bytes);
    }
  }
  const std::string_view view = *bytes;
  return EventNames(std::move(lists), view, std::move(bytes), n);
}

void EventNames::decode(const List& list, std::vector<uint32_t>& out) const {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes_.data() + list.at);
  const auto* end = p + list.size;
  int64_t last = -1;
  for (uint64_t i = 0; i < list.count; ++i) {
    uint64_t step = 0;
    if (read_varint(p, end, step) != VarintRead::Ok || step >= events_)
      throw std::invalid_argument("an event list cut short or past the trace");
    const uint64_t event = static_cast<uint64_t>(last + 1) + step;
    if (event >= events_) throw std::invalid_argument("an event list past the trace");
    out.push_back(static_cast<uint32_t>(event));
    last = static_cast<int64_t>(event);
  }
  if (p != end) throw std::invalid_argument("bytes after an event list's last event");
}

std::vector<uint32_t> EventNames::events(KindId kind, const NameSelector& selector) const {
  std::vector<uint32_t> out;
  uint64_t count = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (const List& l : lists_) {
      if (l.kind != kind) continue;
      if (selector.by_name &&
          (!l.named || !std::binary_search(selector.names.begin(), selector.names.end(), l.name)))
        continue;
      if (pass == 0)
        count += l.count;
      else
        decode(l, out);
    }
    if (pass == 0) out.reserve(count);
  }
  return out;
}

}  // namespace cw::engine
