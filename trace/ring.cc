#include "trace/ring.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <deque>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_map>

namespace cw {

namespace {

constexpr std::string_view kFilePrefix = "ring-";
constexpr std::string_view kFileSuffix = ".cwt";
constexpr size_t kGenerationDigits = 10;
constexpr std::string_view kStateName = "ring.state";
constexpr std::string_view kStateHeader = "causeway-ring 1";
constexpr uint64_t kNoTs = std::numeric_limits<uint64_t>::max();

std::string errno_text(int err) {
  return std::strerror(err);
}

std::optional<uint64_t> parse_u64(std::string_view text) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

std::optional<uint64_t> parse_generation(std::string_view name) {
  if (name.size() != kFilePrefix.size() + kGenerationDigits + kFileSuffix.size() ||
      !name.starts_with(kFilePrefix) || !name.ends_with(kFileSuffix))
    return std::nullopt;
  std::string_view digits = name.substr(kFilePrefix.size(), kGenerationDigits);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return parse_u64(digits);
}

std::string join(const std::string& dir, std::string_view name) {
  return (std::filesystem::path(dir) / name).string();
}

// The generations of the ring files in `dir`, oldest first; errno on failure.
std::optional<std::vector<uint64_t>> list_generations(const std::string& dir, int& err) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) {
    err = errno;
    return std::nullopt;
  }
  std::vector<uint64_t> generations;
  while (dirent* entry = ::readdir(d))
    if (auto g = parse_generation(entry->d_name)) generations.push_back(*g);
  ::closedir(d);
  std::sort(generations.begin(), generations.end());
  return generations;
}

std::optional<uint64_t> file_size(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return static_cast<uint64_t>(st.st_size);
}

std::string format_bytes(uint64_t n) {
  constexpr std::pair<uint64_t, const char*> kUnits[] = {
      {1ull << 30, "GiB"}, {1ull << 20, "MiB"}, {1ull << 10, "KiB"}};
  for (auto [unit, name] : kUnits) {
    if (n < unit) continue;
    if (n % unit == 0) return fmt::format("{} {}", n / unit, name);
    return fmt::format("{:.1f} {}", static_cast<double>(n) / static_cast<double>(unit), name);
  }
  return fmt::format("{} bytes", n);
}

// What a ring file holds, so that dropping it can be counted without reading it.
struct FileSummary {
  uint64_t generation = 0;
  uint64_t bytes = 0;
  uint64_t events = 0;
  uint64_t oldest_ts = kNoTs, newest_ts = 0;

  void add_events(const Column<Event>& events, size_t from) {
    for (size_t i = from; i < events.size(); ++i) {
      oldest_ts = std::min(oldest_ts, events[i].ts);
      newest_ts = std::max(newest_ts, events[i].ts);
    }
    if (from < events.size()) this->events += events.size() - from;
  }
};

// The ring's persisted state (ring.state): what was dropped, which nothing in the
// remaining files can tell, and summaries of the closed files so a restarted writer need
// not read them.
struct PersistedState {
  uint64_t max_bytes = 0;
  uint64_t files = 0;
  uint64_t dropped_events = 0;
  uint64_t dropped_files = 0;
  uint64_t dropped_newest_ts = 0;
  std::vector<FileSummary> closed;
};

std::string render_state(const PersistedState& s) {
  std::string text = fmt::format(
      "{}\nmax_bytes {}\nfiles {}\ndropped_events {}\ndropped_files {}\ndropped_newest_ts {}\n",
      kStateHeader, s.max_bytes, s.files, s.dropped_events, s.dropped_files, s.dropped_newest_ts);
  for (const FileSummary& f : s.closed)
    text += fmt::format("closed {} bytes {} events {} oldest_ts {} newest_ts {}\n", f.generation,
                        f.bytes, f.events, f.events ? f.oldest_ts : 0, f.newest_ts);
  return text;
}

