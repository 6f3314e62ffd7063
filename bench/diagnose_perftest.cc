// cw-bench-debug: times a whole non-interactive diagnosis (`engine::diagnose` with the
// AutoAnswerer) and single search steps on a built event graph, against DESIGN.md §10:
// a search step <= 50 ms, a whole diagnosis <= 2 s after the graph is built.
//
// The trace is read and the graph built once (timed and reported, not part of the
// targets); then, per repetition:
//   diagnose   engine::diagnose, --hang auto (or TID@SECONDS), AutoAnswerer;
//   steps      for a deterministic sample of segments (every k-th segment with an incoming
//              edge, plus the hang's): one beam search with max_depth = lookback (the
//              slice's lookahead from one option), incoming_by_source + ranking, and a
//              whole slice step as diagnose does it per question (incoming_by_source, a
//              lookahead beam search and a profile for each of up to 8 sources, sorted);
//   deep       one full-depth beam search (max_depth 64) back from the hang's segment.
#include <malloc.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench/measure.h"
#include "engine/diagnosis/beam_search.h"
#include "engine/graph/builder.h"
#include "engine/diagnosis/diagnose.h"
#include "engine/diagnosis/questions.h"
#include "engine/diagnosis/segment_profile.h"
#include "engine/diagnosis/symptom.h"
#include "rules/loader.h"
#include "trace/binary_format.h"

namespace {

namespace engine = cw::engine;

using cw::bench::Elapsed;
using cw::bench::max_rss_kib;
using cw::bench::median;
using cw::bench::reset_peak_rss;
using cw::bench::since;
using cw::bench::Stamp;
using cw::bench::status_kib;

// The q-quantile (0..1) by nearest rank; median() averages the middle two.
double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}
double maximum(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

// --hang: "auto" or TID@SECONDS (seconds since the trace's first event).
bool parse_hang(const std::string& s, engine::SymptomRequest* req, uint64_t* after_ns) {
  if (s == "auto") {
    req->mode = engine::SymptomRequest::Mode::Auto;
    return true;
  }
  const size_t at = s.find('@');
  if (at == std::string::npos || at == 0) return false;
  uint64_t tid = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + at, tid);
  if (ec != std::errc() || p != s.data() + at || tid == 0) return false;
  char* end = nullptr;
  const double secs = std::strtod(s.c_str() + at + 1, &end);
  if (end == s.c_str() + at + 1 || *end != '\0' || !(secs >= 0)) return false;
  req->mode = engine::SymptomRequest::Mode::ThreadAt;
  req->tid = static_cast<cw::Tid>(tid);
  *after_ns = static_cast<uint64_t>(std::llround(secs * 1e9));
  return true;
}

// Per-step timings of one kind of step over the sample, all repetitions pooled.
struct StepRuns {
  std::vector<double> ms;      // wall
  std::vector<double> cpu_ms;  // the thread's CPU time
  double worst_ms = -1;
  uint32_t worst_segment = engine::kNoIndex;
  uint64_t worst_work = 0;  // paths expanded (beam) or sources (incoming) of the worst step
  void add(double wall, double cpu, uint32_t segment, uint64_t work) {
    ms.push_back(wall);
    cpu_ms.push_back(cpu);
    if (wall > worst_ms) {
      worst_ms = wall;
      worst_segment = segment;
      worst_work = work;
    }
  }
};

double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

struct StepSet {
  StepRuns beam;      // one lookahead beam search
  StepRuns incoming;  // incoming_by_source + ranking
  StepRuns slice;     // a whole slice step
};

struct DiagnoseRun {
  Elapsed total, symptom;  // symptom: until the first "search" progress (index + find_hang)
  double peak_kib = 0;     // VmHWM during it (includes the trace and the graph)
  double grew_kib = 0;     // VmHWM − VmRSS before: what the diagnosis itself added
};

