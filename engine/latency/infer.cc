#include "engine/latency/infer.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "trace/command_marker.h"

namespace cw::latency {

void ContextTracker::close_from(size_t depth, uint64_t next) {
  while (open_.size() > depth) {
    FunctionInstance in = open_.back();
    open_.pop_back();
    in.next = next;
    CctNode& n = cct_.node(in.node);
    ++n.instances;
    n.total.conservative += in.latency(Mode::Conservative);
    n.total.aggressive += in.latency(Mode::Aggressive);
    if (out_) out_->push_back(in);
  }
}

void ContextTracker::sample(uint64_t ts, std::span<const FunctionId> outer_first) {
  cct_.path_id(outer_first, &nodes_);
  // The context continues up to the first depth whose node differs: the same function
  // under a different caller is a different node, so comparing nodes compares contexts.
  size_t same = 0;
  while (same < open_.size() && same < nodes_.size() && open_[same].node == nodes_[same]) ++same;
  close_from(same, ts);
  for (auto& in : open_) in.last = ts;
  for (size_t d = same; d < nodes_.size(); ++d)
    open_.push_back(FunctionInstance{nodes_[d], tid_, ts, ts, ts});
  last_ts_ = ts;
}

void ContextTracker::finish(uint64_t end) {
  close_from(0, std::max(end, last_ts_));
}

namespace {

bool selected(const Trace& trace, const ThreadInfo& t, const Selection& s) {
  if (s.pid && t.pid != *s.pid) return false;
  if (s.tree && !in_process_tree(trace, t.pid, *s.tree)) return false;
  if (s.tid && t.tid != *s.tid) return false;
  if (s.comm) {
    const ProcessInfo* p = trace.process(t.pid);
    const bool named =
        trace.strings.get(t.comm) == *s.comm || (p && trace.strings.get(p->comm) == *s.comm);
    if (!named) return false;
  }
  return true;
}

}  // namespace

Profile infer(const Trace& trace, const Selection& selection, const InferOptions& options) {
  Profile out;
  // First pass: which threads to follow, and where each one's recording ends.
  struct Seen {
    bool wanted = false;
    bool has_stack = false;
    uint64_t end = 0;  // its last event of any kind (or the stretch's end)
  };
  std::unordered_map<Tid, Seen> seen;
  for (const ThreadInfo& t : trace.threads)
    if ((seen[t.tid].wanted = selected(trace, t, selection))) ++out.selected_threads;
  for (const Event& e : trace.events) {
    auto it = seen.find(e.tid);
    if (it == seen.end() || !it->second.wanted) continue;
    if (e.ts > selection.to) {
      it->second.end = selection.to;  // it went on past the stretch
      continue;
    }
    it->second.end = std::max(it->second.end, e.ts);
    if (e.ts >= selection.from) it->second.has_stack |= e.stack != 0;
  }
  if (!trace.events.empty()) {
    out.start_ns = std::max(selection.from, trace.events.front().ts);
    out.end_ns = std::min(selection.to, trace.events.back().ts);
  }

  // Second pass, in time order, one tracker per thread that has stacks.
  struct Followed {
    ContextTracker tracker;
    FunctionId process_frame;
    // Spans the thread is inside (schema span roles: a system call, a function call), with
    // the stack taken where each opened. The thread stays in that context until the span
    // closes, so the closing event is one more stack: without it a call that blocked
    // would end, conservatively, where it began.
    std::vector<std::pair<const std::string*, StackId>> spans;
  };
  std::unordered_map<Tid, Followed> followed;
  std::vector<FunctionInstance>* keep = options.keep_instances ? &out.instances : nullptr;
  std::vector<FunctionId> by_symbol(trace.strings.size(), kNoFunction);
  // Unnamed frames, by (module, offset), or (0, address) outside any known file.
  std::map<std::pair<StrId, uint64_t>, FunctionId> by_ip;
  FunctionId signal_frame = kNoFunction;  // "[signal handler]", interned when first seen
  std::vector<FunctionId> frames;
  std::vector<Frame> plain;
  for (const Event& e : trace.events) {
    if (e.ts < selection.from) continue;
    if (e.ts > selection.to) break;
    auto it = seen.find(e.tid);
    if (it == seen.end() || !it->second.wanted || !it->second.has_stack) continue;
    auto f = followed.find(e.tid);
    if (f == followed.end()) {
      const ThreadInfo* info = trace.thread(e.tid);
      const ProcessInfo* proc = info ? trace.process(info->pid) : nullptr;
      const std::string_view comm = proc   ? trace.strings.get(proc->comm)
                                    : info ? trace.strings.get(info->comm)
                                           : "?";
      f = followed
              .emplace(e.tid, Followed{ContextTracker(out.cct, e.tid, keep),
                                       out.cct.intern(fmt::format("[{}]", comm)),
                                       {}})
              .first;
    }
    Followed& t = f->second;
    StackId stack = e.stack;
    const KindDef& kind = trace.schema.kind(e.kind);
    if (kind.span_role == SpanRole::Open) {
      t.spans.emplace_back(&kind.span, e.stack);
    } else if (kind.span_role == SpanRole::Close) {
      auto open = std::find_if(t.spans.rbegin(), t.spans.rend(),
                               [&](const auto& o) { return *o.first == kind.span; });
      if (open != t.spans.rend()) {
        if (stack == 0) stack = open->second;
        t.spans.erase(std::next(open).base(), t.spans.end());
      }
    }
    if (stack == 0) continue;
    const bool own = e.stack != 0;  // not one repeated at a span's end
    const Stack& s = trace.stacks[stack];
    frames.assign(1, t.process_frame);
    // Symbolised frames when there are (an inlined function is a frame, so a node, of its
    // own), else one per ip with the names the trace holds.
    const std::vector<Frame>* list = &s.frames;
    if (s.frames.empty()) {
      plain = frames_of(s);
      list = &plain;
    }
    for (size_t k = list->size(); k-- > 0;) {
      const Frame& fr = (*list)[k];
      if (own) ++out.frames;
      // A signal handler's context begins at the signal: what runs outside it is wherever
      // the signal landed, a different context each time for the same handler (and, in a
      // process forked from a handler, for its whole life).
      if (fr.signal) {
        if (signal_frame == kNoFunction) signal_frame = out.cct.intern("[signal handler]");
        frames.assign({t.process_frame, signal_frame});
        continue;
      }
      if (fr.function != 0) {
        FunctionId& id = by_symbol[fr.function];
        if (id == kNoFunction) id = out.cct.intern(trace.strings.get(fr.function));
        frames.push_back(id);
        continue;
      }
      if (own) ++out.unnamed_frames;
      // An unnamed frame is named by its file and offset there (the same in every run,
      // whatever the address space layout), else by its address.
      auto [ip, added] =
          by_ip.try_emplace(std::make_pair(fr.module, fr.module ? fr.offset : fr.ip), 0);
      if (added) ip->second = out.cct.intern(frame_name(trace.strings, fr));
      frames.push_back(ip->second);
    }
    t.tracker.sample(e.ts, frames);
    ++(own ? out.stacks : out.span_ends);
  }
  // Threads in id order, so the instances' order does not depend on hash order.
  std::vector<Tid> order;
  for (const auto& [tid, t] : followed) order.push_back(tid);
  std::sort(order.begin(), order.end());
  for (Tid tid : order) followed.at(tid).tracker.finish(seen.at(tid).end);
  out.threads = order.size();
  out.cct.normalize();
  return out;
}

std::vector<FunctionCost> costliest_functions(const Cct& cct, Mode mode, size_t n) {
  std::unordered_map<FunctionId, uint64_t> own;
  for (NodeId v = 1; v < cct.node_count(); ++v)
    own[cct.node(v).function] += cct.node(v).own.get(mode);
  std::vector<FunctionCost> out;
  for (const auto& [f, ns] : own)
    if (ns > 0) out.push_back({cct.function_name(f), ns});
  std::sort(out.begin(), out.end(), [](const FunctionCost& a, const FunctionCost& b) {
    return a.own_ns != b.own_ns ? a.own_ns > b.own_ns : a.function < b.function;
  });
  if (out.size() > n) out.resize(n);
  return out;
}

}  // namespace cw::latency