// Parses ring.state; on failure `error` says which line and why.
std::optional<PersistedState> parse_state(const std::string& text, std::string& error) {
  PersistedState s;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line_no == 1) {
      if (line != kStateHeader) {
        error = fmt::format("line 1: expected '{}'", kStateHeader);
        return std::nullopt;
      }
      continue;
    }
    std::vector<std::string> words;
    std::istringstream ws(line);
    for (std::string w; ws >> w;) words.push_back(w);
    if (words.empty()) continue;
    std::vector<uint64_t> numbers;
    for (size_t i = 1; i < words.size(); ++i) {
      // "closed" lines alternate names and numbers after the generation.
      if (words[0] == "closed" && i % 2 == 0) continue;
      auto v = parse_u64(words[i]);
      if (!v) {
        error = fmt::format("line {}: '{}' is not a number", line_no, words[i]);
        return std::nullopt;
      }
      numbers.push_back(*v);
    }
    const std::map<std::string_view, uint64_t*> scalars = {
        {"max_bytes", &s.max_bytes},
        {"files", &s.files},
        {"dropped_events", &s.dropped_events},
        {"dropped_files", &s.dropped_files},
        {"dropped_newest_ts", &s.dropped_newest_ts}};
    if (auto it = scalars.find(words[0]); it != scalars.end() && numbers.size() == 1) {
      *it->second = numbers[0];
    } else if (words[0] == "closed" && numbers.size() == 5) {
      s.closed.push_back(FileSummary{numbers[0], numbers[1], numbers[2],
                                     numbers[2] ? numbers[3] : kNoTs, numbers[4]});
    } else if (it != scalars.end() || words[0] == "closed") {
      error = fmt::format("line {}: malformed '{}'", line_no, words[0]);
      return std::nullopt;
    }
    // Other keys come from a newer causeway; they are not needed to read the ring.
  }
  if (line_no == 0) {
    error = "empty file";
    return std::nullopt;
  }
  return s;
}

std::optional<std::string> read_small_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

}  // namespace

bool is_ring_dir(const std::string& path) {
  int err = 0;
  const auto generations = list_generations(path, err);
  return generations && !generations->empty();
}

std::string ring_file_name(uint64_t generation) {
  return fmt::format("{}{:0{}}{}", kFilePrefix, generation, kGenerationDigits, kFileSuffix);
}

// ---- writing ----

struct RingWriter::State {
  RingOptions options;
  Schema schema;
  uint64_t slot_bytes = 0;
  int dir_fd = -1;                // held with an exclusive flock while writing
  std::deque<FileSummary> files;  // oldest first; back() is being written
  std::unique_ptr<TraceWriter> writer;
  uint64_t next_generation = 0;
  uint64_t appends_in_file = 0;
  uint64_t steady_append_bytes = 0;  // output of the last append that was not a file's first
  uint64_t events_written = 0, events_overwritten = 0;
  PersistedState persisted;  // the drop counts include earlier writers of this ring

  std::string path(uint64_t generation) const {
    return join(options.dir, ring_file_name(generation));
  }

  uint64_t total_bytes() const {
    uint64_t n = 0;
    for (const FileSummary& f : files) n += f.bytes;
    return n;
  }

  uint64_t current_size() const {
    std::string p = path(files.back().generation);
    auto size = file_size(p);
    if (!size) throw std::runtime_error(fmt::format("{}: cannot stat: {}", p, errno_text(errno)));
    return *size;
  }

  void drop_oldest() {
    FileSummary f = files.front();
    std::string p = path(f.generation);
    if (::unlink(p.c_str()) != 0 && errno != ENOENT)
      throw std::runtime_error(fmt::format("{}: cannot delete: {}", p, errno_text(errno)));
    files.pop_front();
    events_overwritten += f.events;
    persisted.dropped_events += f.events;
    persisted.dropped_files += 1;
    if (f.events) persisted.dropped_newest_ts = std::max(persisted.dropped_newest_ts, f.newest_ts);
  }