struct Result {
  // Setup, once.
  uint64_t events = 0, processes = 0, threads = 0, vertices = 0, edges = 0;
  Elapsed read, rules, build, index;
  double build_peak_kib = 0;
  // Diagnosis (the figures of the last repetition; they are deterministic).
  std::vector<DiagnoseRun> runs;
  engine::Hang hang;
  std::string hang_thread, hang_process;
  double hang_start_s = 0;  // since the trace's first event
  size_t root_causes = 0, queries = 0, path = 0;
  uint32_t search_steps = 0;
  bool baseline = false;
  std::vector<std::string> notes;
  // Steps.
  size_t sample = 0, with_incoming = 0;
  uint64_t sample_expanded = 0;  // paths created by one pass of the sample's beam steps
  uint32_t sample_capped = 0;
  StepSet sample_steps, hub_steps;
  size_t hubs = 0;
  uint32_t hub_degree_min = 0, hub_degree_max = 0;
  std::string hub_names;  // "thread tid, …"
  uint64_t profiled_events = 0;
  // Deep search.
  std::vector<double> deep_ms, deep_cpu_ms;
  uint32_t deep_steps = 0;
  uint64_t deep_expanded = 0;
  size_t deep_paths = 0;
  bool deep_capped = false;
};

constexpr double kStepMs = 50;
constexpr double kDiagnoseS = 2;

