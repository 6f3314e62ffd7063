#include "engine/graph/link_pairing.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <thread>
#include <type_traits>

#include "base/source.h"

namespace cw::engine {

using rules::FieldScope;
using rules::LinkRule;

size_t LinkPairer::KeyHash::operator()(const Key& k) const {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (uint64_t x : k.v) {
    h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
  }
  return static_cast<size_t>(h ^ (h >> 33));
}

size_t LinkPairer::WordHash::operator()(uint64_t k) const {
  uint64_t h = k * 0x9e3779b97f4a7c15ull;
  return static_cast<size_t>(h ^ (h >> 32));
}

LinkPairer::LinkPairer(const Trace& trace, const SpanTree& spans, const LinkRule& rule,
                       uint32_t link_index, uint64_t parallel_from)
    : trace_(trace), spans_(spans), rule_(rule), index_(link_index), parallel_from_(parallel_from) {
  if (rule.join.size() > kMaxJoin) {
    Diagnostic d;
    d.source = rule.origin.source;
    d.loc = rule.origin.loc;
    d.message = fmt::format("link {} joins on {} fields; the engine supports at most {}",
                            rule.origin.id, rule.join.size(), kMaxJoin);
    throw DiagnosticError(std::move(d));
  }
}

// A field of the event that opened the innermost open span of `ref.span` (0 when none is).
uint64_t LinkPairer::span_field(const EventCtx& ctx, const rules::FieldRef& ref) const {
  const SpanId span = spans_.span_id(ref.span);
  const uint32_t node = span == kNoSpan ? SpanTree::kRoot : spans_.innermost(ctx.node, span);
  if (node == SpanTree::kRoot || ref.field < 0) return 0;
  const Event& opener = trace_.events[spans_.at(node).opener];
  return opener.kind == ref.kind ? trace_.value(opener, ref.field) : 0;
}

LinkPairer::Key LinkPairer::key_of(const EventCtx& ctx, Pid pid, bool from_side) const {
  const Event& e = trace_.events[ctx.event];
  Key k;
  for (size_t i = 0; i < rule_.join.size(); ++i) {
    const rules::FieldRef& ref = from_side ? rule_.join[i].first : rule_.join[i].second;
    switch (ref.scope) {
      case FieldScope::EventField:
        k.v[i] = ref.field >= 0 && e.kind == ref.kind ? trace_.value(e, ref.field) : 0;
        break;
      case FieldScope::SpanField: k.v[i] = span_field(ctx, ref); break;
      case FieldScope::Tid: k.v[i] = e.tid; break;
      case FieldScope::Pid: k.v[i] = pid; break;
      case FieldScope::Ts: k.v[i] = e.ts; break;
      case FieldScope::Cpu: k.v[i] = e.cpu; break;
      default: k.v[i] = 0; break;
    }
  }
  return k;
}

bool LinkPairer::close_enough(uint32_t a, uint32_t b) const {
  if (rule_.within_ns == 0) return true;
  uint64_t ta = trace_.events[a].ts, tb = trace_.events[b].ts;
  return (ta > tb ? ta - tb : tb - ta) <= rule_.within_ns;
}

template <class K, class H>
uint32_t LinkPairer::Tables<K, H>::key_id(const K& k) {
  uint32_t& id = key_ids[k];
  if (id == 0) id = static_cast<uint32_t>(key_ids.size());
  return id - 1;
}

void LinkPairer::on_event(const EventCtx& ctx, Pid pid, std::vector<Candidate>& out, bool as_from,
                          bool as_to) {
  if (rule_.join.size() <= 1)
    pair(narrow_, ctx, pid, out, as_from, as_to);
  else
    pair(wide_, ctx, pid, out, as_from, as_to);
}

template <class K, class H>
void LinkPairer::pair(Tables<K, H>& tables, const EventCtx& ctx, Pid pid,
                      std::vector<Candidate>& out, bool as_from, bool as_to) {
  auto key = [&](const Event&, bool from_side) -> K {
    if constexpr (std::is_same_v<K, uint64_t>)
      return key_of(ctx, pid, from_side).v[0];
    else
      return key_of(ctx, pid, from_side);
  };
  const Event& e = trace_.events[ctx.event];
  // The `to` role first, so an event of a link from a kind to itself never pairs with
  // itself.
  if (e.kind == rule_.to && as_to) {
    K k = key(e, false);
    switch (rule_.pick) {
      case LinkRule::Pick::Next:
        if (auto* waiting = tables.pending.find(k)) {
          for (const EventCtx& from : *waiting)
            if (close_enough(from.event, ctx.event)) out.push_back({from, ctx, index_});
          waiting->clear();
        }
        break;
      case LinkRule::Pick::Latest:
        if (auto* from = tables.latest.find(k); from && close_enough(from->event, ctx.event))
          out.push_back({*from, ctx, index_});
        break;
      case LinkRule::Pick::Overlap: {
        uint64_t off = rule_.to_offset_field >= 0 ? trace_.value(e, rule_.to_offset_field) : 0;
        uint64_t len = rule_.to_len_field >= 0 ? trace_.value(e, rule_.to_len_field) : 0;
        range_to_.push_back({tables.key_id(k), ctx, off, off + len});
        break;
      }
    }
  }
  if (e.kind == rule_.from && as_from) {
    K k = key(e, true);
    switch (rule_.pick) {
      case LinkRule::Pick::Next: tables.pending[k].push_back(ctx); break;
      case LinkRule::Pick::Latest: tables.latest[k] = ctx; break;
      case LinkRule::Pick::Overlap: {
        uint64_t off = rule_.offset_field >= 0 ? trace_.value(e, rule_.offset_field) : 0;
        uint64_t len = rule_.len_field >= 0 ? trace_.value(e, rule_.len_field) : 0;
        range_from_.push_back({tables.key_id(k), ctx, off, off + len});
        break;
      }
    }
  }
}

// Orders ranges by (key, begin, event). Key ids are dense and each key's ranges arrive in
// trace order, mostly with rising offsets already: a counting sort by key, then sorting
// only the runs that are out of order, beats one comparison sort of everything. The
// counting sort moves ranges in place (4 bytes of scratch per range, not a second copy:
// this phase sets the build's peak memory).
void LinkPairer::sort_by_key_offset(std::vector<RangeEnd>& ranges, size_t keys) {
  std::vector<uint32_t> run_start(keys + 1, 0);
  for (const RangeEnd& r : ranges) ++run_start[r.key + 1];
  for (size_t k = 0; k < keys; ++k) run_start[k + 1] += run_start[k];
  std::vector<uint32_t> next(run_start.begin(), run_start.end() - 1);
  std::vector<uint32_t> destination(ranges.size());
  for (size_t i = 0; i < ranges.size(); ++i) destination[i] = next[ranges[i].key]++;
  for (uint32_t i = 0; i < ranges.size(); ++i)
    while (destination[i] != i) {
      uint32_t j = destination[i];
      std::swap(ranges[i], ranges[j]);
      std::swap(destination[i], destination[j]);
    }
  auto by_offset = [](const RangeEnd& a, const RangeEnd& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.ctx.event < b.ctx.event;
  };
  for (size_t k = 0; k < keys; ++k) {
    auto first = ranges.begin() + run_start[k], last = ranges.begin() + run_start[k + 1];
    if (!std::is_sorted(first, last, by_offset)) std::sort(first, last, by_offset);
  }
}

void LinkPairer::finish(std::vector<Candidate>& out) {
  if (rule_.pick != LinkRule::Pick::Overlap) return;
  // Byte ranges pair regardless of time order (clocks of two CPUs may disagree); the
  // ranges of one key's `from` side are a stream's writes, which do not overlap each other.
  size_t keys = wide_.key_ids.size() + narrow_.key_ids.size();  // one of them is used
  // The two sides sort independently, each into the one order its comparison allows.
  if (range_from_.size() + range_to_.size() >= parallel_from_) {
    std::exception_ptr error;
    std::thread from_side([&] {
      try {
        sort_by_key_offset(range_from_, keys);
      } catch (...) {
        error = std::current_exception();
      }
    });
    try {
      sort_by_key_offset(range_to_, keys);
    } catch (...) {
      from_side.join();
      throw;
    }
    from_side.join();
    if (error) std::rethrow_exception(error);
  } else {
    sort_by_key_offset(range_from_, keys);
    sort_by_key_offset(range_to_, keys);
  }
  size_t lo = 0;
  for (const RangeEnd& to : range_to_) {
    while (lo < range_from_.size() &&
           (range_from_[lo].key < to.key ||
            (range_from_[lo].key == to.key && range_from_[lo].end <= to.begin)))
      ++lo;
    for (size_t j = lo;
         j < range_from_.size() && range_from_[j].key == to.key && range_from_[j].begin < to.end;
         ++j) {
      const RangeEnd& from = range_from_[j];
      if (from.end > to.begin && from.begin < from.end &&
          close_enough(from.ctx.event, to.ctx.event))
        out.push_back({from.ctx, to.ctx, index_});
    }
  }
  range_from_.clear();
  range_from_.shrink_to_fit();
  range_to_.clear();
  range_to_.shrink_to_fit();
  wide_.key_ids.clear();
  narrow_.key_ids.clear();
}

}  // namespace cw::engine