  // Deletes the oldest files down to files - 1, then starts the next generation. Deleting
  // first keeps the bound, and a crash in between leaves a valid (shorter) ring.
  void open_next() {
    while (!files.empty() && files.size() >= options.files) drop_oldest();
    uint64_t generation = next_generation++;
    writer = std::make_unique<TraceWriter>(path(generation), schema, options.writer);
    files.push_back(FileSummary{generation});
    files.back().bytes = current_size();
    appends_in_file = 0;
    save_state();
  }

  void finish_current() {
    writer->close();
    writer.reset();
    files.back().bytes = current_size();
  }

  void save_state() {
    persisted.max_bytes = options.max_bytes;
    persisted.files = options.files;
    persisted.closed.assign(files.begin(), files.end());
    if (writer) persisted.closed.pop_back();  // still growing: its summary is not final
    std::string text = render_state(persisted);
    std::string final_path = join(options.dir, kStateName);
    std::string temp_path = final_path + ".tmp";
    int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
      throw std::runtime_error(fmt::format("{}: cannot create: {}", temp_path, errno_text(errno)));
    const char* p = text.data();
    size_t left = text.size();
    while (left > 0) {
      ssize_t w = ::write(fd, p, left);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        int err = errno;
        ::close(fd);
        throw std::runtime_error(fmt::format("{}: cannot write: {}", temp_path, errno_text(err)));
      }
      p += w;
      left -= static_cast<size_t>(w);
    }
    if (::close(fd) != 0)
      throw std::runtime_error(fmt::format("{}: cannot write: {}", temp_path, errno_text(errno)));
    // Renaming over the old state means a crash leaves either the old or the new one.
    if (::rename(temp_path.c_str(), final_path.c_str()) != 0)
      throw std::runtime_error(
          fmt::format("{}: cannot rename to {}: {}", temp_path, final_path, errno_text(errno)));
  }

  void create_dir() {
    const std::string& dir = options.dir;
    std::filesystem::path parent = std::filesystem::path(dir).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (::mkdir(dir.c_str(), 0700) == 0) {
      // The umask may have taken bits; the ring holds other users' data, so exactly 0700.
      if (::chmod(dir.c_str(), 0700) != 0)
        throw std::runtime_error(fmt::format("{}: cannot chmod: {}", dir, errno_text(errno)));
    } else if (errno != EEXIST) {
      throw std::runtime_error(
          fmt::format("{}: cannot create the ring directory: {}", dir, errno_text(errno)));
    }
    dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0)
      throw std::runtime_error(
          fmt::format("{}: cannot open the ring directory: {}", dir, errno_text(errno)));
    if (::flock(dir_fd, LOCK_EX | LOCK_NB) != 0) {
      int err = errno;
      ::close(dir_fd);
      dir_fd = -1;
      if (err == EWOULDBLOCK)
        throw std::runtime_error(
            fmt::format("{}: another causeway recorder is writing this ring", dir));
      throw std::runtime_error(
          fmt::format("{}: cannot lock the ring directory: {}", dir, errno_text(err)));
    }
  }

  // A ring left by an earlier writer (a restart, a crash) is continued: its files stay
  // until their turn to be dropped, and its drop counts carry on.
  void adopt_existing() {
    int err = 0;
    auto generations = list_generations(options.dir, err);
    if (!generations)
      throw std::runtime_error(
          fmt::format("{}: cannot read the ring directory: {}", options.dir, errno_text(err)));
    std::string error;
    std::optional<PersistedState> old;
    if (auto text = read_small_file(join(options.dir, kStateName))) old = parse_state(*text, error);
    if (old) {
      persisted.dropped_events = old->dropped_events;
      persisted.dropped_files = old->dropped_files;
      persisted.dropped_newest_ts = old->dropped_newest_ts;
    }
    for (uint64_t generation : *generations) {
      std::string p = path(generation);
      FileSummary summary{generation};
      summary.bytes = file_size(p).value_or(0);
      const FileSummary* known = nullptr;
      if (old)
        for (const FileSummary& f : old->closed)
          if (f.generation == generation && f.bytes == summary.bytes) known = &f;
      if (known) {
        summary = *known;
      } else {
        // Not summarised (the file being written when the writer stopped): read it.
        Trace trace;
        try {
          read_trace(p, trace);
          summary.add_events(trace.events, 0);
        } catch (const TraceFormatError&) {
          // Unreadable: it holds no events anyone can get back, so none are counted.
        }
      }
      files.push_back(summary);
      next_generation = generation + 1;
    }
  }
};

