// The symptom's entry points (symptom.h). The search itself is Finder's, one file per job
// (symptom_finder.h).
#include "engine/diagnosis/symptom.h"

#include "engine/diagnosis/symptom_finder.h"

namespace cw::engine {
namespace symptom_detail {

Finder::Finder(const Trace& trace, const Graph& graph, const ThreadEvents& events)
    : trace_(trace),
      g_(graph),
      ev_(events),
      enter_(trace.schema.find("syscall_enter")),
      exit_(trace.schema.find("syscall_exit")),
      marker_(trace.schema.find("marker")),
      thread_exit_(trace.schema.find("exit")),
      call_enter_(trace.schema.find("call_enter")),
      call_exit_(trace.schema.find("call_exit")),
      send_(trace.schema.find("send")),
      recv_(trace.schema.find("recv")),
      enter_name_(enter_ == kNoKind ? -1 : trace.schema.field_index(enter_, "name")),
      enter_fd_(enter_ == kNoKind ? -1 : trace.schema.field_index(enter_, "fd")),
      enter_resource_(enter_ == kNoKind ? -1 : trace.schema.field_index(enter_, "resource")),
      exit_ret_(exit_ == kNoKind ? -1 : trace.schema.field_index(exit_, "ret")),
      marker_text_(marker_ == kNoKind ? -1 : trace.schema.field_index(marker_, "text")),
      t0_(trace_start_ns(trace)),
      trace_end_(trace.events.empty() ? 0 : trace.events.back().ts) {
  read_markers();
}

}  // namespace symptom_detail

std::string_view hang_kind_name(HangKind k) {
  switch (k) {
    case HangKind::LongRunning: return "LongRunning";
    case HangKind::RepeatedYield: return "RepeatedYield";
    case HangKind::LongWait: return "LongWait";
  }
  return "?";
}

uint64_t trace_start_ns(const Trace& trace) {
  return trace.events.empty() ? 0 : trace.events.front().ts;
}

std::optional<Hang> find_hang(const Trace& trace, const Graph& graph, const ThreadEvents& events,
                              const SymptomRequest& request, std::string* why, bool* no_hang) {
  return symptom_detail::Finder(trace, graph, events).find(request, why, no_hang);
}

FoundHang find_hang_reusing(const Trace& trace, const Graph& graph, const ThreadEvents& events,
                            const SymptomRequest& request, const std::vector<ThreadRank>* before) {
  FoundHang found;
  symptom_detail::Finder finder(trace, graph, events);
  if (request.mode == SymptomRequest::Mode::Auto) finder.keep_ranks(before, &found.ranks);
  found.hang = finder.find(request, &found.why, &found.no_hang);
  found.reused = finder.reused();
  return found;
}

std::vector<HangCandidate> list_hangs(const Trace& trace, const Graph& graph,
                                      const ThreadEvents& events, const SymptomRequest& request,
                                      std::string* why) {
  std::string error;
  auto out = symptom_detail::Finder(trace, graph, events).candidates(request, &error);
  if (out.empty() && why) *why = std::move(error);
  return out;
}

}  // namespace cw::engine
