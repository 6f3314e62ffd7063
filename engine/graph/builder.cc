// The graph builder's passes in order (build_state.h declares them, each file does one
// job): index the rules by event kind, scan the events (builder_scan.cc: spans, cuts at
// events, link candidates, flag pairs), cut by peers and make the segments
// (builder_segments.cc), classify the candidates into edges and add the neighbour and flag
// edges (builder_edges.cc), then count over-connections (over_connections.cc). A rebuild
// that reuses a graph's edges (BuildOptions::reuse) redoes the cuts only.
#include "engine/graph/builder.h"

#include <fmt/format.h>
#include <malloc.h>

#include <algorithm>
#include <tuple>

#include "base/parallel.h"
#include "base/source.h"
#include "dsl/rule_kinds.h"
#include "engine/graph/build_state.h"

namespace cw::engine {

namespace build {

namespace {

constexpr size_t kMaxBatchRules = 64;

Census take_census(const Trace& trace, const SpanTree& spans, uint64_t parallel_from) {
  Census parts[2];
  const uint64_t n = trace.events.size();
  in_two_parts(n, n >= parallel_from, [&](uint64_t begin, uint64_t end, int part) {
    Census& c = parts[part];
    for (uint64_t i = begin; i < end; ++i) {
      const Event& e = trace.events[i];
      c.span_opens += spans.opens(e.kind) != kNoSpan;
    }
  });
  return {parts[0].span_opens + parts[1].span_opens};
}

}  // namespace

Builder::Builder(const Trace& trace, const RuleSet& rules, const BuildOptions& options)
    : trace_(trace),
      rules_(rules),
      options_(options),
      parallel_from_(worker_count() >= 2 ? options.parallel_from : UINT64_MAX),
      reuse_(rules.cut_rules_call_lua() ? nullptr : options.reuse),
      record_(!rules.cut_rules_call_lua() && options.record_matches),
      spans_(trace.schema),
      lua_(rules, options.lua_limits),
      eval_(trace, spans_, &lua_, options.interpret_expressions),
      threads_index_(trace.threads.size()) {
  if (!reuse_) count_span_opens();
}

void Builder::count_span_opens() {
  if (census_taken_) return;
  census_ = take_census(trace_, spans_, parallel_from_);
  spans_.reserve(census_.span_opens);
  census_taken_ = true;
}

BuildResult Builder::run() {
  prepare();
  if (reuse_) {
    forget_edge_work();
    if (!cuts_from_matches()) {
      count_span_opens();
      if (!scan_cuts_in_two_shares()) scan_events();
    }
    peer_cuts_ = reused_peer_cuts();
    result_.peer_cuts = reuse_->peer_cuts;
    merge_peer_cuts();
    if (!segments_from_reused()) make_segments();
    fold_cuts();
    spans_.release();
    reuse_edges();
    event_segment_.clear();
    event_segment_.shrink_to_fit();
    std::vector<uint32_t>().swap(old_lo_);
    std::vector<uint32_t>().swap(old_hi_);
  } else {
    scan_events();
    finish_links();
    peer_cuts();
    merge_peer_cuts();
    make_segments();
    fold_cuts();
    classify_candidates();
    spans_.release();  // candidates were the last users of event span contexts
    neighbour_edges();
    flag_edges();
  }
  threads_.clear();
  threads_.shrink_to_fit();
  malloc_trim(0);
  report("graph", 0, 1);
  result_.graph.build_csr();
  if (options_.count_over_connections) fill_over_connections(result_);
  report("graph", 1, 1);
  return std::move(result_);
}

void Builder::report(std::string_view phase, uint64_t done, uint64_t total) {
  if (options_.progress) options_.progress(phase, done, total);
}

void Builder::rule_error(const rules::RuleOrigin& origin, std::string message) {
  Diagnostic d;
  d.source = origin.source;
  d.loc = origin.loc;
  d.message = std::move(message);
  throw DiagnosticError(std::move(d));
}

KindActions& Builder::actions(KindId kind) {
  if (kind >= by_kind_.size()) by_kind_.resize(static_cast<size_t>(kind) + 1);
  return by_kind_[kind];
}

void Builder::prepare() {
  const auto& r = rules_;
  result_.graph.rule_names = RuleNames::from(r);
  auto& counts = result_.counts;
  counts.splits.assign(r.splits.size(), 0);
  counts.batches.assign(r.batches.size(), 0);
  counts.edges.assign(r.edges.size(), 0);
  counts.pruned.assign(r.edges.size(), 0);
  counts.boosted.assign(r.edges.size(), 0);
  counts.flags.assign(r.flags.size(), 0);

  for (uint32_t i = 0; i < r.splits.size(); ++i) {
    const auto& s = r.splits[i];
    split_where_.push_back(eval_.prepare(s.where, s.origin));
    split_span_.push_back(s.cut_span.empty() ? kNoSpan : spans_.span_id(s.cut_span));
    if (!s.origin.active()) continue;  // turned off by another pack's `disable`
    if (s.mode == rules::SplitRule::Mode::AtEvent) {
      if (s.at != kNoKind) actions(s.at).splits.push_back(i);
    } else if (s.link >= r.links.size()) {
      rule_error(s.origin, fmt::format("{} {} names no link",
                                       dsl::rule_keyword(dsl::RuleKind::Split), s.origin.id));
    }
  }
  if (r.batches.size() > kMaxBatchRules)
    rule_error(r.batches[kMaxBatchRules].origin,
               fmt::format("too many batch rules: the engine supports at most {}", kMaxBatchRules));
  for (uint32_t i = 0; i < r.batches.size(); ++i) {
    const auto& b = r.batches[i];
    batch_within_.push_back(eval_.prepare(b.within_where, b.origin));
    batch_item_.push_back(eval_.prepare(b.item_where, b.origin));
    batch_per_.push_back(eval_.prepare(b.per, b.origin));
    batch_cut_span_.push_back(b.cut_span.empty() ? kNoSpan : spans_.span_id(b.cut_span));
    if (!b.origin.active()) continue;
    if (b.span_open != kNoKind) actions(b.span_open).batch_opens.push_back(i);
    if (b.item != kNoKind) actions(b.item).batch_items.push_back(i);
  }
  for (uint32_t i = 0; i < r.links.size(); ++i) {
    const auto& l = r.links[i];
    pairers_.push_back(std::make_unique<LinkPairer>(trace_, spans_, l, i, parallel_from_));
    link_where_.push_back(eval_.prepare(l.where, l.origin));
    link_from_where_.push_back(eval_.prepare(l.from_where, l.origin));
    link_to_where_.push_back(eval_.prepare(l.to_where, l.origin));
    if (l.from != kNoKind) actions(l.from).links.push_back(i);
    if (l.to != kNoKind && l.to != l.from) actions(l.to).links.push_back(i);
  }
  link_decide_.resize(r.links.size());
  link_prune_.resize(r.links.size());
  link_boost_.resize(r.links.size());
  link_kind_.resize(r.links.size());
  for (uint32_t i = 0; i < r.links.size(); ++i)
    link_kind_[i] = result_.graph.intern_kind(r.links[i].origin.local);
  for (uint32_t i = 0; i < r.edges.size(); ++i) {
    const auto& e = r.edges[i];
    edge_where_.push_back(eval_.prepare(e.where, e.origin));
    edge_cost_.push_back(eval_.prepare(e.cost, e.origin));
    edge_kind_.push_back(e.kind.empty() ? uint16_t{0xffff} : result_.graph.intern_kind(e.kind));
    if (e.link >= r.links.size())
      rule_error(e.origin, fmt::format("{} {} names no link",
                                       dsl::rule_keyword(dsl::RuleKind::Edge), e.origin.id));
    if (!e.origin.active()) continue;
    switch (e.strength) {
      case rules::Strength::Strong:
      case rules::Strength::Weak: link_decide_[e.link].push_back(i); break;
      case rules::Strength::Prune: link_prune_[e.link].push_back(i); break;
      case rules::Strength::Boost: link_boost_[e.link].push_back(i); break;
    }
  }
  KindId flag_write = trace_.schema.find("flag_write");
  KindId flag_read = trace_.schema.find("flag_read");
  if (flag_write != kNoKind) {
    flag_field_ = trace_.schema.field_index(flag_write, "flag");
    addr_field_ = trace_.schema.field_index(flag_write, "addr");
    value_field_ = trace_.schema.field_index(flag_write, "value");
  }
  for (uint32_t i = 0; i < r.flags.size(); ++i) {
    const auto& f = r.flags[i];
    flag_set_.push_back(eval_.prepare(f.set, f.origin));
    FlagState st;
    st.local = trace_.strings.find(f.origin.local);
    st.qualified = trace_.strings.find(f.origin.id);
    flags_.push_back(std::move(st));
    if (!f.origin.active()) continue;
    if (flag_write != kNoKind) actions(flag_write).flag_writes.push_back(i);
    if (flag_read != kNoKind) actions(flag_read).flag_reads.push_back(i);
  }
  split_kind_ = result_.graph.intern_kind(kSplitKind);
}

}  // namespace build

std::span<const uint32_t> ThreadEventLists::of(Tid tid) const {
  auto it = std::lower_bound(tids.begin(), tids.end(), tid);
  if (it == tids.end() || *it != tid) return {};
  const auto i = static_cast<size_t>(it - tids.begin());
  return events.subspan(at[i], at[i + 1] - at[i]);
}

BuildResult build_graph(const Trace& trace, const rules::RuleSet& rules,
                        const BuildOptions& options) {
  return build::Builder(trace, rules, options).run();
}

}  // namespace cw::engine