RingWriter::RingWriter(RingOptions options, const Schema& schema) : state_(new State) {
  if (options.max_bytes == 0)
    throw std::invalid_argument(fmt::format("{}: ring size must be above 0 bytes", options.dir));
  if (options.files == 0)
    throw std::invalid_argument(fmt::format("{}: a ring needs at least 1 file", options.dir));
  State& s = *state_;
  s.options = std::move(options);
  s.schema = schema;
  s.slot_bytes = std::max<uint64_t>(1, s.options.max_bytes / s.options.files);
  try {
    s.create_dir();
    s.adopt_existing();
    s.open_next();
  } catch (...) {
    if (s.dir_fd >= 0) ::close(s.dir_fd);
    throw;
  }
}

RingWriter::~RingWriter() {
  try {
    close();
  } catch (const std::exception&) {
    // A destructor cannot report; callers who care call close() themselves.
  }
  if (state_->dir_fd >= 0) ::close(state_->dir_fd);
}

void RingWriter::append(const Trace& trace, size_t events_from) {
  State& s = *state_;
  if (!s.writer) throw std::runtime_error(fmt::format("{}: ring already closed", s.options.dir));
  FileSummary* current = &s.files.back();
  // Close a file before it would pass its slot, judging by the last append's size (the
  // first append of a file also carries all the metadata, so it is no guide).
  if (current->events > 0 &&
      (current->bytes >= s.slot_bytes || current->bytes + s.steady_append_bytes > s.slot_bytes)) {
    s.finish_current();
    s.open_next();
    current = &s.files.back();
  }
  uint64_t before = current->bytes;
  s.writer->append(trace, events_from);
  current->bytes = s.current_size();
  // A first append also carries the metadata, so it bounds the events' share from above:
  // enough to shrink an estimate left large by a burst, so quiet appends share a file.
  if (s.appends_in_file++ > 0)
    s.steady_append_bytes = current->bytes - before;
  else
    s.steady_append_bytes = std::min(s.steady_append_bytes, current->bytes - before);
  current->add_events(trace.events, events_from);
  if (events_from < trace.events.size()) s.events_written += trace.events.size() - events_from;
  // The hard bound: an append larger than predicted is paid for with the oldest files.
  bool dropped = false;
  while (s.files.size() > 1 && s.total_bytes() > s.options.max_bytes) {
    s.drop_oldest();
    dropped = true;
  }
  if (dropped) s.save_state();
}

void RingWriter::close() {
  State& s = *state_;
  if (!s.writer) return;
  s.finish_current();
  s.save_state();
  if (s.dir_fd >= 0) {
    ::close(s.dir_fd);  // releases the lock
    s.dir_fd = -1;
  }
}

RingStats RingWriter::stats() const {
  const State& s = *state_;
  RingStats stats;
  stats.files = static_cast<uint32_t>(s.files.size());
  stats.bytes = s.total_bytes();
  stats.events_written = s.events_written;
  stats.events_overwritten = s.events_overwritten;
  uint64_t oldest = kNoTs;
  for (const FileSummary& f : s.files) {
    if (!f.events) continue;
    oldest = std::min(oldest, f.oldest_ts);
    stats.newest_ts = std::max(stats.newest_ts, f.newest_ts);
  }
  stats.oldest_ts = oldest == kNoTs ? 0 : oldest;
  return stats;
}

// ---- reading ----

namespace {

// Merges the traces of a ring's files into one. Every file repeats the metadata of the
// files before it, so strings, stacks, lost records and JIT symbols are kept once, and
// threads, processes and maps are keyed by identity with later files winning.
class RingMerger {
 public:
  explicit RingMerger(Trace& out) : out_(out) {}

