// cw-bench-cache TRACE... [-n N] [--level L]: what the trace arrays entry of the derived
// cache (docs/cache.md, "Size") costs on disk and saves in time, against the two ways of
// doing without it (bench/README.md). For each binary trace, side by side, N rounds after
// an untimed one (every file in the page cache):
//
//   decode  read_trace: what a run with no entry pays for the events (the trace's chunks
//           decompressed and parsed)
//   map     the entry as causeway keeps it (uncompressed, page aligned): load_trace_arrays,
//           read_trace_without_events, check_trace_arrays, as a warm run does
//   inflate the same arrays kept zstd-compressed at level L in blocks of 4 MiB, decompressed
//           on load on every CPU into fresh memory, then the same small read and check
//
// and what each entry weighs, and what saving it costs (one thread, as the forked save
// does). The compressed form is this tool's own (a measurement, not a format causeway
// reads). Prints a Markdown table of medians; never a timed unit test.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/measure.h"
#include "engine/cache/cache.h"
#include "trace/binary_format.h"

namespace {

using namespace cw;
using namespace cw::bench;

struct Timing {
  std::vector<double> wall, cpu;
};

template <typename F>
void timed(Timing& t, F&& work) {
  const Stamp start;
  work();
  const Elapsed e = since(start);
  t.wall.push_back(e.wall);
  t.cpu.push_back(e.cpu);
}

// The compressed form: a table of blocks (where each array's block starts, raw and
// compressed), then the blocks; the XXH3-64 of all that first, checked on load as causeway
// checks its entries.
constexpr uint64_t kBlock = 4u << 20;

struct Block {
  uint64_t raw_offset, raw_size, offset, size;  // offsets: in the array; in the file
  uint32_t array;                               // 0 events, 1 values
  uint32_t pad;
};

struct Compressed {
  uint64_t checksum, events, values, blocks;
};

uint64_t save_compressed(const std::string& path, const Column<Event>& events,
                         const Column<uint64_t>& values, int level) {
  const char* arrays[2] = {reinterpret_cast<const char*>(events.data()),
                           reinterpret_cast<const char*>(values.data())};
  const uint64_t sizes[2] = {events.size() * sizeof(Event), values.size() * sizeof(uint64_t)};
  std::vector<Block> table;
  for (uint32_t a = 0; a < 2; ++a)
    for (uint64_t at = 0; at < sizes[a]; at += kBlock)
      table.push_back({at, std::min(kBlock, sizes[a] - at), 0, 0, a, 0});
  std::string body;
  std::vector<char> out(ZSTD_compressBound(kBlock));
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  uint64_t at = sizeof(Compressed) + table.size() * sizeof(Block);
  for (Block& b : table) {
    const size_t n = ZSTD_compressCCtx(cctx, out.data(), out.size(), arrays[b.array] + b.raw_offset,
                                       b.raw_size, level);
    if (ZSTD_isError(n)) throw std::runtime_error(ZSTD_getErrorName(n));
    b.offset = at + body.size();
    b.size = n;
    body.append(out.data(), n);
  }
  ZSTD_freeCCtx(cctx);
  std::string rest(reinterpret_cast<const char*>(table.data()), table.size() * sizeof(Block));
  rest += body;
  Compressed head{0, events.size(), values.size(), table.size()};
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  XXH3_64bits_update(state, &head.events, sizeof head - sizeof head.checksum);
  XXH3_64bits_update(state, rest.data(), rest.size());
  head.checksum = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(reinterpret_cast<const char*>(&head), sizeof head);
  file.write(rest.data(), static_cast<std::streamsize>(rest.size()));
  file.close();
  if (!file) throw std::runtime_error("cannot write " + path);
  return sizeof head + rest.size();
}

// Fresh anonymous memory for `bytes`, huge pages where the kernel gives them (as the
// reader asks for its arrays), unmapped by the shared pointer.
std::shared_ptr<const void> fresh(uint64_t bytes, char** at) {
  const uint64_t size = std::max<uint64_t>(bytes, 1);
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  madvise(p, size, MADV_HUGEPAGE);
  *at = static_cast<char*>(p);
  return {p, [size](const void* q) { munmap(const_cast<void*>(q), size); }};
}

cache::TraceArrays load_compressed(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0) throw std::runtime_error("cannot open " + path);
  const auto size = static_cast<uint64_t>(st.st_size);
  void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  close(fd);
  if (p == MAP_FAILED) throw std::runtime_error("cannot map " + path);
  const std::unique_ptr<void, std::function<void(void*)>> unmap(
      p, [size](void* q) { munmap(q, size); });
  const auto* file = static_cast<const char*>(p);
  Compressed head;
  std::memcpy(&head, file, sizeof head);
  if (XXH3_64bits(file + sizeof head.checksum, size - sizeof head.checksum) != head.checksum)
    throw std::runtime_error("checksum mismatch");
  const auto* table = reinterpret_cast<const Block*>(file + sizeof head);
  char* arrays[2];
  auto keep_events = fresh(head.events * sizeof(Event), &arrays[0]);
  auto keep_values = fresh(head.values * sizeof(uint64_t), &arrays[1]);
  // Every CPU takes blocks in turn, as the trace reader's inflater does.
  std::atomic<uint64_t> next{0};
  std::atomic<bool> bad{false};
  auto work = [&] {
    ZSTD_DCtx* dctx = ZSTD_createDCtx();
    for (uint64_t i; (i = next++) < head.blocks;) {
      const Block& b = table[i];
      const size_t n = ZSTD_decompressDCtx(dctx, arrays[b.array] + b.raw_offset, b.raw_size,
                                           file + b.offset, b.size);
      if (ZSTD_isError(n) || n != b.raw_size) bad = true;
    }
    ZSTD_freeDCtx(dctx);
  };
  std::vector<std::thread> helpers;
  for (unsigned i = 1; i < std::max(1u, std::thread::hardware_concurrency()); ++i)
    helpers.emplace_back(work);
  work();
  for (auto& t : helpers) t.join();
  if (bad) throw std::runtime_error("a block does not decompress");
  cache::TraceArrays out;
  out.events = Column<Event>::view(keep_events, reinterpret_cast<Event*>(arrays[0]), head.events);
  out.values =
      Column<uint64_t>::view(keep_values, reinterpret_cast<uint64_t*>(arrays[1]), head.values);
  return out;
}

