// The cache's folders against a folder that changes under it, links planted in it, files
// of other users, and its caps (engine/cache/cache_dir.h, docs/cache.md).
#include "engine/cache/cache_dir.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/cache/cache.h"
#include "engine/cache/test_support.h"
#include "engine/graph/test_support.h"

namespace fs = std::filesystem;
using namespace cw;
using cw::cache::testing::Env;

namespace {

// An unprivileged user id that owns nothing here: files given to it are another user's.
constexpr uid_t kOther = 65534;

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/cw-cache-dir-test-XXXXXX";
    path = mkdtemp(tmpl);
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

void age(const std::string& path, std::chrono::seconds by) {
  fs::last_write_time(path, fs::file_time_type::clock::now() - by);
}

engine::testing::Built sample() {
  return engine::testing::build(
      "split cut { at syscall_enter where name == \"read\" cut before }\n",
      "process 100 comm=app\n"
      "thread 101 pid=100 comm=a\n"
      "1000 101 syscall_enter name=read\n"
      "2000 101 syscall_enter name=read\n");
}

bool is_root() {
  return geteuid() == 0;
}

size_t count_files(const std::string& dir) {
  size_t n = 0;
  for (auto& e : fs::directory_iterator(dir)) n += e.is_regular_file();
  return n;
}

}  // namespace

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

TEST_CASE("a cache folder that is a symbolic link, or open to writers, is refused") {
  TempDir dir;
  const std::string real = dir.path + "/real", link = dir.path + "/link";
  fs::create_directory(real);
  fs::permissions(real, fs::perms::owner_all, fs::perm_options::replace);
  fs::create_directory_symlink(real, link);
  std::string why;
  CHECK(cache::Folder::open(real, &why));
  CHECK_FALSE(cache::Folder::open(link, &why));
  CHECK(why.find("symbolic link") != std::string::npos);
  auto top = cache::Folder::open(dir.path);
  REQUIRE(top);
  CHECK_FALSE(top->sub("link", true, &why));
  CHECK(why.find("symbolic link") != std::string::npos);
  // A folder of this user's that its group or others can write: they could put files in
  // it, or rename its entries and put links in their place.
  fs::permissions(real, fs::perms::owner_all | fs::perms::group_write | fs::perms::others_write,
                  fs::perm_options::replace);
  CHECK_FALSE(cache::Folder::open(real, &why));
  CHECK(why.find("can write it") != std::string::npos);
}

TEST_CASE("a folder of another user's is not used, beside the trace or as HOME (root only)") {
  if (!is_root()) {
    MESSAGE("skipped: needs root to give a folder to another user");
    return;
  }
  TempDir dir;
  const std::string theirs = dir.path + "/theirs";
  fs::create_directory(theirs);
  fs::permissions(theirs, fs::perms::owner_all, fs::perm_options::replace);
  REQUIRE(chown(theirs.c_str(), kOther, kOther) == 0);
  std::string why;
  CHECK_FALSE(cache::Folder::open(theirs, &why));
  CHECK(why.find("belongs to user 65534") != std::string::npos);

  const Env xdg("XDG_CACHE_HOME", dir.path + "/xdg");
  // A trace in a folder the other user owns (she could swap TRACE.cwcache for a link or a
  // folder of hers between any check by path and a write): the entries go to this user's
  // own cache folder.
  const std::string trace = theirs + "/t.cwt";
  write_all(trace, "x");
  auto d = cache::cache_dir(trace, &why);
  REQUIRE_MESSAGE(d, why);
  CHECK(d->path().rfind(dir.path + "/xdg/causeway/", 0) == 0);
  CHECK(d->pool());
  CHECK_FALSE(fs::exists(trace + ".cwcache"));
  // A trace in a folder anyone can write (/tmp-like, sticky or not): the same.
  const std::string open = dir.path + "/open";
  fs::create_directory(open);
  for (auto mode : {fs::perms::all, fs::perms::all | fs::perms::sticky_bit}) {
    fs::permissions(open, mode, fs::perm_options::replace);
    write_all(open + "/t.cwt", "x");
    auto e = cache::cache_dir(open + "/t.cwt", &why);
    REQUIRE_MESSAGE(e, why);
    CHECK(e->path().rfind(dir.path + "/xdg/causeway/", 0) == 0);
    CHECK_FALSE(fs::exists(open + "/t.cwt.cwcache"));
  }
  // A folder the trace's folder holds under the cache's name, made by the other user.
  const std::string mine = dir.path + "/mine";
  fs::create_directory(mine);
  fs::permissions(mine, fs::perms::owner_all, fs::perm_options::replace);
  write_all(mine + "/t.cwt", "x");
  fs::create_directory(mine + "/t.cwt.cwcache");
  REQUIRE(chown((mine + "/t.cwt.cwcache").c_str(), kOther, kOther) == 0);
  auto f = cache::cache_dir(mine + "/t.cwt", &why);
  REQUIRE_MESSAGE(f, why);
  CHECK(f->path().rfind(dir.path + "/xdg/causeway/", 0) == 0);

  // HOME of another user (root run with sudo -E): nothing is made in it.
  {
    const Env no_xdg("XDG_CACHE_HOME", "");
    const Env home("HOME", theirs);
    auto u = cache::user_cache_folder(true, &why);
    if (u) CHECK(u->path().rfind(theirs, 0) != 0);
    CHECK_FALSE(fs::exists(theirs + "/.cache"));
  }
  // Nor in an XDG_CACHE_HOME of hers.
  {
    const Env theirs_xdg("XDG_CACHE_HOME", theirs + "/cache");
    const Env home("HOME", dir.path);
    auto u = cache::user_cache_folder(true, &why);
    REQUIRE_MESSAGE(u, why);
    CHECK(u->path() == dir.path + "/.cache/causeway");
    CHECK_FALSE(fs::exists(theirs + "/cache"));
  }
}