std::string verdict(double measured, double wanted) {
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2g", measured / wanted);
  if (measured <= wanted) return std::string("met (") + ratio + "× the limit)";
  return std::string("**missed** (") + ratio + "× the limit)";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Times a non-interactive diagnosis and single search steps on a trace's graph.",
               "cw-bench-debug"};
  std::string trace_path, hang_arg = "auto";
  std::vector<std::string> packs;
  bool no_stdlib = false, json = false, markdown = false;
  int repeat = 3;
  size_t samples = 200;
  size_t list_waits = 0;
  size_t hub_count = 3;
  app.add_option("TRACE", trace_path, "trace file (binary or text)")->required();
  app.add_option("--rules", packs, "rule pack file or folder (repeatable), after stdlib-rules");
  app.add_flag("--no-stdlib", no_stdlib, "do not load stdlib-rules");
  app.add_option("--repeat", repeat, "repetitions of the diagnosis and the step sample")
      ->check(CLI::Range(1, 100));
  app.add_option("--hang", hang_arg, "auto, or TID@SECONDS (seconds since the trace started)");
  app.add_option("--samples", samples, "segments in the step sample (plus the hang's)")
      ->check(CLI::Range(0, 100000));
  app.add_option("--hubs", hub_count,
                 "also time steps on the N segments with the most incoming edges, in the first "
                 "run only (0: none)")
      ->check(CLI::Range(0, 100));
  app.add_option("--list-waits", list_waits,
                 "print the N main threads (tid == pid) with the longest single block, as "
                 "TID@SECONDS for --hang, and exit")
      ->check(CLI::Range(1, 1000));
  app.add_flag("--json", json, "print the figures as JSON");
  app.add_flag("--markdown", markdown, "print Markdown tables (the default output)");
  CLI11_PARSE(app, argc, argv);

  engine::DiagnoseOptions dopt;
  uint64_t hang_after_ns = 0;
  if (!parse_hang(hang_arg, &dopt.symptom, &hang_after_ns)) {
    std::cerr << "cw-bench-debug: --hang: expected auto or TID@SECONDS, got '" << hang_arg << "'\n";
    return 1;
  }
  std::vector<std::string> pack_paths;
  if (!no_stdlib) pack_paths.push_back(CW_SOURCE_DIR "/stdlib-rules");
  pack_paths.insert(pack_paths.end(), packs.begin(), packs.end());

  Result r;
  try {
    cw::Trace trace;
    Stamp start;
    const cw::ReadReport report = cw::load_trace(trace_path, trace);
    r.read = since(start);
    if (!report.clean())
      std::fprintf(stderr, "cw-bench-debug: %s: %zu damaged ranges skipped\n", trace_path.c_str(),
                   report.skipped.size());
    start = Stamp{};
    cw::rules::LoadResult loaded = cw::rules::load_packs(pack_paths);
    r.rules = since(start);
    if (!loaded.ok()) {
      std::cerr << loaded.render();
      return 1;
    }
    reset_peak_rss();
    start = Stamp{};
    const engine::BuildResult built = engine::build_graph(trace, loaded.rules);
    r.build = since(start);
    r.build_peak_kib = static_cast<double>(status_kib("VmHWM"));
    const engine::Graph& g = built.graph;
    r.events = trace.events.size();
    r.processes = trace.processes.size();
    r.threads = trace.threads.size();
    r.vertices = g.segments.size();
    r.edges = g.edges.size();
    const uint64_t t0 = engine::trace_start_ns(trace);
    if (dopt.symptom.mode == engine::SymptomRequest::Mode::ThreadAt)
      dopt.symptom.at_ns = t0 + hang_after_ns;

    // The per-thread event index the slice step's profiles need (diagnose builds its own).
    start = Stamp{};
    const engine::ThreadEvents thread_events(trace);
    r.index = since(start);

    if (list_waits) {
      // Main threads by their longest single block over the whole trace.
      struct Wait {
        cw::Tid tid;
        engine::SegmentProfile p;
      };
      std::vector<Wait> waits;
      for (const auto& t : g.threads) {
        if (t.begin == t.end || trace.pid_of(t.tid) != t.tid) continue;
        const cw::ThreadInfo* info = trace.thread(t.tid);
        if (info && info->kernel) continue;
        waits.push_back(
            {t.tid, engine::profile_range(trace, thread_events, t.tid, g.segments[t.begin].start_ns,
                                          g.segments[t.end - 1].end_ns + 1)});
      }
      std::sort(waits.begin(), waits.end(), [](const Wait& a, const Wait& b) {
        return a.p.longest_block_ns > b.p.longest_block_ns;
      });
      std::printf(
          "| --hang | thread | process | longest block ms | in |\n| --- | --- | --- | ---: | --- "
          "|\n");
      for (size_t k = 0; k < waits.size() && k < list_waits; ++k) {
        const Wait& w = waits[k];
        const cw::ThreadInfo* ti = trace.thread(w.tid);
        const cw::ProcessInfo* pi = trace.process(trace.pid_of(w.tid));
        std::string call = "-";
        if (w.p.longest_block_call != engine::kNoIndex) {
          const cw::Event& e = trace.events[w.p.longest_block_call];
          int f = trace.schema.field_index(e.kind, "name");
          if (f >= 0)
            call = std::string(trace.strings.get(static_cast<cw::StrId>(trace.value(e, f))));
        }
        // The middle of the block: inside the stretch that holds it.
        const uint64_t mid = w.p.longest_block_start + w.p.longest_block_ns / 2;
        std::printf("| %u@%.3f | %s | %s | %.1f | %s |\n", static_cast<unsigned>(w.tid),
                    static_cast<double>(mid - t0) / 1e9,
                    ti ? std::string(trace.strings.get(ti->comm)).c_str() : "?",
                    pi ? std::string(trace.strings.get(pi->comm)).c_str() : "?",
                    static_cast<double>(w.p.longest_block_ns) / 1e6, call.c_str());
      }
      return 0;
    }

    // The step sample: every k-th segment with an incoming edge, plus the hang's.
    std::vector<uint32_t> with_in;
    for (uint32_t s = 0; s < g.segments.size(); ++s)
      if (in_degree(s, g.csr) > 0) with_in.push_back(s);
    r.with_incoming = with_in.size();
    std::vector<uint32_t> sample;
    const size_t k = std::max<size_t>(1, with_in.size() / std::max<size_t>(1, samples));
    for (size_t i = k / 2; i < with_in.size() && sample.size() < samples; i += k)
      sample.push_back(with_in[i]);

    // Beside the sample, the segments with the most incoming edges (hubs: a daemon's loop,
    // a timer-interrupt wake-up target): the worst case a slice can meet.
    std::vector<uint32_t> hubs = with_in;
    const size_t nhubs = std::min(hub_count, hubs.size());
    std::partial_sort(hubs.begin(), hubs.begin() + static_cast<long>(nhubs), hubs.end(),
                      [&](uint32_t a, uint32_t b) {
                        const auto da = in_degree(a, g.csr), db = in_degree(b, g.csr);
                        return da != db ? da > db : a < b;
                      });
    hubs.resize(nhubs);
    r.hubs = nhubs;
    for (uint32_t h : hubs) {
      const cw::ThreadInfo* ti = trace.thread(g.segments[h].tid);
      r.hub_names += (r.hub_names.empty() ? "" : ", ") +
                     (ti ? std::string(trace.strings.get(ti->comm)) : std::string("?")) + " " +
                     std::to_string(g.segments[h].tid);
    }
    if (nhubs) {
      r.hub_degree_max = static_cast<uint32_t>(in_degree(hubs.front(), g.csr));
      r.hub_degree_min = static_cast<uint32_t>(in_degree(hubs.back(), g.csr));
    }

    engine::BeamOptions lookahead;  // as diagnose's slice: width 8, lookback 3
    lookahead.width = dopt.beam_width;
    lookahead.lookback = dopt.lookback;
    lookahead.max_depth = std::max<uint32_t>(1, dopt.lookback);
    engine::BeamOptions deep = lookahead;
    deep.max_depth = dopt.max_depth;
    std::vector<bool> on_path(g.segments.size(), false);

    // `alone`: also time incoming_by_source + ranking on its own (the hubs skip it: there
    // it is nearly all of the slice step, and each takes seconds).
    auto measure = [&](uint32_t s, StepSet& set, uint64_t* total_expanded, uint32_t* capped,
                       bool alone) {
      // One lookahead: beam search back from s, depth = lookback, s on the path.
      on_path[s] = true;
      Stamp t;
      double c = thread_cpu_ms();
      engine::BeamResult br = engine::beam_search(g, s, lookahead, on_path);
      set.beam.add(since(t).wall * 1e3, thread_cpu_ms() - c, s, br.expanded);
      if (total_expanded) *total_expanded += br.expanded;
      if (capped) *capped += br.capped;

      // incoming_by_source + ranking by edge cost (no lookahead).
      if (alone) {
        t = Stamp{};
        c = thread_cpu_ms();
        std::vector<uint32_t> in = engine::incoming_by_source(g, s, lookahead.costs, on_path);
        std::vector<std::pair<double, uint32_t>> ranked;
        for (uint32_t ei : in)
          ranked.emplace_back(engine::edge_cost(g.edges[ei], lookahead.costs), ei);
        std::stable_sort(ranked.begin(), ranked.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        set.incoming.add(since(t).wall * 1e3, thread_cpu_ms() - c, s, in.size());
      }

      // A whole slice step, as diagnose's slice() per question: the sources, then for
      // each of up to 8 a lookahead beam search and its profile (the option's evidence),
      // ranked by cost + 0.1 × mean lookahead edge cost.
      t = Stamp{};
      c = thread_cpu_ms();
      std::vector<uint32_t> src = engine::incoming_by_source(g, s, lookahead.costs, on_path);
      std::vector<std::pair<double, uint32_t>> options;
      uint64_t expanded = 0;
      for (uint32_t ei : src) {
        const uint32_t from = g.edges[ei].from;
        engine::BeamResult la = engine::beam_search(g, from, lookahead, on_path);
        expanded += la.expanded;
        double mean = 0;
        if (!la.paths.empty() && !la.paths[0].edges.empty())
          mean = la.paths[0].cost / static_cast<double>(la.paths[0].edges.size());
        const engine::SegmentProfile p = engine::profile_segment(trace, thread_events, g, from);
        r.profiled_events += p.events;  // kept, so the profile is not optimised away
        options.emplace_back(engine::edge_cost(g.edges[ei], lookahead.costs) + 0.1 * mean, ei);
        if (options.size() == 8) break;
      }
      std::stable_sort(options.begin(), options.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      set.slice.add(since(t).wall * 1e3, thread_cpu_ms() - c, s, expanded);
      on_path[s] = false;
    };

    for (int run = 0; run < repeat; ++run) {
      malloc_trim(0);
      // ---- the whole diagnosis ----
      DiagnoseRun dr;
      const double rss_before = static_cast<double>(status_kib("VmRSS"));
      reset_peak_rss();
      engine::AutoAnswerer answerer;
      engine::DiagnoseOptions o = dopt;
      o.answerer = &answerer;
      bool first_search = true;
      const Stamp dstart;
      o.progress = [&](std::string_view phase, uint64_t, uint64_t) {
        if (first_search && phase == "search") {
          dr.symptom = since(dstart);
          first_search = false;
        }
      };
      engine::Diagnosis d = engine::diagnose(trace, built, loaded.rules, o);
      dr.total = since(dstart);
      dr.peak_kib = static_cast<double>(status_kib("VmHWM"));
      dr.grew_kib = std::max(0.0, dr.peak_kib - rss_before);
      r.runs.push_back(dr);
      r.hang = d.hang;
      r.hang_start_s = static_cast<double>(d.hang.start_ns - std::min(d.hang.start_ns, t0)) / 1e9;
      const cw::ThreadInfo* ti = trace.thread(d.hang.tid);
      const cw::ProcessInfo* pi = trace.process(d.hang.pid);
      r.hang_thread = ti ? std::string(trace.strings.get(ti->comm)) : "?";
      r.hang_process = pi ? std::string(trace.strings.get(pi->comm)) : "?";
      r.root_causes = d.root_causes.size();
      r.queries = d.queries.size();
      r.path = d.path.size();
      r.search_steps = d.search_steps;
      r.baseline = d.baseline != engine::kNoIndex;
      r.notes = d.notes;

      // ---- single steps ----
      std::vector<uint32_t> steps = sample;
      if (d.hang.segment != engine::kNoIndex) steps.push_back(d.hang.segment);
      r.sample = steps.size();
      r.sample_expanded = 0;
      r.sample_capped = 0;
      for (uint32_t s : steps)
        measure(s, r.sample_steps, &r.sample_expanded, &r.sample_capped, true);
      if (run == 0)
        for (uint32_t s : hubs) measure(s, r.hub_steps, nullptr, nullptr, false);

      // ---- one deep search from the hang ----
      if (d.hang.segment != engine::kNoIndex) {
        Stamp t;
        double c = thread_cpu_ms();
        engine::BeamResult br = engine::beam_search(g, d.hang.segment, deep);
        r.deep_ms.push_back(since(t).wall * 1e3);
        r.deep_cpu_ms.push_back(thread_cpu_ms() - c);
        r.deep_steps = br.steps;
        r.deep_expanded = br.expanded;
        r.deep_paths = br.paths.size();
        r.deep_capped = br.capped;
      }
    }
  } catch (const engine::DiagnoseError& e) {
    std::cerr << "cw-bench-debug: no hang: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "cw-bench-debug: " << e.what() << "\n";
    return 1;
  }

  double peak_kib = static_cast<double>(max_rss_kib());
  peak_kib = std::max(peak_kib, r.build_peak_kib);
  for (const auto& run : r.runs) peak_kib = std::max(peak_kib, run.peak_kib);

  std::vector<double> dwall, dcpu, dsym, dsymcpu, dpeak, dgrew;
  for (const auto& run : r.runs) {
    dwall.push_back(run.total.wall);
    dcpu.push_back(run.total.cpu);
    dsym.push_back(run.symptom.wall);
    dsymcpu.push_back(run.symptom.cpu);
    dpeak.push_back(run.peak_kib / 1024);
    dgrew.push_back(run.grew_kib / 1024);
  }
  const std::string kind(engine::hang_kind_name(r.hang.kind));

  if (json) {
    nlohmann::ordered_json out;
    auto steps_json = [](const StepRuns& s) {
      return nlohmann::ordered_json{{"median_ms", median(s.ms)},
                                    {"p90_ms", quantile(s.ms, 0.9)},
                                    {"max_ms", maximum(s.ms)},
                                    {"median_cpu_ms", median(s.cpu_ms)},
                                    {"p90_cpu_ms", quantile(s.cpu_ms, 0.9)},
                                    {"max_cpu_ms", maximum(s.cpu_ms)},
                                    {"worst_segment", s.worst_segment},
                                    {"worst_work", s.worst_work}};
    };
    out["trace"] = trace_path;
    out["repeat"] = repeat;
    out["hang_arg"] = hang_arg;
    out["events"] = r.events;
    out["processes"] = r.processes;
    out["threads"] = r.threads;
    out["vertices"] = r.vertices;
    out["edges"] = r.edges;
    out["setup"] = {{"read_s", r.read.wall},   {"rules_s", r.rules.wall},
                    {"build_s", r.build.wall}, {"build_cpu_s", r.build.cpu},
                    {"index_s", r.index.wall}, {"build_peak_rss_mib", r.build_peak_kib / 1024}};
    out["hang"] = {{"kind", kind},
                   {"tid", r.hang.tid},
                   {"pid", r.hang.pid},
                   {"thread", r.hang_thread},
                   {"process", r.hang_process},
                   {"start_s", r.hang_start_s},
                   {"length_ms", static_cast<double>(r.hang.end_ns - r.hang.start_ns) / 1e6},
                   {"segment", r.hang.segment},
                   {"chosen_by", r.hang.chosen_by}};
    out["diagnosis"] = {{"median_s", median(dwall)},
                        {"median_cpu_s", median(dcpu)},
                        {"max_s", maximum(dwall)},
                        {"symptom_median_s", median(dsym)},
                        {"symptom_median_cpu_s", median(dsymcpu)},
                        {"peak_rss_mib", median(dpeak)},
                        {"added_rss_mib", median(dgrew)},
                        {"root_causes", r.root_causes},
                        {"queries", r.queries},
                        {"search_steps", r.search_steps},
                        {"path", r.path},
                        {"baseline", r.baseline},
                        {"notes", r.notes}};
    out["steps"] = {{"sample", r.sample},
                    {"segments_with_incoming", r.with_incoming},
                    {"beam", steps_json(r.sample_steps.beam)},
                    {"incoming", steps_json(r.sample_steps.incoming)},
                    {"slice", steps_json(r.sample_steps.slice)},
                    {"beam_capped", r.sample_capped},
                    {"hubs",
                     {{"segments", r.hubs},
                      {"in_degree_min", r.hub_degree_min},
                      {"in_degree_max", r.hub_degree_max},
                      {"threads", r.hub_names},
                      {"beam", steps_json(r.hub_steps.beam)},
                      {"slice", steps_json(r.hub_steps.slice)}}}};
    out["deep"] = {{"median_ms", median(r.deep_ms)}, {"median_cpu_ms", median(r.deep_cpu_ms)},
                   {"steps", r.deep_steps},          {"expanded", r.deep_expanded},
                   {"paths", r.deep_paths},          {"capped", r.deep_capped}};
    out["max_rss_mib"] = peak_kib / 1024;
    out["targets"] = {{"step_ms", kStepMs},
                      {"step_met", maximum(r.sample_steps.slice.ms) <= kStepMs},
                      {"diagnosis_s", kDiagnoseS},
                      {"diagnosis_met", median(dwall) <= kDiagnoseS}};
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  (void)markdown;  // Markdown is the only table format

  std::printf(
      "%llu events, %llu processes, %llu threads -> %llu vertices, %llu edges. Set-up (once, "
      "not part of the targets): read %.3f s, rules %.3f s, build %.3f s (%.3f CPU s, peak RSS "
      "%.0f MiB), per-thread event index %.3f s.\n\n",
      static_cast<unsigned long long>(r.events), static_cast<unsigned long long>(r.processes),
      static_cast<unsigned long long>(r.threads), static_cast<unsigned long long>(r.vertices),
      static_cast<unsigned long long>(r.edges), r.read.wall, r.rules.wall, r.build.wall,
      r.build.cpu, r.build_peak_kib / 1024, r.index.wall);
  std::printf(
      "Hang (`--hang %s`): %s, %s %u (%s %u), %.3f s + %.1f ms, segment %u; chosen by: %s.\n"
      "Diagnosis: %zu root causes, %zu queries (auto-answered), %u search steps, path of %zu "
      "segments, baseline %s.\n\n",
      hang_arg.c_str(), kind.c_str(), r.hang_thread.c_str(), static_cast<unsigned>(r.hang.tid),
      r.hang_process.c_str(), static_cast<unsigned>(r.hang.pid), r.hang_start_s,
      static_cast<double>(r.hang.end_ns - r.hang.start_ns) / 1e6, r.hang.segment,
      r.hang.chosen_by.c_str(), r.root_causes, r.queries, r.search_steps, r.path,
      r.baseline ? "found" : "none");
  for (const auto& n : r.notes) std::printf("Note: %s\n", n.c_str());
  if (!r.notes.empty()) std::printf("\n");

  std::printf("| measure | median | p90 | max | median CPU | unit |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | --- |\n");
  std::printf("| **diagnosis** (whole, --auto) | %.3f | | %.3f | %.3f | s |\n", median(dwall),
              maximum(dwall), median(dcpu));
  std::printf("| diagnosis: index + find hang | %.3f | | %.3f | %.3f | s |\n", median(dsym),
              maximum(dsym), median(dsymcpu));
  std::printf("| diagnosis: search and report | %.3f | | | %.3f | s |\n",
              median(dwall) - median(dsym), median(dcpu) - median(dsymcpu));
  auto step_row = [](const char* name, const StepRuns& s) {
    std::printf("| %s | %.3f | %.3f | %.3f | %.3f | ms |\n", name, median(s.ms),
                quantile(s.ms, 0.9), maximum(s.ms), median(s.cpu_ms));
  };
  step_row("**slice step** (sources + 8 lookaheads + profiles)", r.sample_steps.slice);
  step_row("beam search, depth 3 (one lookahead)", r.sample_steps.beam);
  step_row("incoming_by_source + ranking", r.sample_steps.incoming);
  if (r.hubs) {
    step_row("hubs: slice step (first run)", r.hub_steps.slice);
    step_row("hubs: beam search, depth 3", r.hub_steps.beam);
  }
  std::printf("| deep beam search from the hang (depth %u) | %.3f | | %.3f | %.3f | ms |\n",
              dopt.max_depth, median(r.deep_ms), maximum(r.deep_ms), median(r.deep_cpu_ms));
  std::string hubs_text;
  if (r.hubs)
    hubs_text = "; hubs: the " + std::to_string(r.hubs) +
                " segments with the most incoming edges (" + std::to_string(r.hub_degree_min) +
                " to " + std::to_string(r.hub_degree_max) + ": " + r.hub_names + ")";
  std::printf(
      "\n%d runs; steps over %zu segments per run (every %zu-th of %zu with an incoming edge, "
      "plus the hang's), pooled%s. Slowest slice step: segment %u (%llu paths expanded). Deep "
      "search: %u steps, %llu paths expanded, %zu paths%s. Diagnosis peak RSS %.0f MiB (%.0f MiB "
      "over the trace and graph); whole run %.0f MiB.\n\n",
      repeat, r.sample, std::max<size_t>(1, r.with_incoming / std::max<size_t>(1, samples)),
      r.with_incoming, hubs_text.c_str(), r.sample_steps.slice.worst_segment,
      static_cast<unsigned long long>(r.sample_steps.slice.worst_work), r.deep_steps,
      static_cast<unsigned long long>(r.deep_expanded), r.deep_paths,
      r.deep_capped ? ", capped" : "", median(dpeak), median(dgrew), peak_kib / 1024);

  std::printf("| target | wanted | measured | |\n| --- | ---: | ---: | --- |\n");
  std::printf("| search step (slice step, max) | <= %.0f ms | %.3f ms | %s |\n", kStepMs,
              maximum(r.sample_steps.slice.ms),
              verdict(maximum(r.sample_steps.slice.ms), kStepMs).c_str());
  std::printf("| search step (slice step, p90) | <= %.0f ms | %.3f ms | %s |\n", kStepMs,
              quantile(r.sample_steps.slice.ms, 0.9),
              verdict(quantile(r.sample_steps.slice.ms, 0.9), kStepMs).c_str());
  std::printf("| whole diagnosis (median) | <= %.0f s | %.3f s | %s |\n", kDiagnoseS, median(dwall),
              verdict(median(dwall), kDiagnoseS).c_str());
  return 0;
}