// What a warm run does beside the arrays: the trace's other chunks, then every event
// checked against them.
void read_small_and_check(const std::string& trace_path, cache::TraceArrays& arrays) {
  Trace small;
  auto report = cache::read_trace_without_events(trace_path, small);
  if (!report || !report->clean()) throw std::runtime_error("the small chunks do not read");
  if (arrays.strings == 0 && arrays.stacks == 0) {  // the compressed form keeps no counts
    arrays.strings = small.strings.size();
    arrays.stacks = small.stacks.size();
  }
  cache::check_trace_arrays(arrays, small);
}

struct Row {
  std::string trace;
  uint64_t bytes = 0, events = 0, values = 0, map_bytes = 0, zstd_bytes = 0;
  Timing decode, map, inflate, save_map, save_zstd;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"the trace arrays entry: size, save and load against decoding the trace"};
  std::vector<std::string> files;
  int repeats = 5, level = 1;
  app.add_option("TRACE", files, "binary traces")->required()->check(CLI::ExistingFile);
  app.add_option("-n,--repeats", repeats, "timed rounds")->check(CLI::PositiveNumber);
  app.add_option("--level", level, "zstd level of the compressed form (negative: faster)");
  CLI11_PARSE(app, argc, argv);

  char tmpl[] = "/tmp/cw-bench-cache-XXXXXX";
  if (!mkdtemp(tmpl)) return 1;
  const std::string work = tmpl;
  struct Remove {
    std::string path;
    ~Remove() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  } remove{work};

  std::vector<Row> rows(files.size());
  std::vector<cache::Key> keys(files.size());
  std::vector<std::optional<cache::Folder>> dirs(files.size());
  std::vector<std::string> paths(files.size());
  for (size_t f = 0; f < files.size(); ++f) {
    Row& row = rows[f];
    row.trace = files[f];
    row.bytes = std::filesystem::file_size(files[f]);
    Trace trace;
    ReadReport report = read_trace(files[f], trace);
    if (!report.clean()) {
      std::fprintf(stderr, "%s: damaged (%zu ranges skipped)\n", files[f].c_str(),
                   report.skipped.size());
      return 1;
    }
    row.events = trace.events.size();
    row.values = trace.values.size();
    const std::string& dir = paths[f] = work + "/" + std::to_string(f);
    std::filesystem::create_directory(dir);
    std::string why;
    dirs[f] = cache::Folder::open(dir, &why);
    if (!dirs[f]) {
      std::fprintf(stderr, "%s: %s\n", dir.c_str(), why.c_str());
      return 1;
    }
    keys[f] = cache::Key{*cache::trace_key(files[f]), 0, 0, cache::engine_key()};
    // Saving writes ~1 GB at 19 M events: three times is enough for a median.
    for (int round = 0; round < std::min(repeats, 3); ++round) {
      timed(row.save_map, [&] {
        if (!cache::save_trace_arrays(*dirs[f], keys[f], trace, report, &why))
          throw std::runtime_error(why);
      });
      timed(row.save_zstd, [&] {
        row.zstd_bytes = save_compressed(dir + "/trace.zst", trace.events, trace.values, level);
      });
    }
    row.map_bytes = std::filesystem::file_size(dir + "/" + std::string(cache::kTraceArraysName));
  }

  // Round after round, each file's three ways in turn: a change in the machine's load hits
  // them alike. Round 0 is not counted.
  for (int round = 0; round <= repeats; ++round) {
    for (size_t f = 0; f < files.size(); ++f) {
      Row& row = rows[f];
      Timing scratch;
      {
        Trace trace;
        timed(round ? row.decode : scratch, [&] { read_trace(files[f], trace); });
      }
      {
        cache::TraceArrays arrays;
        timed(round ? row.map : scratch, [&] {
          std::string why;
          auto loaded = cache::load_trace_arrays(*dirs[f], keys[f], &why);
          if (!loaded) throw std::runtime_error(why);
          arrays = std::move(*loaded);
          read_small_and_check(files[f], arrays);
        });
      }
      {
        cache::TraceArrays arrays;
        timed(round ? row.inflate : scratch, [&] {
          arrays = load_compressed(paths[f] + "/trace.zst");
          read_small_and_check(files[f], arrays);
        });
      }
    }
  }

  const auto mib = [](uint64_t b) { return static_cast<double>(b) / (1 << 20); };
  std::printf(
      "| trace | MiB | events | way | entry MiB | entry / trace | load wall s | load CPU s | "
      "save wall s | save CPU s |\n"
      "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const Row& r : rows) {
    const std::string name = std::filesystem::path(r.trace).filename();
    std::printf("| %s | %.1f | %ju | decode the trace | | | %.3f | %.3f | | |\n", name.c_str(),
                mib(r.bytes), static_cast<uintmax_t>(r.events), median(r.decode.wall),
                median(r.decode.cpu));
    std::printf("| | | | map (uncompressed) | %.1f | %.2f | %.3f | %.3f | %.3f | %.3f |\n",
                mib(r.map_bytes), static_cast<double>(r.map_bytes) / r.bytes, median(r.map.wall),
                median(r.map.cpu), median(r.save_map.wall), median(r.save_map.cpu));
    std::printf("| | | | inflate (zstd %d) | %.1f | %.2f | %.3f | %.3f | %.3f | %.3f |\n", level,
                mib(r.zstd_bytes), static_cast<double>(r.zstd_bytes) / r.bytes,
                median(r.inflate.wall), median(r.inflate.cpu), median(r.save_zstd.wall),
                median(r.save_zstd.cpu));
  }
  std::printf("\n%d rounds; values: ", repeats);
  for (const Row& r : rows)
    std::printf("%s %ju values (%.1f MiB of arrays); ",
                std::filesystem::path(r.trace).filename().c_str(), static_cast<uintmax_t>(r.values),
                mib(r.events * sizeof(Event) + r.values * sizeof(uint64_t)));
  std::printf("\n");
  return 0;
}
