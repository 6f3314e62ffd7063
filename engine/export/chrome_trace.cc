#include "engine/export/chrome_trace.h"

#include <fmt/format.h>

#include <map>

namespace cw::engine {
namespace {

using nlohmann::json;

double us(uint64_t ns) {
  return static_cast<double>(ns) / 1000.0;
}

// Categories a viewer filters by: what the diagnosis made of the slice.
std::string slice_category(const TimelineSlice& s) {
  std::string cat = "segment";
  if (s.on_path) cat += ",causal_path";
  if (s.root_cause) cat += ",root_cause";
  if (s.hang) cat += ",hang";
  return cat;
}

// A flow's category holds its strength, so that strong and weak arrows can be told
// apart and filtered; its name says kind and strength.
std::string flow_category(const TimelineFlow& f) {
  std::string cat = fmt::format("edge.{}", strength_name(f.strength));
  if (f.on_path) cat += ",causal_path";
  return cat;
}

}  // namespace

// A time as the report gives it: seconds since the trace's first event.
double seconds_since(const Timeline& tl, uint64_t ns) {
  return static_cast<double>(ns - std::min(ns, tl.trace_start_ns)) / 1e9;
}

json chrome_trace_json(const Timeline& tl) {
  json events = json::array();
  for (const TimelineProcess& p : tl.processes)
    events.push_back({{"ph", "M"},
                      {"name", "process_name"},
                      {"pid", p.pid},
                      {"tid", p.pid},
                      {"args", {{"name", p.name}}}});
  for (const TimelineTrack& t : tl.tracks)
    events.push_back({{"ph", "M"},
                      {"name", "thread_name"},
                      {"pid", t.pid},
                      {"tid", t.tid},
                      {"args", {{"name", t.name}}}});
  for (const TimelineSlice& s : tl.slices) {
    const TimelineTrack& t = tl.tracks[s.track];
    events.push_back({{"ph", "X"},
                      {"name", s.name},
                      {"cat", slice_category(s)},
                      {"pid", t.pid},
                      {"tid", t.tid},
                      {"ts", us(s.start_ns)},
                      {"dur", us(s.end_ns) - us(s.start_ns)},
                      {"args",
                       {{"segment", s.segment},
                        {"at", fmt::format("{:.6f} s", seconds_since(tl, s.start_ns))},
                        {"detail", s.detail},
                        {"causal_path", s.on_path},
                        {"root_cause", s.root_cause},
                        {"hang", s.hang}}}});
  }
  for (size_t i = 0; i < tl.flows.size(); ++i) {
    const TimelineFlow& f = tl.flows[i];
    const TimelineTrack& from = tl.tracks[tl.slices[f.from_slice].track];
    const TimelineTrack& to = tl.tracks[tl.slices[f.to_slice].track];
    const std::string name = fmt::format("{} ({})", f.kind, strength_name(f.strength));
    const std::string cat = flow_category(f);
    const json args{{"edge", f.edge}, {"kind", f.kind}, {"strength", strength_name(f.strength)}};
    // The two ends differ only in phase, thread and time; "f" binds to its enclosing slice.
    json start{{"ph", "s"},       {"id", i + 1},     {"name", name},        {"cat", cat},
               {"pid", from.pid}, {"tid", from.tid}, {"ts", us(f.from_ns)}, {"args", args}};
    json finish = start;
    finish["ph"] = "f";
    finish["bp"] = "e";
    finish["pid"] = to.pid;
    finish["tid"] = to.tid;
    finish["ts"] = us(f.to_ns);
    events.push_back(std::move(start));
    events.push_back(std::move(finish));
  }
  for (const TimelineInstant& m : tl.instants) {
    const TimelineTrack& t = tl.tracks[m.track];
    events.push_back({{"ph", "i"},
                      {"s", "t"},
                      {"name", m.name},
                      {"cat", "marker"},
                      {"pid", t.pid},
                      {"tid", t.tid},
                      {"ts", us(m.ts)}});
  }
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}};
}

std::vector<std::string> chrome_flow_problems(const json& doc) {
  std::vector<std::string> out;
  if (!doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array()) {
    out.push_back("no traceEvents array");
    return out;
  }
  const json& events = doc["traceEvents"];
  auto where = [](const json& e) {
    return std::make_pair(e.value("pid", json()).dump(), e.value("tid", json()).dump());
  };
  // The complete slices of each thread, [ts, ts + dur].
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<double, double>>> slices;
  for (const json& e : events)
    if (e.value("ph", "") == "X" && e.contains("ts") && e["ts"].is_number()) {
      const double ts = e["ts"].get<double>();
      const double dur = e.contains("dur") && e["dur"].is_number() ? e["dur"].get<double>() : 0;
      slices[where(e)].emplace_back(ts, ts + dur);
    }
  // Times are µs in doubles: a bound may be off by its rounding, far below 1 ns.
  constexpr double kSlack = 0.0005;
  struct Ends {
    std::vector<size_t> starts, finishes;
  };
  std::map<std::string, Ends> flows;
  for (size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    const std::string ph = e.value("ph", "");
    if (ph != "s" && ph != "f") continue;
    if (!e.contains("id")) {
      out.push_back(fmt::format("event {}: \"{}\" without an id", i, ph));
      continue;
    }
    (ph == "s" ? flows[e["id"].dump()].starts : flows[e["id"].dump()].finishes).push_back(i);
    if (ph == "f" && e.value("bp", "") != "e")
      out.push_back(fmt::format("event {}: \"f\" without \"bp\": \"e\"", i));
    if (!e.contains("ts") || !e["ts"].is_number()) {
      out.push_back(fmt::format("event {}: \"{}\" without a numeric ts", i, ph));
      continue;
    }
    const double ts = e["ts"].get<double>();
    bool enclosed = false;
    if (auto it = slices.find(where(e)); it != slices.end())
      for (const auto& [b, end] : it->second)
        if (b - kSlack <= ts && ts <= end + kSlack) {
          enclosed = true;
          break;
        }
    if (!enclosed)
      out.push_back(fmt::format("event {}: \"{}\" at ts {} is in no \"X\" slice of pid {} tid {}",
                                i, ph, ts, where(e).first, where(e).second));
  }
  for (const auto& [id, ends] : flows) {
    if (ends.starts.size() != 1 || ends.finishes.size() != 1) {
      out.push_back(fmt::format("flow id {}: {} \"s\" and {} \"f\" events, expected one each", id,
                                ends.starts.size(), ends.finishes.size()));
      continue;
    }
    const json& s = events[ends.starts[0]];
    const json& f = events[ends.finishes[0]];
    if (s.value("cat", json()) != f.value("cat", json()))
      out.push_back(fmt::format("flow id {}: \"s\" (event {}) and \"f\" (event {}) differ in cat",
                                id, ends.starts[0], ends.finishes[0]));
  }
  return out;
}

}  // namespace cw::engine
