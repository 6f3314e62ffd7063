// The keys entries are found by: equal for equal inputs, other for inputs that change what
// an entry holds.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "engine/cache/cache.h"
#include "engine/cache/test_support.h"

namespace fs = std::filesystem;
using namespace cw;
using namespace cw::engine;
using namespace cw::cache::testing;

TEST_CASE("the trace key follows the trace's content, not its name") {
  TempDir dir;
  auto b = sample();
  const std::string a = dir.path + "/a.cwt", c = dir.path + "/c.cwt";
  // Uncompressed, so that the changed trace below has the same size: the key must not be
  // the size.
  const TraceWriterOptions plain{.compression = TraceCompression::None};
  write_trace(b.trace, a, plain);
  fs::copy_file(a, c);
  auto ka = cache::trace_key(a);
  REQUIRE(ka);
  CHECK(cache::trace_key(c) == ka);
  // One event's time changed: its chunk's checksum, so its header, changes.
  Trace t = b.trace;
  t.events[1].ts += 1;
  write_trace(t, c, plain);
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
  // Lua hooks: their code counts; a cut rule that calls one leaves no key (built whole).
  const std::string hook = "lua [[ function f(x) return true end ]]\n";
  const auto with_hook = key(link + edge + hook);
  REQUIRE(with_hook);
  CHECK(*with_hook != *base);
  CHECK(key(link + edge + "lua [[ function f(x) return false end ]]\n") != with_hook);
  CHECK(key(link + edge + hook + "split s { at syscall_enter where name == \"read\" }\n") ==
        with_hook);
  CHECK(key(link + "edge w { link wakeup where lua.f(from.tid) strength strong }\n" + hook) !=
        with_hook);
  CHECK_FALSE(key(link + edge + hook + "split s { at syscall_enter where lua.f(tid) }\n"));
  CHECK_FALSE(key(link + edge + hook + "batch b { within call where lua.f(tid) item recv }\n"));
  CHECK_FALSE(key(link + edge + hook + "batch b { within loop item recv per lua.f(fd) }\n"));
}