TEST_CASE("a folder swapped for a link after it was opened: nothing goes through the link") {
  auto b = sample();
  TempDir dir;
  const std::string trace = dir.path + "/t.cwt";
  write_all(trace, "x");
  auto d = cache::cache_dir(trace);
  REQUIRE(d);
  REQUIRE(d->path() == trace + ".cwcache");
  const cache::Key key{1, 2, 3, 4};
  REQUIRE(cache::save_graph(*d, key, b.result));
  // Another user (or anything) moves the folder away and puts a link to a folder of hers
  // where it was, with an entry of her making under the name the next load opens.
  const std::string elsewhere = dir.path + "/moved", hers = dir.path + "/hers";
  fs::rename(trace + ".cwcache", elsewhere);
  fs::create_directory(hers);
  fs::create_directory_symlink(hers, trace + ".cwcache");
  const std::string forged = hers + "/" + cache::graph_entry_name(key);
  fs::copy_file(elsewhere + "/" + cache::graph_entry_name(key), forged);
  write_all(hers + "/" + cache::graph_entry_name(cache::Key{7, 7, 7, 7}) + ".tmp-1-1", "hers");
  age(hers + "/" + cache::graph_entry_name(cache::Key{7, 7, 7, 7}) + ".tmp-1-1",
      std::chrono::hours(48));
  const auto before = read_all(forged);
  // Every operation goes through the descriptor opened before: the folder it is now.
  REQUIRE(cache::load_graph(*d, key, b.trace, b.rules));
  fs::remove(elsewhere + "/" + cache::graph_entry_name(key));
  CHECK_FALSE(
      cache::load_graph(*d, key, b.trace, b.rules));  // hers is not read, though it would load
  for (uint64_t i = 0; i < cache::kGraphEntries + 2; ++i)
    REQUIRE(cache::save_graph(*d, cache::Key{10 + i, 0, 0, 0}, b.result));
  CHECK(count_files(elsewhere) == cache::kGraphEntries);
  CHECK(count_files(hers) == 2);  // her files: none added, none removed
  CHECK(read_all(forged) == before);
}