  void merge(const Trace& t) {
    map_kinds(t);
    std::vector<StrId> strings(t.strings.size());
    bool strings_identity = true;
    for (StrId i = 0; i < t.strings.size(); ++i) {
      strings[i] = out_.strings.intern(t.strings.get(i));
      strings_identity &= strings[i] == i;
    }
    std::vector<StackId> stacks(t.stacks.size(), 0);
    bool stacks_identity = true;
    for (StackId i = 1; i < t.stacks.size(); ++i) {
      stacks[i] = merge_stack(t.stacks[i], strings);
      stacks_identity &= stacks[i] == i;
    }
    for (const ProcessInfo& p : t.processes) {
      ProcessInfo q = p;
      q.comm = strings[p.comm];
      q.exe = strings[p.exe];
      upsert(process_at_, q.pid, out_.processes, q);
    }
    for (const ThreadInfo& th : t.threads) {
      ThreadInfo u = th;
      u.comm = strings[th.comm];
      upsert(thread_at_, u.tid, out_.threads, u);
    }
    for (const MapRecord& m : t.maps) {
      MapRecord n = m;
      n.path = strings[m.path];
      n.build_id = strings[m.build_id];
      upsert(map_at_, std::tuple{n.pid, n.ts, n.start}, out_.maps, n);
    }
    for (const LostRecord& l : t.lost)
      if (lost_seen_.emplace(l.cpu, l.ts, l.count).second) out_.lost.push_back(l);
    // Every file repeats the losses known when it was opened: each is kept once.
    for (const LossRecord& l : t.losses)
      if (losses_seen_.emplace(static_cast<uint32_t>(l.kind), l.ts, l.count).second)
        out_.losses.push_back(l);
    // ... and the JIT symbols read before it: each is kept once, in the order first read.
    for (const JitSymbol& j : t.jit_symbols) {
      JitSymbol k = j;
      k.name = strings[j.name];
      if (jit_seen_.emplace(k.pid, k.ts, k.start, k.size, k.name).second)
        out_.jit_symbols.push_back(k);
    }
    if (strings_identity && stacks_identity)
      copy_events(t);
    else
      remap_events(t, strings, stacks);
  }

  void finish() {
    out_.sort_maps();
    auto by_time = [](const Event& a, const Event& b) { return a.ts < b.ts; };
    if (!std::is_sorted(out_.events.begin(), out_.events.end(), by_time)) out_.sort_events();
    out_.rebuild_indexes();
  }

 private:
  // Adds `value` under `key`, or replaces the entry a previous file gave that key.
  template <typename Index, typename Key, typename T>
  static void upsert(Index& index, const Key& key, std::vector<T>& table, const T& value) {
    auto [it, added] = index.emplace(key, table.size());
    if (added)
      table.push_back(value);
    else
      table[it->second] = value;
  }

  // Each file's trace starts from the reader's schema, so known kinds keep their ids; the
  // kinds it added (unknown to this causeway) are added here in the same order.
  void map_kinds(const Trace& t) {
    for (size_t k = out_.schema.size(); k < t.schema.size(); ++k)
      out_.schema.add(t.schema.kind(static_cast<KindId>(k)));
  }

  StackId merge_stack(const Stack& stack, const std::vector<StrId>& strings) {
    Stack mapped = stack;
    for (StrId& sym : mapped.symbols) sym = strings[sym];
    std::string key(reinterpret_cast<const char*>(mapped.ips.data()), mapped.ips.size() * 8);
    key.push_back('|');
    key.append(reinterpret_cast<const char*>(mapped.symbols.data()), mapped.symbols.size() * 4);
    auto it = stack_at_.find(key);
    if (it != stack_at_.end()) return it->second;
    StackId id = out_.add_stack(std::move(mapped));
    stack_at_.emplace(std::move(key), id);
    return id;
  }

