#include "engine/session/trace_session.h"

#include <dirent.h>
#include <doctest/doctest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "base/temp_dir.h"
#include "engine/session/answers.h"
#include "engine/session/cache_session.h"
#include "engine/session/session_error.h"
#include "engine/session/trace_load.h"

namespace cw::session {
namespace {

// Keeps what the pipeline says, and how often long work began and ended.
struct KeptReporter : Reporter {
  std::vector<std::string> messages;
  int begun = 0, ended = 0;
  void message(const std::string& line) override { messages.push_back(line); }
  ProgressFn progress(const std::string&) override {
    ++begun;
    return {};
  }
  void progress_done() override { ++ended; }
  bool said(const std::string& part) const {
    for (const auto& m : messages)
      if (m.find(part) != std::string::npos) return true;
    return false;
  }
};

// The standard packs of the source tree, as the installed binary finds its own.
struct StandardPacks {
  StandardPacks() { setenv("CAUSEWAY_STDLIB", CW_SOURCE_DIR "/stdlib-rules", 1); }
};

SessionConfig config_of(const std::string& trace) {
  SessionConfig c;
  c.trace_path = trace;
  c.cache.off = true;
  return c;
}

const std::string kServer = CW_SOURCE_DIR "/examples/slow-server.trace";

// This process's children that ended and were not waited for.
int zombie_children() {
  int found = 0;
  DIR* proc = opendir("/proc");
  REQUIRE(proc != nullptr);
  while (const dirent* d = readdir(proc)) {
    std::ifstream stat(std::string("/proc/") + d->d_name + "/stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // "PID (COMM) STATE PPID ...": the name may hold anything, so from its last ')'.
    const size_t close = line.rfind(')');
    if (close == std::string::npos || close + 4 > line.size()) continue;
    const char state = line[close + 2];
    const long ppid = std::strtol(line.c_str() + close + 4, nullptr, 10);
    found += state == 'Z' && ppid == getpid();
  }
  closedir(proc);
  return found;
}

}  // namespace

TEST_CASE("saves in the background run in copies of the process, waited for once they end") {
  // One copy per save (a --watch session makes one per edit): each is waited for as it
  // ends, never left behind as a zombie for the session's life.
  TempDir dir;
  CacheSession cache;
  cache.wait_for_saves = true;  // wait() then waits for the saves to end
  for (int i = 0; i < 3; ++i)
    cache.in_background([&dir, i] {
      std::ofstream(dir.path("saved-" + std::to_string(i))) << i;
      return std::string();
    });
  cache.wait();
  for (int i = 0; i < 3; ++i)
    CHECK(std::filesystem::exists(dir.path("saved-" + std::to_string(i))));
  // (Their pipes closed as they exited: the waiting threads reap them just after.)
  int zombies = zombie_children();
  for (int tries = 0; zombies > 0 && tries < 200; ++tries) {
    usleep(10'000);
    zombies = zombie_children();
  }
  CHECK(zombies == 0);
}

TEST_CASE("queued saves wait for the next save_queued, and run first in its one copy") {
  TempDir dir;
  CacheSession cache;
  cache.wait_for_saves = true;
  // Each save appends its name to one file: their order is the copy's.
  auto save = [&dir](std::string name) {
    return [&dir, name] {
      std::ofstream(dir.path("order"), std::ios::app) << name << ' ';
      return std::string();
    };
  };
  cache.queue(save("events"));
  cache.queue(save("index"));
  cache.in_background(save("other"));  // an unrelated save runs the queued ones not
  cache.wait();
  auto order = [&dir] {
    std::ifstream in(dir.path("order"));
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  CHECK(order() == "other ");
  cache.save_queued(save("graph"));
  cache.wait();
  CHECK(order() == "other events index graph ");
  // Run once: an empty queue and no save make no copy.
  cache.save_queued();
  cache.wait();
  CHECK(order() == "other events index graph ");
}

TEST_CASE("a session reads, builds and diagnoses once each, and says nothing it need not") {
  StandardPacks packs;
  KeptReporter reporter;
  TraceSession s(config_of(kServer), reporter);
  s.load_packs();
  const Trace& trace = s.trace();
  CHECK(&s.trace() == &trace);
  const engine::BuildResult& built = s.graph();
  CHECK(&s.graph() == &built);
  CHECK(built.graph.segments.size() > 0);
  engine::AutoAnswerer automatic;
  engine::DiagnoseOptions options;
  options.answerer = &automatic;
  options.symptom = symptom_request(trace, *rules::parse_hang_spec("auto"), 0.5);
  const DiagnosisRun run = s.diagnose(options);
  REQUIRE(run.diagnosis);
  CHECK_FALSE(run.no_hang);
  CHECK(run.diagnosis->hang.tid == 811);
  CHECK(reporter.begun == reporter.ended);  // every progress display went away
}

TEST_CASE("a trace that is no trace fails as bad input, saying which file") {
  TempDir dir;
  dir.write("notes.txt", "hello\n");
  KeptReporter reporter;
  Trace trace;
  try {
    read_trace(dir.file("notes.txt"), trace, reporter);
    FAIL("read a trace from a text file");
  } catch (const SessionError& e) {
    CHECK(e.kind() == SessionError::Kind::BadInput);
    CHECK(std::string(e.what()).rfind("causeway: ", 0) == 0);
    // Text may be perf script output with a preamble: the hint says how to read it so.
    CHECK(std::string(e.what()).find("--trace-format perf-script") != std::string::npos);
  }
  CHECK(reporter.begun == reporter.ended);
}

TEST_CASE("a pack with an error: said through the reporter with its place, then thrown empty") {
  StandardPacks packs;
  KeptReporter reporter;
  SessionConfig c = config_of(kServer);
  c.packs = {CW_SOURCE_DIR "/tests/cli/data/syntax-error.cw"};
  TraceSession s(c, reporter);
  try {
    s.load_packs();
    FAIL("loaded a pack with a syntax error");
  } catch (const SessionError& e) {
    CHECK(e.kind() == SessionError::Kind::BadInput);
    CHECK(std::string(e.what()).empty());
  }
  CHECK(reporter.said("syntax-error.cw:"));
}

TEST_CASE("no standard packs is the environment's failure") {
  setenv("CAUSEWAY_STDLIB", "/nonexistent/causeway-rules", 1);
  KeptReporter reporter;
  TraceSession s(config_of(kServer), reporter);
  try {
    s.load_packs();
    FAIL("loaded packs from a folder that does not exist");
  } catch (const SessionError& e) {
    CHECK(e.kind() == SessionError::Kind::Environment);
    CHECK(std::string(e.what()).find("/nonexistent/causeway-rules") != std::string::npos);
  }
}

TEST_CASE("a symptom below the threshold is no hang; a thread not in the trace is an error") {
  StandardPacks packs;
  KeptReporter reporter;
  TraceSession s(config_of(CW_SOURCE_DIR "/tests/cli/data/short-sleep.trace"), reporter);
  s.load_packs();
  engine::AutoAnswerer automatic;
  engine::DiagnoseOptions options;
  options.answerer = &automatic;
  options.symptom = symptom_request(s.trace(), *rules::parse_hang_spec("auto"), 0.5);
  const DiagnosisRun quiet = s.diagnose(options);
  CHECK_FALSE(quiet.diagnosis);
  REQUIRE(quiet.no_hang);

  options.symptom = symptom_request(s.trace(), *rules::parse_hang_spec("999@0.1"), 0.5);
  CHECK_THROWS_AS(s.diagnose(options), SessionError);
  // For a command with a use without a diagnosis (an export), it is no hang too.
  CHECK(s.diagnose(options, /*missing_is_no_hang=*/true).no_hang);
}

TEST_CASE("the second session of a trace loads the graph the first saved in the cache") {
  StandardPacks packs;
  TempDir dir;
  const std::string trace = dir.file("server.trace");
  std::filesystem::copy_file(kServer, trace);
  SessionConfig c;
  c.trace_path = trace;
  // The saves are done when the session ends. A copy of the process saves, and says so
  // on its own: its messages do not come back here.
  c.cache.wait_for_saves = true;
  {
    KeptReporter first;
    TraceSession s(c, first);
    s.load_packs();
    s.graph();
    CHECK_FALSE(first.said("graph loaded from"));
  }
  KeptReporter second;
  TraceSession s(c, second);
  s.load_packs();
  s.graph();
  CHECK(second.said("graph loaded from"));
}

TEST_CASE("a run whose trace cannot be read leaves no cache folder behind") {
  StandardPacks packs;
  TempDir dir;
  dir.write("notes.txt", "hello\n");
  SessionConfig c;
  c.trace_path = dir.file("notes.txt");
  KeptReporter reporter;
  TraceSession s(c, reporter);
  // Packs that apply themselves are chosen by the trace, so loading them may read it.
  CHECK_THROWS_AS((s.load_packs(), s.trace()), SessionError);
  CHECK_FALSE(std::filesystem::exists(dir.file("notes.txt.cwcache")));
}

TEST_CASE("packs given anew drop the graph built with the old ones") {
  StandardPacks packs;
  KeptReporter reporter;
  TraceSession s(config_of(kServer), reporter);
  s.load_packs();
  const size_t with_stdlib = s.graph().graph.edges.size();
  s.use_packs(rules::load_packs({}, {}));
  CHECK(s.graph().graph.edges.size() < with_stdlib);
}

TEST_CASE("--hang and --answers: wrong ones are bad input saying why") {
  CHECK_THROWS_WITH_AS(read_hang_and_answers("811", ""), doctest::Contains("811@SECONDS"),
                       SessionError);
  CHECK_THROWS_WITH_AS(read_hang_and_answers("auto", "/nonexistent/answers"),
                       doctest::Contains("/nonexistent/answers: cannot read"), SessionError);
  const HangAndAnswers given = read_hang_and_answers("client", "");
  CHECK(given.hang.thread_name == "client");
  CHECK(given.answer_lines.empty());
}

}  // namespace cw::session