TEST_CASE("an entry planted as a link is neither followed on read nor written through") {
  auto b = sample();
  TempDir dir;
  auto top = cache::Folder::open(dir.path);
  REQUIRE(top);
  auto mine = top->sub("mine", true);
  REQUIRE(mine);
  const cache::Key key{1, 2, 3, 4};
  // A valid entry elsewhere, and a link to it where the entry would be.
  const std::string outside = dir.path + "/outside";
  fs::create_directory(outside);
  auto out = cache::Folder::open(outside);
  REQUIRE(out);
  REQUIRE(cache::save_graph(*out, key, b.result));
  const std::string target = outside + "/" + cache::graph_entry_name(key);
  const std::string planted = dir.path + "/mine/" + cache::graph_entry_name(key);
  fs::create_symlink(target, planted);
  std::string why;
  CHECK_FALSE(cache::load_graph(*mine, key, b.trace, b.rules, &why));
  CHECK(why == "a symbolic link (not followed)");
  CHECK_FALSE(
      cache::read_entry(*mine, cache::graph_entry_name(key), cache::EntryKind::Graph, key, &why));
  CHECK(why == "a symbolic link (not followed)");
  // The trace arrays and the thread index are mapped: the same.
  fs::create_symlink(target, dir.path + "/mine/trace.cwa");
  CHECK_FALSE(cache::load_trace_arrays(*mine, key, &why));
  CHECK(why == "a symbolic link (not followed)");
  // A save replaces the link; the file it pointed to is untouched.
  const std::string before = read_all(target);
  REQUIRE(cache::save_graph(*mine, cache::Key{1, 2, 3, 5}, b.result));
  REQUIRE(
      cache::write_entry(*mine, cache::graph_entry_name(key), cache::EntryKind::Graph, key, "new"));
  CHECK(read_all(target) == before);
  CHECK(fs::is_regular_file(fs::symlink_status(planted)));
  // A FIFO where an entry would be: refused at once, not waited on.
  REQUIRE(mkfifo((dir.path + "/mine/threads.cwa").c_str(), 0600) == 0);
  CHECK_FALSE(cache::load_thread_index(*mine, key, b.trace.events.size(), &why));
  CHECK(why == "not a regular file");
}

TEST_CASE("an entry or a temporary file of another user's is neither read nor removed") {
  auto b = sample();
  TempDir dir;
  auto d = cache::Folder::open(dir.path);
  REQUIRE(d);
  const cache::Key key{1, 2, 3, 4};
  // Not ours by name: never removed, whatever their age.
  const std::string notes = dir.path + "/notes.txt", odd = dir.path + "/graph-0.cwg.tmp-1-1",
                    link = dir.path + "/" + cache::graph_entry_name(cache::Key{5, 5, 5, 5}) +
                           ".tmp-9-9";
  write_all(notes, "n");
  write_all(odd, "o");
  const std::string kept_outside = dir.path + "/outside";
  write_all(kept_outside, "x");
  fs::create_symlink(kept_outside, link);
  // Ours by name, old: removed.
  const std::string ours =
      dir.path + "/" + cache::graph_entry_name(cache::Key{6, 6, 6, 6}) + ".tmp-1-abc";
  write_all(ours, "t");
  for (const auto& p : {notes, odd, ours}) age(p, std::chrono::hours(48));
  std::string foreign;
  if (is_root()) {
    // Of another user's, old, with our name: not ours to remove, nor an entry to read.
    foreign = dir.path + "/" + cache::graph_entry_name(cache::Key{8, 8, 8, 8}) + ".tmp-2-2";
    write_all(foreign, "f");
    age(foreign, std::chrono::hours(48));
    REQUIRE(chown(foreign.c_str(), kOther, kOther) == 0);
    REQUIRE(cache::save_graph(*d, key, b.result));
    const std::string entry = dir.path + "/" + cache::graph_entry_name(key);
    REQUIRE(chown(entry.c_str(), kOther, kOther) == 0);
    std::string why;
    CHECK_FALSE(cache::load_graph(*d, key, b.trace, b.rules, &why));
    CHECK(why == "belongs to user 65534, not to this one (0)");
    CHECK_FALSE(d->remove_file(cache::graph_entry_name(key)));
    CHECK(fs::exists(entry));
  } else {
    MESSAGE("another user's files: skipped (needs root)");
  }
  REQUIRE(cache::save_graph(*d, cache::Key{1, 2, 3, 9}, b.result));
  CHECK(fs::exists(notes));
  CHECK(fs::exists(odd));
  CHECK(fs::is_symlink(link));
  CHECK(fs::exists(kept_outside));
  CHECK_FALSE(fs::exists(ours));
  if (!foreign.empty()) CHECK(fs::exists(foreign));
  CHECK_FALSE(d->remove_file("notes.txt"));
  CHECK_FALSE(d->remove_file(fs::path(link).filename().string()));
  CHECK(fs::exists(notes));
}

