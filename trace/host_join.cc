#include "trace/host_join.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <unordered_map>

namespace cw {

namespace {

// One side of a message's bytes: [offset, offset + len) of flow `object`, and when: a
// send from the start of the call that wrote it (the bytes may reach the receiver before
// the call returns), a receive when the call that read it returned.
struct Piece {
  uint64_t offset = 0, len = 0;
  uint64_t ts = 0;
};
using Pieces = std::unordered_map<uint64_t, std::vector<Piece>>;  // by object

struct MessageEnds {
  Pieces sends, recvs;
};

MessageEnds message_ends(const Trace& t) {
  MessageEnds out;
  const KindId send = t.schema.find("send"), recv = t.schema.find("recv");
  const KindId enter = t.schema.find("syscall_enter"), exit = t.schema.find("syscall_exit");
  if (send == kNoKind || recv == kNoKind) return out;
  const int obj_s = t.schema.field_index(send, "object"),
            off_s = t.schema.field_index(send, "offset"), len_s = t.schema.field_index(send, "len");
  const int obj_r = t.schema.field_index(recv, "object"),
            off_r = t.schema.field_index(recv, "offset"), len_r = t.schema.field_index(recv, "len");
  if (obj_s < 0 || off_s < 0 || len_s < 0 || obj_r < 0 || off_r < 0 || len_r < 0) return out;
  std::unordered_map<Tid, uint64_t> open_call;  // the thread's call in progress: its start
  for (const Event& e : t.events) {
    if (e.kind == enter) {
      open_call[e.tid] = e.ts;
    } else if (e.kind == exit) {
      open_call.erase(e.tid);
    } else if (e.kind == send) {
      const auto it = open_call.find(e.tid);
      const uint64_t object = t.value(e, obj_s);
      if (object == 0 || t.value(e, len_s) == 0) continue;
      out.sends[object].push_back(
          {t.value(e, off_s), t.value(e, len_s), it == open_call.end() ? e.ts : it->second});
    } else if (e.kind == recv) {
      const uint64_t object = t.value(e, obj_r);
      if (object == 0 || t.value(e, len_r) == 0) continue;
      out.recvs[object].push_back({t.value(e, off_r), t.value(e, len_r), e.ts});
    }
  }
  for (auto* pieces : {&out.sends, &out.recvs})
    for (auto& [object, list] : *pieces)
      std::sort(list.begin(), list.end(),
                [](const Piece& a, const Piece& b) { return a.offset < b.offset; });
  return out;
}

// For each receive in `recvs` whose last byte a send in `sends` wrote: (send start,
// receive time) of that pair. The receive returned after every one of its bytes was sent,
// so after the call that sent its last byte began.
template <class Fn>
void each_message(const Pieces& sends, const Pieces& recvs, std::unordered_set<uint64_t>& shared,
                  Fn&& fn) {
  for (const auto& [object, received] : recvs) {
    const auto it = sends.find(object);
    if (it == sends.end()) continue;
    const std::vector<Piece>& sent = it->second;
    for (const Piece& r : received) {
      const uint64_t last = r.offset + r.len - 1;
      // The last send that begins at or before the byte.
      auto s = std::upper_bound(sent.begin(), sent.end(), last,
                                [](uint64_t byte, const Piece& p) { return byte < p.offset; });
      if (s == sent.begin()) continue;
      --s;
      if (last >= s->offset + s->len) continue;
      shared.insert(object);
      fn(s->ts, r.ts);
    }
  }
}

int64_t signed_diff(uint64_t a, uint64_t b) {
  return static_cast<int64_t>(a) - static_cast<int64_t>(b);
}

uint64_t shifted(uint64_t ts, int64_t offset) {
  const int64_t v = static_cast<int64_t>(ts) + offset;
  if (v < 0) throw std::out_of_range("a time falls before 0 on the new clock");
  return static_cast<uint64_t>(v);
}

// Field roles come from the schema causeway knows (a file's own schema says names and
// types only).
FieldRole role_of(const KindDef& kind, const FieldDef& field) {
  if (field.type == FieldType::Tid) return FieldRole::Task;
  const Schema& builtin = Schema::builtin();
  const KindId k = builtin.find(kind.name);
  if (k == kNoKind) return FieldRole::Plain;
  const int f = builtin.field_index(k, field.name);
  return f < 0 ? FieldRole::Plain : builtin.kind(k).fields[f].role;
}

}  // namespace

ClockAlignment align_clocks(const Trace& base, const Trace& other) {
  const MessageEnds b = message_ends(base), o = message_ends(other);
  ClockAlignment a;
  int64_t low = std::numeric_limits<int64_t>::min(), high = std::numeric_limits<int64_t>::max();
  each_message(b.sends, o.recvs, a.shared_objects, [&](uint64_t sent, uint64_t received) {
    low = std::max(low, signed_diff(sent, received));
    ++a.to_other;
  });
  each_message(o.sends, b.recvs, a.shared_objects, [&](uint64_t sent, uint64_t received) {
    high = std::min(high, signed_diff(received, sent));
    ++a.to_base;
  });
  if (a.to_other) a.low_ns = low;
  if (a.to_base) a.high_ns = high;
  if (a.bounded())
    a.offset_ns = low + (high - low) / 2;
  else if (a.to_other)
    a.offset_ns = low;  // bounded one way only: the tightest bound, no delay assumed
  else if (a.to_base)
    a.offset_ns = high;
  return a;
}

void shift_clock(Trace& trace, int64_t offset_ns) {
  if (offset_ns == 0) return;
  // Events mapped from the cache are read-only: changed, they are this trace's own.
  if (trace.events.is_view()) trace.events = std::move(trace.events).take();
  if (trace.values.is_view()) trace.values = std::move(trace.values).take();
  std::vector<std::vector<int>> time_fields(trace.schema.size());
  for (KindId k = 0; k < trace.schema.size(); ++k) {
    const KindDef& def = trace.schema.kind(k);
    for (size_t f = 0; f < def.fields.size(); ++f)
      if (role_of(def, def.fields[f]) == FieldRole::Time)
        time_fields[k].push_back(static_cast<int>(f));
  }
  for (size_t i = 0; i < trace.events.size(); ++i) {
    Event& e = trace.events[i];
    e.ts = shifted(e.ts, offset_ns);
    for (int f : time_fields[e.kind]) {
      uint64_t& v = trace.value_ref(e, f);
      if (v != 0) v = shifted(v, offset_ns);
    }
  }
  for (MapRecord& m : trace.maps) m.ts = shifted(m.ts, offset_ns);
  for (JitSymbol& j : trace.jit_symbols) j.ts = shifted(j.ts, offset_ns);
  for (LostRecord& l : trace.lost) l.ts = shifted(l.ts, offset_ns);
  for (LossRecord& l : trace.losses) l.ts = shifted(l.ts, offset_ns);
}

JoinedTrace join_traces(std::vector<Trace> traces, const std::vector<int64_t>& known_offsets_ns,
                        const std::vector<std::string>& names) {
  if (traces.empty()) throw std::invalid_argument("no trace to join");
  auto name = [&](size_t i) {
    return i < names.size() ? names[i] : fmt::format("trace {}", i + 1);
  };
  JoinedTrace out;
  out.clocks.resize(traces.size());
  out.renumbered.resize(traces.size(), 0);
  std::vector<int64_t> offsets(traces.size(), 0);
  for (size_t k = 1; k < traces.size(); ++k) {
    out.clocks[k] = align_clocks(traces[0], traces[k]);
    if (k < known_offsets_ns.size()) {
      out.clocks[k].offset_ns = known_offsets_ns[k];
    } else if (out.clocks[k].to_other == 0 && out.clocks[k].to_base == 0) {
      throw std::invalid_argument(
          fmt::format("{} and {} exchanged no TCP message that both recorded: nothing aligns "
                      "their clocks",
                      name(0), name(k)));
    }
    offsets[k] = out.clocks[k].offset_ns;
  }
  // No time may fall below 0: raise every trace alike when one would.
  int64_t lowest = 0;
  for (size_t k = 0; k < traces.size(); ++k) {
    if (traces[k].events.empty()) continue;
    lowest = std::min(lowest, static_cast<int64_t>(traces[k].events.front().ts) + offsets[k]);
    for (const MapRecord& m : traces[k].maps)
      lowest = std::min(lowest, static_cast<int64_t>(m.ts) + offsets[k]);
  }
  out.raised_ns = static_cast<uint64_t>(-lowest);
  for (size_t k = 0; k < traces.size(); ++k)
    shift_clock(traces[k], offsets[k] + static_cast<int64_t>(out.raised_ns));

  Trace& joined = out.trace;
  joined = std::move(traces[0]);
  // Ids in use: a later trace's process or thread with one of them gets a new one.
  std::unordered_set<uint32_t> used;
  uint32_t next_id = 1u << 22;  // above Linux's largest pid (PID_MAX_LIMIT)
  for (const ProcessInfo& p : joined.processes) used.insert(p.pid);
  for (const ThreadInfo& t : joined.threads) used.insert(t.tid);
  uint32_t cpus = 0;
  for (const Event& e : joined.events) cpus = std::max<uint32_t>(cpus, e.cpu + 1u);

  for (size_t k = 1; k < traces.size(); ++k) {
    Trace& t = traces[k];
    const std::unordered_set<uint64_t>& shared = out.clocks[k].shared_objects;
    // Another host's addresses and inodes name other things than this one's.
    const uint64_t salt = 0x9e3779b97f4a7c15ull * (k + 1);
    std::unordered_map<uint32_t, uint32_t> ids;
    auto id_of = [&](uint32_t id) -> uint32_t {
      if (id == 0) return 0;
      auto it = ids.find(id);
      if (it != ids.end()) return it->second;
      uint32_t to = id;
      if (used.count(id)) {
        while (used.count(next_id)) ++next_id;
        to = next_id++;
      }
      ids.emplace(id, to);
      return to;
    };
    // Every id of this trace first, so that its own ids map alike wherever they appear.
    for (const ProcessInfo& p : t.processes) id_of(p.pid);
    for (const ThreadInfo& th : t.threads) id_of(th.tid);
    for (const auto& [from, to] : ids)
      if (from != to) ++out.renumbered[k];
    for (const auto& [from, to] : ids) used.insert(to);

    std::unordered_map<StrId, StrId> strings;
    auto str = [&](StrId id) -> StrId {
      if (id == 0) return 0;
      auto it = strings.find(id);
      if (it != strings.end()) return it->second;
      const StrId to = joined.strings.intern(t.strings.get(id));
      strings.emplace(id, to);
      return to;
    };
    for (ProcessInfo p : t.processes) {
      p.pid = id_of(p.pid);
      p.ppid = p.ppid ? id_of(p.ppid) : 0;
      p.comm = str(p.comm);
      p.exe = str(p.exe);
      joined.processes.push_back(p);
    }
    for (ThreadInfo th : t.threads) {
      th.tid = id_of(th.tid);
      th.pid = id_of(th.pid);
      th.comm = str(th.comm);
      joined.threads.push_back(th);
    }
    std::vector<StackId> stacks(t.stacks.size(), 0);
    for (size_t s = 1; s < t.stacks.size(); ++s) {
      Stack copy = t.stacks[s];
      for (StrId& sym : copy.symbols) sym = str(sym);
      for (Frame& f : copy.frames) {
        f.function = str(f.function);
        f.file = str(f.file);
        f.module = str(f.module);
      }
      stacks[s] = joined.add_stack(std::move(copy));
    }
    for (MapRecord m : t.maps) {
      m.pid = id_of(m.pid);
      m.path = str(m.path);
      m.build_id = str(m.build_id);
      joined.maps.push_back(m);
    }
    for (JitSymbol j : t.jit_symbols) {
      j.pid = id_of(j.pid);
      j.name = str(j.name);
      joined.jit_symbols.push_back(j);
    }
    for (LostRecord l : t.lost) {
      l.cpu = static_cast<uint16_t>(l.cpu + cpus);
      joined.lost.push_back(l);
    }
    for (const LossRecord& l : t.losses) joined.losses.push_back(l);

    // Kinds by name; a kind the joined trace lacks is added with its fields.
    std::vector<KindId> kinds(t.schema.size());
    std::vector<std::vector<int>> field_at(t.schema.size());
    for (KindId kk = 0; kk < t.schema.size(); ++kk) {
      const KindDef& def = t.schema.kind(kk);
      KindId to = joined.schema.find(def.name);
      if (to == kNoKind) to = joined.schema.add(def);
      kinds[kk] = to;
      for (const FieldDef& f : def.fields)
        field_at[kk].push_back(joined.schema.field_index(to, f.name));
    }
    uint32_t cpus_here = 0;
    for (const Event& e : t.events) {
      cpus_here = std::max<uint32_t>(cpus_here, e.cpu + 1u);
      const KindDef& def = t.schema.kind(e.kind);
      Event& to = joined.add_event(e.ts, id_of(e.tid), kinds[e.kind],
                                   static_cast<uint16_t>(e.cpu + cpus), stacks[e.stack]);
      for (size_t f = 0; f < def.fields.size(); ++f) {
        const int at = field_at[e.kind][f];
        if (at < 0) continue;  // a field of the same kind the base does not have
        uint64_t v = t.value(e, static_cast<int>(f));
        const FieldDef& fd = def.fields[f];
        if (fd.type == FieldType::Str) {
          v = str(static_cast<StrId>(v));
        } else {
          switch (role_of(def, fd)) {
            case FieldRole::Task:
              if (static_cast<int64_t>(v) > 0 && v <= 0xffffffffu)
                v = id_of(static_cast<uint32_t>(v));
              break;
            case FieldRole::Identity:
              if (v != 0 && v != ~uint64_t{0} && !shared.count(v)) v ^= salt;
              break;
            default: break;
          }
        }
        joined.value_ref(to, at) = v;
      }
    }
    cpus += cpus_here;
  }
  joined.sort_events();
  joined.sort_maps();
  joined.rebuild_indexes();
  return out;
}

}  // namespace cw
