#include "engine/cache/cache.h"

#include <doctest/doctest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/diagnosis/diagnose.h"
#include "engine/graph/test_support.h"
#include "trace/binary_format.h"

namespace fs = std::filesystem;
using namespace cw;
using namespace cw::engine;

namespace {

// A graph with cuts, a strong link edge and split neighbour edges.
testing::Built sample() {
  return testing::build(
      "link wakeup { from wakeup to switch_in join from.target == to.tid pick next }\n"
      "edge w { link wakeup strength strong }\n"
      "split cut { at syscall_enter where name == \"read\" cut before neighbour weak }\n",
      "process 100 comm=app\n"
      "thread 101 pid=100 comm=a\n"
      "thread 102 pid=100 comm=b\n"
      "1000 101 syscall_enter name=read\n"
      "2000 101 wakeup target=102\n"
      "3000 102 switch_in\n"
      "4000 101 syscall_enter name=read\n"
      "5000 102 syscall_enter name=read\n");
}

struct TempDir {
  std::string path;
  cache::Folder f;  // the folder, open
  TempDir() {
    char tmpl[] = "/tmp/cw-cache-test-XXXXXX";
    path = mkdtemp(tmpl);
    std::string why;
    auto opened = cache::Folder::open(path, &why);
    REQUIRE_MESSAGE(opened, why);
    f = *opened;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

const cache::Key kKey{1, 2, 3, 4};

void check_equal(const BuildResult& a, const BuildResult& b) {
  REQUIRE(a.graph.segments.size() == b.graph.segments.size());
  for (size_t i = 0; i < a.graph.segments.size(); ++i) {
    const Segment &x = a.graph.segments[i], &y = b.graph.segments[i];
    CHECK(x.tid == y.tid);
    CHECK(x.pid == y.pid);
    CHECK(x.first == y.first);
    CHECK(x.last == y.last);
    CHECK(x.start_ns == y.start_ns);
    CHECK(x.end_ns == y.end_ns);
    CHECK(x.cut_rule == y.cut_rule);
  }
  REQUIRE(a.graph.edges.size() == b.graph.edges.size());
  for (size_t i = 0; i < a.graph.edges.size(); ++i) {
    const Edge &x = a.graph.edges[i], &y = b.graph.edges[i];
    CHECK(x.from == y.from);
    CHECK(x.to == y.to);
    CHECK(x.from_event == y.from_event);
    CHECK(x.to_event == y.to_event);
    CHECK(x.rule == y.rule);
    CHECK(x.boost_rule == y.boost_rule);
    CHECK(x.link == y.link);
    CHECK(x.kind == y.kind);
    CHECK(x.strength == y.strength);
    CHECK(x.cost == y.cost);
  }
  CHECK(a.graph.kinds == b.graph.kinds);
  const RuleNames &n = a.graph.rule_names, &m = b.graph.rule_names;
  CHECK(n.splits == m.splits);
  CHECK(n.batches == m.batches);
  CHECK(n.edges == m.edges);
  CHECK(n.flags == m.flags);
  CHECK(n.links == m.links);
  CHECK(n.split_cuts_after == m.split_cuts_after);
  CHECK(n.split_loops == m.split_loops);
  CHECK(n.edge_strengths == m.edge_strengths);
  CHECK(n.edge_ends_polling == m.edge_ends_polling);
  REQUIRE(a.graph.threads.size() == b.graph.threads.size());
  for (size_t i = 0; i < a.graph.threads.size(); ++i) {
    CHECK(a.graph.threads[i].tid == b.graph.threads[i].tid);
    CHECK(a.graph.threads[i].begin == b.graph.threads[i].begin);
    CHECK(a.graph.threads[i].end == b.graph.threads[i].end);
  }
  CHECK(std::memcmp(&a.stats, &b.stats, sizeof a.stats) == 0);
  CHECK(a.counts.splits == b.counts.splits);
  CHECK(a.counts.batches == b.counts.batches);
  CHECK(a.counts.edges == b.counts.edges);
  CHECK(a.counts.pruned == b.counts.pruned);
  CHECK(a.counts.boosted == b.counts.boosted);
  CHECK(a.counts.flags == b.counts.flags);
  // The csr answers the same adjacency.
  CHECK(num_vertices(a.graph.csr) == num_vertices(b.graph.csr));
  CHECK(num_edges(a.graph.csr) == num_edges(b.graph.csr));
  CHECK(a.graph.csr.m_forward.m_rowstart == b.graph.csr.m_forward.m_rowstart);
  CHECK(a.graph.csr.m_forward.m_column == b.graph.csr.m_forward.m_column);
  CHECK(a.graph.csr.m_backward.m_column == b.graph.csr.m_backward.m_column);
}

}  // namespace

TEST_CASE("a graph entry decodes to the graph it was made from") {
  auto b = sample();
  REQUIRE(b.graph().edges.size() >= 2);
  REQUIRE(b.graph().segments.size() >= 3);
  check_equal(b.result, cache::decode_graph(cache::encode_graph(b.result), b.trace, b.rules));

  TempDir dir;
  REQUIRE(cache::save_graph(dir.f, kKey, b.result));
  std::string why = "unset";
  auto loaded = cache::load_graph(dir.f, kKey, b.trace, b.rules, &why);
  REQUIRE(loaded);
  check_equal(b.result, *loaded);
}

TEST_CASE("a damaged, truncated or foreign entry is a miss, never trusted") {
  auto b = sample();
  TempDir dir;
  REQUIRE(cache::save_graph(dir.f, kKey, b.result));
  const std::string path = (dir.path + "/" + cache::graph_entry_name(kKey));
  const std::string good = read_all(path);
  REQUIRE(good.size() > cache::kHeaderSize + 16);
  std::string why;

  SUBCASE("a flipped payload byte") {
    std::string bad = good;
    bad[cache::kHeaderSize + (bad.size() - cache::kHeaderSize) / 2] ^= 0x10;
    write_all(path, bad);
    CHECK_FALSE(cache::load_graph(dir.f, kKey, b.trace, b.rules, &why));
    CHECK(why == "checksum mismatch");
  }
  SUBCASE("truncated") {
    write_all(path, good.substr(0, good.size() - 1));
    CHECK_FALSE(cache::load_graph(dir.f, kKey, b.trace, b.rules, &why));
    CHECK(why.find("truncated") == 0);
    write_all(path, good.substr(0, 10));
    CHECK_FALSE(cache::load_graph(dir.f, kKey, b.trace, b.rules, &why));
    CHECK(why == "truncated header");
  }
  SUBCASE("not a cache file") {
    write_all(path, std::string(200, 'x'));
    CHECK_FALSE(cache::load_graph(dir.f, kKey, b.trace, b.rules, &why));
    CHECK(why == "not a causeway cache file");
  }
  SUBCASE("another format version") {
    std::string bad = good;
    bad[8] ^= 0x7f;
    write_all(path, bad);
    CHECK_FALSE(cache::load_graph(dir.f, kKey, b.trace, b.rules, &why));
    CHECK(why.find("cache format") == 0);
  }
  SUBCASE("a flipped key byte in the header") {
    std::string bad = good;
    bad[20] ^= 1;
    write_all(path, bad);
    CHECK_FALSE(cache::load_graph(dir.f, kKey, b.trace, b.rules, &why));
    CHECK(why == "made from other inputs");
  }
  SUBCASE("another key: trace, packs, options or engine version") {
    // The file of another key is another name; the header is checked all the same (a file
    // renamed or copied over another's name).
    for (cache::Key other : {cache::Key{9, 2, 3, 4}, cache::Key{1, 9, 3, 4}, cache::Key{1, 2, 9, 4},
                             cache::Key{1, 2, 3, 9}}) {
      CHECK((dir.path + "/" + cache::graph_entry_name(other)) != path);
      CHECK_FALSE(cache::load_graph(dir.f, other, b.trace, b.rules, &why));
      CHECK(why == "");  // no entry of that name
      fs::copy_file(path, (dir.path + "/" + cache::graph_entry_name(other)));
      CHECK_FALSE(cache::load_graph(dir.f, other, b.trace, b.rules, &why));
      CHECK(why == "made from other inputs");
    }
  }
  SUBCASE("a payload that checks but does not decode") {
    // As if the layout changed without a version bump: a valid header over other bytes.
    REQUIRE(cache::write_entry(dir.f, cache::graph_entry_name(kKey), cache::EntryKind::Graph, kKey,
                               "short"));
    CHECK_FALSE(cache::load_graph(dir.f, kKey, b.trace, b.rules, &why));
    CHECK(why == "entry ends early");
  }
  // And the intact entry still loads.
  write_all(path, good);
  CHECK(cache::load_graph(dir.f, kKey, b.trace, b.rules));
}

TEST_CASE("graph entries beyond the limit are evicted least recently used first") {
  auto b = sample();
  TempDir dir;
  std::vector<cache::Key> keys;
  for (uint64_t i = 0; i < cache::kGraphEntries; ++i) {
    keys.push_back(cache::Key{i, 0, 0, 0});
    REQUIRE(cache::save_graph(dir.f, keys.back(), b.result));
    usleep(5000);  // distinct modification times
  }
  // The oldest is used again: the second oldest goes when one more is saved.
  REQUIRE(cache::load_graph(dir.f, keys[0], b.trace, b.rules));
  usleep(5000);
  REQUIRE(cache::save_graph(dir.f, cache::Key{100, 0, 0, 0}, b.result));
  CHECK(cache::load_graph(dir.f, keys[0], b.trace, b.rules));
  CHECK_FALSE(cache::load_graph(dir.f, keys[1], b.trace, b.rules));
  for (size_t i = 2; i < keys.size(); ++i)
    CHECK(cache::load_graph(dir.f, keys[i], b.trace, b.rules));
  size_t files = 0;
  for (auto& e : fs::directory_iterator(dir.path)) files += e.path().extension() == ".cwg";
  CHECK(files == cache::kGraphEntries);

  // A killed run's temporary file goes after a day, a younger one stays.
  const std::string old_tmp = dir.path + "/" + cache::graph_entry_name(keys[0]) + ".tmp-1-1",
                    new_tmp = dir.path + "/" + cache::graph_entry_name(keys[2]) + ".tmp-2-2";
  write_all(old_tmp, "x");
  write_all(new_tmp, "x");
  fs::last_write_time(old_tmp, fs::file_time_type::clock::now() - std::chrono::hours(25));
  REQUIRE(cache::save_graph(dir.f, cache::Key{101, 0, 0, 0}, b.result));
  CHECK_FALSE(fs::exists(old_tmp));
  CHECK(fs::exists(new_tmp));
}

TEST_CASE("the trace key follows the trace's content, not its name") {
  TempDir dir;
  auto b = sample();
  const std::string a = dir.path + "/a.cwt", c = dir.path + "/c.cwt";
  write_trace(b.trace, a);
  fs::copy_file(a, c);
  auto ka = cache::trace_key(a);
  REQUIRE(ka);
  CHECK(cache::trace_key(c) == ka);
  // One event's time changed: its chunk's checksum, so its header, changes.
  Trace t = b.trace;
  t.events[1].ts += 1;
  write_trace(t, c);
  REQUIRE(fs::file_size(c) == fs::file_size(a));
  CHECK(cache::trace_key(c) != ka);
  // A text trace is hashed whole.
  const std::string text = dir.path + "/t.trace";
  write_all(text, "causeway-trace 1\nthread 1 1 main\n1000 1 switch_in\n");
  auto kt = cache::trace_key(text);
  write_all(text, "causeway-trace 1\nthread 1 1 main\n1001 1 switch_in\n");
  CHECK(cache::trace_key(text) != kt);
  CHECK_FALSE(cache::trace_key(dir.path + "/missing"));
}

TEST_CASE("the packs key follows the packs' content and order, not their paths") {
  auto load = [](std::vector<std::pair<std::string, std::string>> files) {
    std::vector<SourcePtr> sources;
    for (auto& [path, text] : files) sources.push_back(make_source(path, text));
    auto r = rules::load_sources(sources);
    REQUIRE_MESSAGE(r.ok(), r.render());
    return cache::packs_key(r.rules);
  };
  const std::string p = "pack p { version \"0.1.0\" }\n";
  const std::string q = "pack q { version \"0.1.0\" }\n";
  const std::string rule = "split s {\n  at syscall_enter\n  where name == \"read\"\n}\n";
  auto base = load({{"p.cw", p}, {"q.cw", q}});
  CHECK(load({{"elsewhere/p.cw", p}, {"q.cw", q}}) == base);
  CHECK(load({{"p.cw", p + rule}, {"q.cw", q}}) != base);
  CHECK(load({{"p.cw", p + "# a comment\n"}, {"q.cw", q}}) != base);
  CHECK(load({{"q.cw", q}, {"p.cw", p}}) != base);
  CHECK(load({{"p.cw", p}}) != base);
}

TEST_CASE("options key: Lua limits, the form asked and the frames named this run") {
  auto b = sample();
  BuildOptions o;
  auto k = cache::options_key(o, "auto", b.trace);
  CHECK(cache::options_key(o, "auto", b.trace) == k);
  CHECK(cache::options_key(o, "binary", b.trace) != k);
  BuildOptions smaller;
  smaller.lua_limits.instructions = 10;
  CHECK(cache::options_key(smaller, "auto", b.trace) != k);
  Trace named = b.trace;
  Stack s;
  s.ips = {0x1000};
  s.frames.push_back(Frame{0x1000, named.strings.intern("f"), 0, 0, false, false, 0, 0});
  named.add_stack(s);
  auto kn = cache::options_key(o, "auto", named);
  CHECK(kn != k);
  named.stacks.back().frames[0].function = named.strings.intern("g");
  CHECK(cache::options_key(o, "auto", named) != kn);
}

TEST_CASE("the engine key is stable within a run") {
  CHECK(cache::engine_key() == cache::engine_key());
  CHECK(cache::engine_key() != 0);
}

TEST_CASE("the cache folder is beside the trace, else under XDG_CACHE_HOME") {
  TempDir dir;
  const std::string trace = dir.path + "/x.cwt";
  write_all(trace, "x");
  auto d = cache::cache_dir(trace);
  REQUIRE(d);
  CHECK(d->path() == trace + ".cwcache");
  CHECK(fs::is_directory(d->path()));
  // A trace whose folder cannot hold the cache folder (here: the name is taken by a file).
  const std::string blocked = dir.path + "/y.cwt";
  write_all(blocked, "y");
  write_all(blocked + ".cwcache", "not a folder");
  const std::string xdg = dir.path + "/xdg";
  const char* old = std::getenv("XDG_CACHE_HOME");
  std::string saved = old ? old : "";
  setenv("XDG_CACHE_HOME", xdg.c_str(), 1);
  auto f = cache::cache_dir(blocked);
  if (old)
    setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  else
    unsetenv("XDG_CACHE_HOME");
  REQUIRE(f);
  CHECK(f->path().rfind(xdg + "/causeway/", 0) == 0);
  CHECK(fs::is_directory(f->path()));
}

TEST_CASE("the cache folder is private: 0700, this user's own, never through a link") {
  TempDir dir;
  const std::string trace = dir.path + "/x.cwt";
  write_all(trace, "x");
  auto d = cache::cache_dir(trace);
  REQUIRE(d);
  struct stat st {};
  REQUIRE(stat(d->path().c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  // A folder made open to others (by an older causeway, or by hand) is closed again.
  REQUIRE(chmod(d->path().c_str(), 0755) == 0);
  REQUIRE(cache::cache_dir(trace)->path() == d->path());
  REQUIRE(stat(d->path().c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  // Entries are 0600, as the trace.
  const cache::Key key{1, 2, 3, 4};
  auto b = sample();
  REQUIRE(cache::save_graph(*d, key, b.result));
  for (const auto& entry : fs::directory_iterator(d->path())) {
    REQUIRE(stat(entry.path().c_str(), &st) == 0);
    CHECK_MESSAGE((st.st_mode & 0777) == 0600, entry.path());
  }
  // A link where the folder would be, to a folder someone could read: not used.
  const std::string linked = dir.path + "/y.cwt";
  write_all(linked, "y");
  fs::create_directory(dir.path + "/open");
  fs::create_directory_symlink(dir.path + "/open", linked + ".cwcache");
  const std::string xdg = dir.path + "/xdg";
  const char* old = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old ? old : "";
  setenv("XDG_CACHE_HOME", xdg.c_str(), 1);
  auto e = cache::cache_dir(linked);
  if (old)
    setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  else
    unsetenv("XDG_CACHE_HOME");
  REQUIRE(e);
  CHECK(e->path().rfind(xdg + "/causeway/", 0) == 0);
}

TEST_CASE("CAUSEWAY_CACHE=off turns the cache off") {
  const char* old = std::getenv("CAUSEWAY_CACHE");
  std::string saved = old ? old : "";
  unsetenv("CAUSEWAY_CACHE");
  CHECK(cache::enabled_by_environment());
  setenv("CAUSEWAY_CACHE", "off", 1);
  CHECK_FALSE(cache::enabled_by_environment());
  setenv("CAUSEWAY_CACHE", "on", 1);
  CHECK(cache::enabled_by_environment());
  if (old)
    setenv("CAUSEWAY_CACHE", saved.c_str(), 1);
  else
    unsetenv("CAUSEWAY_CACHE");
}

TEST_CASE("a trace's arrays come back mapped, equal, and copy-on-write") {
  auto b = sample();
  TempDir dir;
  const std::string file = dir.path + "/t.cwt";
  write_trace(b.trace, file);
  Trace read;
  ReadReport report = read_trace(file, read);
  REQUIRE(report.clean());
  REQUIRE(read.events.size() == b.trace.events.size());
  const cache::Key key{*cache::trace_key(file), 0, 0, cache::engine_key()};
  REQUIRE(cache::save_trace_arrays(dir.f, key, read, report));
  const std::string path = dir.path + "/trace.cwa";
  const std::string good = read_all(path);
  std::string why;
  {
    auto arrays = cache::load_trace_arrays(dir.f, key, &why);
    REQUIRE_MESSAGE(arrays, why);
    CHECK(arrays->events.is_view());
    CHECK(reinterpret_cast<uintptr_t>(arrays->events.data()) % 4096 == 0);
    CHECK(reinterpret_cast<uintptr_t>(arrays->values.data()) % 4096 == 0);
    REQUIRE(arrays->events.size() == read.events.size());
    CHECK(std::memcmp(arrays->events.data(), read.events.data(),
                      read.events.size() * sizeof(Event)) == 0);
    CHECK(arrays->values == read.values);
    CHECK(arrays->strings == read.strings.size());
    CHECK(arrays->stacks == read.stacks.size());
    CHECK(arrays->report.events_read == report.events_read);
    CHECK(arrays->report.chunks_read == report.chunks_read);
    CHECK(arrays->report.major == report.major);
    CHECK(arrays->report.notes == report.notes);

    // The rest from the trace, events skipped: the same trace.
    Trace small;
    auto sr = cache::read_trace_without_events(file, small);
    REQUIRE(sr);
    CHECK(sr->clean());
    CHECK(small.events.empty());
    CHECK(small.strings.size() == arrays->strings);
    CHECK(small.threads.size() == read.threads.size());

    // A write through the column changes this run's copy, never the file.
    arrays->events[0].ts += 12345;
    arrays->values[0] ^= 1;
  }
  CHECK(read_all(path) == good);
  CHECK(cache::load_trace_arrays(dir.f, key));

  // Another run's save under way: its temporary file, young.
  CHECK_FALSE(cache::being_written(dir.f, cache::kTraceArraysName));
  const std::string tmp = path + ".tmp-1-2";
  write_all(tmp, "x");
  CHECK(cache::being_written(dir.f, cache::kTraceArraysName));
  fs::last_write_time(tmp, fs::file_time_type::clock::now() - std::chrono::minutes(11));
  CHECK_FALSE(cache::being_written(dir.f, cache::kTraceArraysName));
  fs::remove(tmp);

  SUBCASE("another key") {
    cache::Key other = key;
    other.engine ^= 1;
    CHECK_FALSE(cache::load_trace_arrays(dir.f, other, &why));
    CHECK(why == "made from other inputs");
  }
  SUBCASE("a flipped byte in the values") {
    std::string bad = good;
    bad[bad.size() - 3] ^= 0x40;
    write_all(path, bad);
    CHECK_FALSE(cache::load_trace_arrays(dir.f, key, &why));
    CHECK(why == "checksum mismatch");
  }
  SUBCASE("truncated") {
    write_all(path, good.substr(0, good.size() - 8));
    CHECK_FALSE(cache::load_trace_arrays(dir.f, key, &why));
    CHECK(why.find("truncated") == 0);
  }
  SUBCASE("a graph entry is not a trace entry") {
    REQUIRE(cache::write_entry(dir.f, cache::kTraceArraysName, cache::EntryKind::Graph, key, "x"));
    CHECK_FALSE(cache::load_trace_arrays(dir.f, key, &why));
    CHECK(why.find("truncated header") == 0);
    REQUIRE(cache::write_entry(dir.f, cache::kTraceArraysName, cache::EntryKind::Graph, key,
                               std::string(100, 'x')));
    CHECK_FALSE(cache::load_trace_arrays(dir.f, key, &why));
    CHECK(why == "another kind of entry");
  }
}

TEST_CASE("the thread index comes back mapped and equal; offsets that do not hold are a miss") {
  auto b = sample();
  TempDir dir;
  const cache::Key key{7, 0, 0, 1};
  const ThreadEvents made(b.trace);
  REQUIRE(cache::save_thread_index(dir.f, key, made));
  std::string why;
  auto loaded = cache::load_thread_index(dir.f, key, b.trace.events.size(), &why);
  REQUIRE_MESSAGE(loaded, why);
  CHECK(loaded->parts().events.is_view());
  auto same = [](EventList a, EventList b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  };
  REQUIRE(loaded->tids().size() == made.tids().size());
  for (Tid tid : made.tids()) {
    CHECK(same(loaded->of(tid), made.of(tid)));
    CHECK(same(loaded->switches_of(tid), made.switches_of(tid)));
    CHECK(same(loaded->syscalls_of(tid), made.syscalls_of(tid)));
  }
  CHECK(!made.of(101).empty());
  CHECK_FALSE(cache::load_thread_index(dir.f, cache::Key{8, 0, 0, 1}, b.trace.events.size()));

  // Offsets past their list: rejected even when the checksum holds (an entry written by
  // a build whose layout differed without a version bump).
  ThreadEvents::Parts bad;
  bad.tids = std::vector<Tid>{101};
  bad.events = std::vector<uint32_t>{0, 1};
  bad.events_at = std::vector<uint32_t>{0, 3};
  bad.switches_at = std::vector<uint32_t>{0, 0};
  bad.syscalls_at = std::vector<uint32_t>{0, 0};
  CHECK_THROWS_AS(ThreadEvents(bad, 2), std::invalid_argument);
  bad.events_at = std::vector<uint32_t>{0, 2};
  CHECK_NOTHROW(ThreadEvents(bad, 2));
  bad.tids = std::vector<Tid>{101, 101};
  bad.events_at = std::vector<uint32_t>{0, 1, 2};
  bad.switches_at = std::vector<uint32_t>{0, 0, 0};
  bad.syscalls_at = std::vector<uint32_t>{0, 0, 0};
  CHECK_THROWS_AS(ThreadEvents(bad, 2), std::invalid_argument);
}

TEST_CASE(
    "a hang entry: its request is part of its key, it decodes whole, it goes with its graph") {
  auto b = sample();
  TempDir dir;
  const cache::Key graph{9, 1, 2, 3};
  SymptomRequest automatic;
  SymptomRequest at = automatic;
  at.mode = SymptomRequest::Mode::ThreadAt;
  at.tid = 101;
  at.at_ns = 4000;
  SymptomRequest shorter = automatic;
  shorter.min_hang_ns = 1;
  SymptomRequest named = automatic;
  named.thread_name = "a";
  const std::vector<SymptomRequest> requests = {automatic, at, shorter, named};
  for (size_t i = 0; i < requests.size(); ++i)
    for (size_t j = i + 1; j < requests.size(); ++j)
      CHECK_FALSE(cache::hang_key(graph, requests[i]) == cache::hang_key(graph, requests[j]));

  FoundHang found;
  Hang h;
  h.tid = 101;
  h.pid = 100;
  h.start_ns = 1000;
  h.end_ns = 5000;
  h.kind = HangKind::RepeatedYield;
  h.segment = 1;
  h.first_segment = 0;
  h.last_segment = 1;
  h.chosen_by = "auto: the longest";
  h.profile.blocked_ns = 77;
  h.profile.longest_block_call = 3;
  h.profile.by_name = {{4, 2}, {1, 1}};
  found.hang = h;
  REQUIRE(cache::save_hang(dir.f, graph, automatic, found));
  auto back = cache::load_hang(dir.f, graph, automatic, b.trace, b.graph());
  REQUIRE(back);
  REQUIRE(back->hang);
  CHECK(cache::encode_found_hang(*back) == cache::encode_found_hang(found));
  CHECK(back->hang->chosen_by == "auto: the longest");
  CHECK(back->hang->profile.by_name.size() == 2);
  CHECK_FALSE(cache::load_hang(dir.f, graph, at, b.trace, b.graph()));  // another request: no entry
  FoundHang none;
  none.why = "nothing longer than 500 ms";
  none.no_hang = true;
  REQUIRE(cache::save_hang(dir.f, graph, shorter, none));
  back = cache::load_hang(dir.f, graph, shorter, b.trace, b.graph());
  REQUIRE(back);
  CHECK_FALSE(back->hang);
  CHECK(back->no_hang);
  CHECK(back->why == none.why);
  CHECK_THROWS_AS(
      cache::decode_found_hang(cache::encode_found_hang(found) + "x", b.trace, b.graph()),
      cache::CorruptEntry);

  // Its graph evicted, the hang entries go too.
  REQUIRE(cache::save_graph(dir.f, graph, b.result));
  usleep(5000);
  for (uint64_t i = 0; i < cache::kGraphEntries; ++i) {
    REQUIRE(cache::save_graph(dir.f, cache::Key{200 + i, 0, 0, 0}, b.result));
    usleep(5000);
  }
  CHECK_FALSE(cache::load_graph(dir.f, graph, b.trace, b.rules));
  CHECK_FALSE(cache::load_hang(dir.f, graph, automatic, b.trace, b.graph()));
  CHECK_FALSE(cache::load_hang(dir.f, graph, shorter, b.trace, b.graph()));
}

TEST_CASE("links key: links, edge and flag rules and peers splits count; other cut rules do not") {
  const std::string link =
      "link wakeup { from wakeup to switch_in join from.target == to.tid pick next }\n";
  const std::string edge = "edge w { link wakeup strength strong }\n";
  auto key = [](const std::string& text) { return cache::links_key(testing::load_rules(text)); };
  const auto base = key(link + edge);
  REQUIRE(base);
  // Cut rules added, changed, or the rules moved in their file: the same.
  CHECK(key(link + edge + "split s { at syscall_enter where name == \"read\" }\n") == base);
  CHECK(key(link + edge + "split s { at syscall_enter where name == \"write\" loop }\n") == base);
  CHECK(key("\n\n" + link + "\n" + edge) == base);
  CHECK(key(link + edge + "batch b { within call where fn == \"x\" item recv }\n") == base);
  // What the edges come from: another.
  CHECK(key(link + "edge w { link wakeup strength weak }\n") != base);
  CHECK(key(link + "edge v { link wakeup strength strong }\n") != base);
  CHECK(key(link + edge + "edge x { link wakeup strength prune where from.target == 1 }\n") !=
        base);
  CHECK(key("link wakeup { from wakeup to switch_in join from.target == to.tid pick latest }\n" +
            edge) != base);
  CHECK(key(link + edge + "flag f { symbol \"ready\" }\n") != base);
  const std::string stream =
      "link stream { from send to recv join from.object == to.object pick next }\n";
  CHECK(key(link + edge + stream + "split p { peers stream }\n") != key(link + edge + stream));
  CHECK(key(link + edge + stream + "split p { peers stream neighbour none }\n") !=
        key(link + edge + stream + "split p { peers stream }\n"));
  CHECK_FALSE(key(link + edge + "lua [[ function f() return true end ]]\n"));
}

TEST_CASE("a base entry names the last graph of its links key; never one of other inputs") {
  auto b = sample();
  TempDir dir;
  const cache::Key graph{1, 2, 3, 4}, base{1, 9, 3, 4};
  REQUIRE(cache::save_graph(dir.f, graph, b.result));
  REQUIRE(cache::save_base(dir.f, base, graph));
  cache::Key named;
  auto prior = cache::load_base(dir.f, base, b.trace, b.rules, &named);
  REQUIRE(prior);
  CHECK(named == graph);
  CHECK(prior->graph.segments.empty());  // loaded for reuse: edges only
  CHECK(prior->graph.edges.size() == b.result.graph.edges.size());
  CHECK(prior->peer_cuts.size() == b.result.peer_cuts.size());
  // A base entry naming a graph of another trace is refused.
  const cache::Key other_base{5, 9, 3, 4};
  REQUIRE(cache::save_base(dir.f, other_base, graph));
  std::string why;
  CHECK_FALSE(cache::load_base(dir.f, other_base, b.trace, b.rules, &named, &why));
  CHECK(why == "names a graph of other inputs");
  // Its graph gone: a miss.
  fs::remove((dir.path + "/" + cache::graph_entry_name(graph)));
  CHECK_FALSE(cache::load_base(dir.f, base, b.trace, b.rules, &named));
}

TEST_CASE("a hang entry whose segment is out of range is a miss, not a crash of the diagnosis") {
  auto b = sample();
  TempDir dir;
  const cache::Key graph{9, 1, 2, 3};
  SymptomRequest automatic;
  FoundHang found;
  Hang h;
  h.tid = 101;
  h.pid = 100;
  h.start_ns = 1000;
  h.end_ns = 5000;
  h.kind = HangKind::LongWait;
  h.segment = 0x7fffffff;  // far past the graph's segments
  h.first_segment = 0;
  h.last_segment = 1;
  h.chosen_by = "auto: crafted";
  h.profile.longest_block_ns = 1000;
  h.profile.longest_block_start = 2000;
  found.hang = h;
  // Written through the public API: its checksum holds.
  REQUIRE(cache::save_hang(dir.f, graph, automatic, found));
  std::string why;
  auto back = cache::load_hang(dir.f, graph, automatic, b.trace, b.graph(), &why);
  if (back) {
    // What the command line does with a hang from the cache: diagnose from it.
    DiagnoseOptions options;
    options.symptom = automatic;
    options.known_hang = &*back;
    (void)diagnose(b.trace, b.result, b.rules, options);
  }
  CHECK_FALSE(back);
  CHECK(why.find("segment") != std::string::npos);
}

TEST_CASE("a hang entry naming events, strings or segments the trace and graph lack is a miss") {
  auto b = sample();
  FoundHang found;
  Hang h;
  h.tid = 101;
  h.pid = 100;
  h.kind = HangKind::LongWait;
  h.segment = 1;
  h.first_segment = 0;
  h.last_segment = 1;
  h.profile.longest_block_call = 3;
  h.profile.longest_block_exit = kNoIndex;
  h.profile.by_name = {{4, 1}};
  found.hang = h;
  auto decode = [&](const FoundHang& f) {
    return cache::decode_found_hang(cache::encode_found_hang(f), b.trace, b.graph());
  };
  CHECK_NOTHROW(decode(found));
  auto bad = [&](auto change) {
    FoundHang f = found;
    change(*f.hang);
    CHECK_THROWS_AS(decode(f), cache::CorruptEntry);
  };
  bad([](Hang& x) { x.first_segment = 2; });  // after its hang segment
  bad([](Hang& x) { x.last_segment = kNoIndex; });
  bad([](Hang& x) { x.segment = x.last_segment = 2; });  // thread 102's segment
  bad([&](Hang& x) {
    x.profile.longest_block_call = static_cast<uint32_t>(b.trace.events.size());
  });
  bad([](Hang& x) { x.profile.longest_block_exit = 0x7fffffff; });
  bad([&](Hang& x) {
    x.profile.by_name.push_back({static_cast<StrId>(b.trace.strings.size()), 1});
  });
}

TEST_CASE("a graph entry whose indexes leave their tables is a miss, checksum or not") {
  auto b = sample();
  const BuildResult& good = b.result;
  REQUIRE(good.graph.edges.size() >= 2);
  const auto events = static_cast<uint32_t>(b.trace.events.size());
  auto decode = [&](const BuildResult& r, bool for_reuse = false) {
    return cache::decode_graph(cache::encode_graph(r), b.trace, b.rules, for_reuse);
  };
  CHECK_NOTHROW(decode(good));
  CHECK_NOTHROW(decode(good, true));
  auto bad = [&](const char* what, auto change) {
    INFO(what);
    BuildResult r = good;
    change(r);
    CHECK_THROWS_AS(decode(r), cache::CorruptEntry);
  };
  bad("segment past the events", [&](BuildResult& r) { r.graph.segments[0].last = events; });
  bad("segment ends before it starts", [&](BuildResult& r) {
    std::swap(r.graph.segments[0].first, r.graph.segments[0].last);
    r.graph.segments[0].first += 1;
  });
  bad("segment of another thread's events", [&](BuildResult& r) { r.graph.segments[0].tid = 102; });
  bad("segment cut by no rule", [&](BuildResult& r) {
    r.graph.segments[1].cut_rule = {RuleKind::Split, 7};
  });
  bad("segment cut by a rule kind that does not exist",
      [&](BuildResult& r) { r.graph.segments[1].cut_rule.kind = static_cast<RuleKind>(9); });
  bad("edge past the segments", [&](BuildResult& r) {
    r.graph.edges[0].to = static_cast<uint32_t>(r.graph.segments.size());
  });
  bad("edge evidence past the events",
      [&](BuildResult& r) { r.graph.edges[0].from_event = events; });
  bad("edge of no rule", [&](BuildResult& r) { r.graph.edges[0].rule.index = 1000; });
  bad("edge of no link", [&](BuildResult& r) { r.graph.edges[0].link = 1000; });
  bad("edge boosted by no rule", [&](BuildResult& r) { r.graph.edges[0].boost_rule = 1000; });
  bad("edge of no strength",
      [&](BuildResult& r) { r.graph.edges[0].strength = static_cast<Strength>(3); });
  bad("thread table past the segments", [&](BuildResult& r) {
    r.graph.threads.back().end = static_cast<uint32_t>(r.graph.segments.size() + 1);
  });
  bad("a segment in no thread's run", [&](BuildResult& r) { r.graph.threads.back().end -= 1; });
  bad("a segment in two threads' runs",
      [&](BuildResult& r) { r.graph.threads[1].begin = r.graph.threads[0].begin; });
  bad("thread table out of order",
      [&](BuildResult& r) { std::swap(r.graph.threads[0], r.graph.threads[1]); });
  bad("rule counts shorter than the rules", [&](BuildResult& r) { r.counts.edges.clear(); });
  bad("rule tables that disagree", [&](BuildResult& r) { r.graph.rule_names.split_loops.clear(); });
  bad("a rule strength that does not exist", [&](BuildResult& r) {
    r.graph.rule_names.edge_strengths[0] = static_cast<rules::Strength>(9);
  });
  bad("peers cut past the events", [&](BuildResult& r) {
    r.peer_cuts.push_back({0, events, 0, rules::Neighbour::None});
  });
  bad("more flag edges than edges",
      [&](BuildResult& r) { r.stats.flag_edges = uint64_t{1} << 60; });
  // The graph of other packs (more edge rules than these): its counts do not fit them.
  auto other = testing::build(
      "link wakeup { from wakeup to switch_in join from.target == to.tid pick next }\n"
      "edge w { link wakeup strength strong }\n"
      "edge v { link wakeup strength weak where from.target == 1 }\n"
      "split cut { at syscall_enter where name == \"read\" cut before neighbour weak }\n",
      "process 100 comm=app\nthread 101 pid=100 comm=a\n1000 101 syscall_enter name=read\n");
  CHECK_THROWS_AS(decode(other.result), cache::CorruptEntry);
  // Through the cache: the entry is written with a valid checksum, and still a miss.
  TempDir dir;
  BuildResult crafted = good;
  crafted.graph.edges[1].to_event = 0x7fffffff;
  REQUIRE(cache::save_graph(dir.f, kKey, crafted));
  std::string why;
  CHECK_FALSE(cache::load_graph(dir.f, kKey, b.trace, b.rules, &why));
  CHECK(why == "an edge names events the trace does not have");
}

TEST_CASE("a thread index naming events the trace lacks, or out of order, is a miss") {
  auto b = sample();
  const auto events = b.trace.events.size();
  ThreadEvents::Parts parts;
  parts.tids = std::vector<Tid>{101};
  parts.events = std::vector<uint32_t>{0, 1};
  parts.events_at = std::vector<uint32_t>{0, 2};
  parts.switches_at = std::vector<uint32_t>{0, 0};
  parts.syscalls_at = std::vector<uint32_t>{0, 0};
  CHECK_NOTHROW(ThreadEvents(parts, events));
  CHECK_THROWS_AS(ThreadEvents(parts, 1), std::invalid_argument);  // event 1 past a 1-event trace
  parts.events = std::vector<uint32_t>{1, 0};
  CHECK_THROWS_AS(ThreadEvents(parts, events), std::invalid_argument);
  parts.events = std::vector<uint32_t>{0, 0xfffffff0u};
  CHECK_THROWS_AS(ThreadEvents(parts, events), std::invalid_argument);
  // Through the cache: an index of a longer trace is no index of this one.
  TempDir dir;
  const cache::Key key{7, 0, 0, 1};
  REQUIRE(cache::save_thread_index(dir.f, key, ThreadEvents(b.trace)));
  std::string why;
  CHECK(cache::load_thread_index(dir.f, key, events, &why));
  CHECK_FALSE(cache::load_thread_index(dir.f, key, events - 1, &why));
  CHECK(why.find("past the trace") != std::string::npos);
}

TEST_CASE("trace arrays naming kinds, values, stacks or strings the trace lacks are a miss") {
  auto b = sample();
  TempDir dir;
  const std::string file = dir.path + "/t.cwt";
  write_trace(b.trace, file);
  Trace read;
  ReadReport report = read_trace(file, read);
  const cache::Key key{*cache::trace_key(file), 0, 0, cache::engine_key()};
  REQUIRE(cache::save_trace_arrays(dir.f, key, read, report));
  Trace small;
  REQUIRE(cache::read_trace_without_events(file, small));
  auto arrays = cache::load_trace_arrays(dir.f, key);
  REQUIRE(arrays);
  CHECK_NOTHROW(cache::check_trace_arrays(*arrays, small));
  const Event good = arrays->events[1];
  auto bad = [&](const char* what, auto change) {
    INFO(what);
    change(arrays->events[1]);  // a copy-on-write page: the entry stays as it was
    CHECK_THROWS_AS(cache::check_trace_arrays(*arrays, small), cache::CorruptEntry);
    arrays->events[1] = good;
  };
  bad("kind", [&](Event& e) { e.kind = static_cast<KindId>(small.schema.size()); });
  bad("values", [&](Event& e) { e.values = static_cast<uint32_t>(arrays->values.size()); });
  bad("stack", [&](Event& e) { e.stack = static_cast<StackId>(small.stacks.size()); });
  bad("time order", [&](Event& e) { e.ts = arrays->events[2].ts + 1; });
  // A string field naming no string: the name of the first syscall_enter.
  const KindId enter = small.schema.find("syscall_enter");
  const int name = small.schema.field_index(enter, "name");
  for (size_t i = 0; i < arrays->events.size(); ++i) {
    const Event& e = arrays->events[i];
    if (e.kind != enter) continue;
    const uint64_t was = arrays->values[e.values + name];
    arrays->values[e.values + name] = small.strings.size();
    CHECK_THROWS_AS(cache::check_trace_arrays(*arrays, small), cache::CorruptEntry);
    arrays->values[e.values + name] = was;
    break;
  }
  CHECK_NOTHROW(cache::check_trace_arrays(*arrays, small));
  // Counts of strings and stacks other than the trace's.
  arrays->strings += 1;
  CHECK_THROWS_AS(cache::check_trace_arrays(*arrays, small), cache::CorruptEntry);
}