  void copy_events(const Trace& t) {
    const auto base = static_cast<uint32_t>(out_.values.size());
    if (out_.values.size() + t.values.size() > 0xffffffffull)
      throw std::length_error("ring trace value array full");
    out_.values.insert(out_.values.end(), t.values.begin(), t.values.end());
    out_.events.reserve(out_.events.size() + t.events.size());
    for (Event e : t.events) {
      e.values += base;
      out_.events.push_back(e);
    }
  }

  void remap_events(const Trace& t, const std::vector<StrId>& strings,
                    const std::vector<StackId>& stacks) {
    out_.events.reserve(out_.events.size() + t.events.size());
    out_.values.reserve(out_.values.size() + t.values.size());
    for (const Event& e : t.events) {
      const KindDef& kind = t.schema.kind(e.kind);
      const Event& added = out_.add_event(e.ts, e.tid, e.kind, e.cpu, stacks[e.stack]);
      for (size_t f = 0; f < kind.fields.size(); ++f) {
        uint64_t v = t.values[e.values + f];
        out_.value_ref(added, static_cast<int>(f)) =
            kind.fields[f].type == FieldType::Str ? strings[v] : v;
      }
    }
  }

  Trace& out_;
  std::unordered_map<Pid, size_t> process_at_;
  std::unordered_map<Tid, size_t> thread_at_;
  std::map<std::tuple<Pid, uint64_t, uint64_t>, size_t> map_at_;
  std::set<std::tuple<uint16_t, uint64_t, uint64_t>> lost_seen_;
  std::set<std::tuple<uint32_t, uint64_t, uint64_t>> losses_seen_;
  std::set<std::tuple<Pid, uint64_t, uint64_t, uint64_t, StrId>> jit_seen_;
  std::unordered_map<std::string, StackId> stack_at_;
};

void note_once(ReadReport& report, std::string text) {
  if (std::find(report.notes.begin(), report.notes.end(), text) == report.notes.end())
    report.notes.push_back(std::move(text));
}

}  // namespace

ReadReport read_ring(const std::string& dir, Trace& out) {
  int err = 0;
  auto generations = list_generations(dir, err);
  if (!generations)
    throw TraceFormatError(
        fmt::format("{}: cannot read the ring directory: {}", dir, errno_text(err)));
  if (generations->empty())
    throw TraceFormatError(
        fmt::format("{}: not a ring: no ring files (ring-<generation>.cwt) in the directory", dir));

  Schema schema = std::move(out.schema);
  out = Trace{};
  out.schema = std::move(schema);
  ReadReport report;
  RingMerger merger(out);
  for (uint64_t generation : *generations) {
    std::string path = join(dir, ring_file_name(generation));
    Trace file_trace;
    file_trace.schema = out.schema;
    ReadReport file_report;
    try {
      file_report = read_trace(path, file_trace);
    } catch (const TraceFormatError& e) {
      // read_trace's message names the file already.
      report.skipped.push_back(SkippedRange{0, file_size(path).value_or(0), e.what()});
      continue;
    }
    report.major = std::max(report.major, file_report.major);
    report.minor = std::max(report.minor, file_report.minor);
    report.chunks_read += file_report.chunks_read;
    report.events_read += file_report.events_read;
    for (SkippedRange& r : file_report.skipped) {
      r.reason = fmt::format("{}: {}", path, r.reason);
      report.skipped.push_back(std::move(r));
    }
    for (const std::string& n : file_report.notes)
      note_once(report, fmt::format("{}: {}", path, n));
    merger.merge(file_trace);
  }
  merger.finish();

  std::string state_path = join(dir, kStateName);
  if (auto text = read_small_file(state_path)) {
    std::string error;
    if (auto state = parse_state(*text, error)) {
      if (state->dropped_events > 0)
        report.notes.push_back(fmt::format(
            "ring dropped {} older events (up to {:.3f} s) in {} files to stay within {}",
            state->dropped_events, static_cast<double>(state->dropped_newest_ts) / 1e9,
            state->dropped_files, format_bytes(state->max_bytes)));
    } else {
      report.notes.push_back(
          fmt::format("{}: {}; how many events the ring dropped is not known", state_path, error));
    }
  }
  return report;
}

}  // namespace cw