TEST_CASE("an entry is written out only when it is this user's regular file, and large") {
  TempDir dir;
  auto d = cache::Folder::open(dir.path);
  REQUIRE(d);
  const std::string big = std::string(cache::kTraceArraysName);
  write_all(dir.path + "/" + big, std::string(1 << 16, 'x'));
  CHECK(d->write_out(big, 1 << 16));
  CHECK_FALSE(d->write_out(big, (1 << 16) + 1));  // smaller than asked: left to the kernel
  CHECK_FALSE(d->write_out(std::string(cache::kThreadIndexName), 0));  // none there
  // A link where an entry would be is not followed, a FIFO not waited on.
  const std::string outside = dir.path + "/outside";
  write_all(outside, "x");
  fs::create_symlink(outside, dir.path + "/" + std::string(cache::kCutMatchesName));
  CHECK_FALSE(d->write_out(std::string(cache::kCutMatchesName), 0));
  REQUIRE(mkfifo((dir.path + "/" + std::string(cache::kEventNamesName)).c_str(), 0600) == 0);
  CHECK_FALSE(d->write_out(std::string(cache::kEventNamesName), 0));
  CHECK_FALSE(d->write_out("../outside", 0));
  if (is_root()) {
    REQUIRE(chown((dir.path + "/" + big).c_str(), kOther, kOther) == 0);
    CHECK_FALSE(d->write_out(big, 0));
  } else {
    MESSAGE("another user's file: skipped (needs root)");
  }
}

TEST_CASE("the cache's own names") {
  CHECK(cache::is_entry_name(cache::graph_entry_name(cache::Key{1, 2, 3, 4})));
  CHECK(cache::is_entry_name(cache::base_entry_name(cache::Key{1, 2, 3, 4})));
  CHECK(
      cache::is_entry_name(cache::hang_entry_name(cache::Key{1, 2, 3, 4}, cache::Key{1, 2, 3, 5})));
  CHECK(cache::is_entry_name("trace.cwa"));
  CHECK(cache::is_entry_name("threads.cwa"));
  CHECK(cache::is_entry_name("names.cwa"));
  for (const char* name : {"graph-1.cwg", "graph-0123456789abcdef.cwg.x", "../trace.cwa",
                           "graph-0123456789ABCDEF.cwg", "hang-0123456789abcdef.cwh", "x.cwa", ""})
    CHECK_MESSAGE(!cache::is_entry_name(name), name);
  CHECK(cache::is_temporary_name("trace.cwa.tmp-123-abc"));
  CHECK_FALSE(cache::is_temporary_name("trace.cwa.tmp-x-abc"));
  CHECK_FALSE(cache::is_temporary_name("notes.tmp-1-1"));
  CHECK(cache::is_trace_folder_name("0123456789abcdef"));
  CHECK_FALSE(cache::is_trace_folder_name(".."));
  CHECK(cache::parse_size("1024") == 1024);
  CHECK(cache::parse_size("2G") == uint64_t{2} << 30);
  CHECK(cache::parse_size("512MiB") == uint64_t{512} << 20);
  CHECK_FALSE(cache::parse_size("2X"));
  CHECK_FALSE(cache::parse_size(""));
  CHECK_FALSE(cache::parse_size("99999999999999999999"));
  CHECK_FALSE(cache::parse_size("99999999999T"));
}

TEST_CASE("hang entries beyond the limit are evicted least recently used first") {
  const auto b = sample();
  TempDir dir;
  auto d = cache::Folder::open(dir.path);
  REQUIRE(d);
  const cache::Key graph{9, 1, 2, 3};
  engine::FoundHang none;
  none.no_hang = true;
  std::vector<engine::SymptomRequest> requests;
  for (int i = 0; i < 40; ++i) {
    engine::SymptomRequest r;
    r.min_hang_ns = 1000 + i;  // 40 `--min-hang` values
    requests.push_back(r);
    REQUIRE(cache::save_hang(*d, graph, r, none));
    usleep(11000);  // distinct modification times (the file clock ticks every few ms)
    // The first is used again and again: it stays.
    if (i > 0) REQUIRE(cache::load_hang(*d, graph, requests[0], b.trace, b.graph()));
    usleep(11000);
  }
  size_t hangs = 0;
  for (auto& e : fs::directory_iterator(dir.path)) hangs += e.path().extension() == ".cwh";
  CHECK(hangs == cache::kHangEntries);
  CHECK(cache::load_hang(*d, graph, requests[0], b.trace, b.graph()));
  CHECK(cache::load_hang(*d, graph, requests.back(), b.trace, b.graph()));
  CHECK_FALSE(cache::load_hang(*d, graph, requests[1], b.trace, b.graph()));
}

