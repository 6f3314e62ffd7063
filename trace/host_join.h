// Traces of several hosts as one trace: the clocks aligned from the TCP messages the
// hosts exchanged, and what names a process, a thread or an object on one host kept apart
// from the same number on another. A message keeps its identity across hosts: the
// recorder names a TCP flow by its directed 4-tuple and its bytes by sequence number
// (kernel/bpf/files.bpf.h), so one host's send and the other's receive of the same bytes
// carry the same object and offset, and the graph's message rules join them as on one
// host. (Trace Compass synchronises traces of several hosts the same way: by the packets
// they exchanged, each one's send before its receive.)
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "trace/trace.h"

namespace cw {

// How one trace's clock stands to another's: add `offset_ns` to the other's times to put
// them on the base's clock. The messages bound it: every message sent from the base and
// received on the other says offset >= send start - receive (so `low_ns`), every one the
// other way offset <= receive - send start (`high_ns`); the estimate is the middle.
struct ClockAlignment {
  int64_t offset_ns = 0;
  int64_t low_ns = 0, high_ns = 0;  // valid when the count of its side is not 0
  uint32_t to_other = 0;            // messages base -> other that bound it from below
  uint32_t to_base = 0;             // messages other -> base that bound it from above
  // The TCP flows (objects) both traces name: they stay shared when joined.
  std::unordered_set<uint64_t> shared_objects;
  // Both directions bound it: the estimate is within (high - low) / 2 of the truth.
  bool bounded() const { return to_other > 0 && to_base > 0; }
  // The bounds disagree (low > high): the clocks drifted during the recordings, or bytes
  // were matched that are not the same.
  bool inconsistent() const { return bounded() && low_ns > high_ns; }
};

// The alignment of `other`'s clock to `base`'s from the TCP messages between them; no
// message at all: to_other == to_base == 0.
ClockAlignment align_clocks(const Trace& base, const Trace& other);

// Adds `offset_ns` to every time in `trace`: events, maps, JIT symbols, losses and the
// fields that hold a time (FieldRole::Time). A time that would fall below 0 is an error
// (std::out_of_range).
void shift_clock(Trace& trace, int64_t offset_ns);

struct JoinedTrace {
  Trace trace;
  // Per input trace (the first is the base: offset 0): how its clock was aligned.
  std::vector<ClockAlignment> clocks;
  // Per input trace: how many of its processes and threads got another id because the
  // first traces already used theirs.
  std::vector<uint32_t> renumbered;
  // Every time was raised by this much so that no shifted time fell below 0 (0 mostly).
  uint64_t raised_ns = 0;
};

// `traces` as one: each trace after the first aligned to the first (align_clocks), its
// events, stacks, maps and losses copied in with its clock shifted, its processes and
// threads that the first traces already number renumbered, its objects other than the
// shared TCP flows kept apart, its CPUs numbered after the first traces'. Throws
// std::invalid_argument when a trace after the first exchanged no TCP message with the
// first (nothing aligns its clock) and its offset is not given in `known_offsets_ns`
// (per trace, or empty: all estimated).
JoinedTrace join_traces(std::vector<Trace> traces,
                        const std::vector<int64_t>& known_offsets_ns = {},
                        const std::vector<std::string>& names = {});

}  // namespace cw