TEST_CASE("the user's cache folder stays under its cap, least recently used entries first") {
  TempDir dir;
  const Env xdg("XDG_CACHE_HOME", dir.path + "/xdg");
  // Traces whose folder cannot hold their cache folder (here: a file has its name).
  std::vector<cache::Folder> folders;
  for (int i = 0; i < 3; ++i) {
    const std::string trace = fmt::format("{}/t{}.cwt", dir.path, i);
    write_all(trace, "x");
    write_all(trace + ".cwcache", "");
    auto f = cache::cache_dir(trace);
    REQUIRE(f);
    REQUIRE(f->pool());
    folders.push_back(*f);
  }
  const std::string pool = dir.path + "/xdg/causeway";
  // A file of someone else's making in the pool, and one in a trace's folder: never
  // counted, never removed.
  write_all(pool + "/README", std::string(5000, 'r'));
  write_all(folders[0].path() + "/notes", std::string(5000, 'n'));
  const Env cap("CAUSEWAY_CACHE_MAX", "10K");
  const cache::Key key{1, 2, 3, 4};
  const std::string kb(2000, 'x');  // 2064 bytes with the header
  auto save = [&](size_t folder, uint64_t n) {
    REQUIRE(cache::write_entry(folders[folder], cache::base_entry_name(cache::Key{n, 0, 0, 0}),
                               cache::EntryKind::Base, key, kb));
    usleep(11000);
  };
  auto total = [&] {
    uint64_t sum = 0;
    for (const auto& u : cache::pool_usage(*cache::user_cache_folder(false))) sum += u.bytes;
    return sum;
  };
  save(0, 1);
  save(1, 2);
  save(2, 3);
  save(0, 4);
  CHECK(total() == 4 * 2064);
  // The oldest is used: the next oldest goes first.
  REQUIRE(cache::read_entry(folders[0], cache::base_entry_name(cache::Key{1, 0, 0, 0}),
                            cache::EntryKind::Base, key));
  usleep(11000);
  save(1, 5);  // 5 × 2064 > 10240: one goes
  CHECK(total() <= 10240);
  CHECK(fs::exists(folders[0].path() + "/" + cache::base_entry_name(cache::Key{1, 0, 0, 0})));
  CHECK_FALSE(fs::exists(folders[1].path() + "/" + cache::base_entry_name(cache::Key{2, 0, 0, 0})));
  save(2, 6);
  save(2, 7);
  CHECK(total() <= 10240);
  CHECK_FALSE(fs::exists(folders[2].path() + "/" + cache::base_entry_name(cache::Key{3, 0, 0, 0})));
  // One entry larger than the cap: kept (it was just written), the others go, and the
  // folders emptied with them.
  REQUIRE(cache::write_entry(folders[0], cache::base_entry_name(cache::Key{8, 0, 0, 0}),
                             cache::EntryKind::Base, key, std::string(20000, 'y')));
  CHECK(fs::exists(folders[0].path() + "/" + cache::base_entry_name(cache::Key{8, 0, 0, 0})));
  const auto usage = cache::pool_usage(*cache::user_cache_folder(false));
  REQUIRE(usage.size() == 1);
  CHECK(usage[0].entries == 1);
  CHECK(fs::exists(pool + "/README"));
  CHECK(fs::exists(folders[0].path() + "/notes"));
  CHECK_FALSE(fs::exists(folders[1].path()));
  CHECK_FALSE(fs::exists(folders[2].path()));
}

TEST_CASE("cleaning a folder removes its entries by age, and nothing else") {
  TempDir dir;
  auto d = cache::Folder::open(dir.path);
  REQUIRE(d);
  const cache::Key key{1, 2, 3, 4};
  REQUIRE(cache::write_entry(*d, "trace.cwa", cache::EntryKind::Base, key, "old"));
  REQUIRE(cache::write_entry(*d, "threads.cwa", cache::EntryKind::Base, key, "new"));
  age(dir.path + "/trace.cwa", std::chrono::hours(24 * 10));
  write_all(dir.path + "/mine.txt", "keep");
  age(dir.path + "/mine.txt", std::chrono::hours(24 * 10));
  const int64_t week_ago =
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          (std::chrono::system_clock::now() - std::chrono::hours(24 * 7)).time_since_epoch())
          .count();
  auto removed = cache::clean_folder(*d, week_ago);
  CHECK(removed.entries == 1);
  CHECK(removed.bytes == cache::kHeaderSize + 3);
  CHECK_FALSE(fs::exists(dir.path + "/trace.cwa"));
  CHECK(fs::exists(dir.path + "/threads.cwa"));
  removed = cache::clean_folder(*d, INT64_MAX);
  CHECK(removed.entries == 1);
  CHECK(fs::exists(dir.path + "/mine.txt"));
  CHECK(cache::folder_usage(*d).entries == 0);
}
