// cw-gen-trace: writes a deterministic synthetic trace shaped like the Argus paper's (§2.3)
// Chromium session (19 M events, 126 processes, 679 threads, ~0.8 M IPC messages), for
// benchmarks. Events stream to the file in chunks; memory stays small at any size.
#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "bench/event_queue.h"
#include "bench/session_model.h"
#include "trace/binary_format.h"
#include "trace/text_format.h"

namespace {

// Trace files hold command lines: 0600, like the recorder's.
void write_private_file(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot create " + path);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) {
      ::close(fd);
      throw std::runtime_error("cannot write " + path);
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) throw std::runtime_error("cannot write " + path);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Writes a synthetic trace shaped like a five-minute Chromium desktop session (the Argus "
      "paper, §2.3): event loops, IPC, a message bus, mutex contention, timers, interrupts, "
      "forks.",
      "cw-gen-trace"};
  std::string out;
  uint64_t events = 19'000'000;
  uint64_t seed = 1;
  bool text = false;
  app.add_option("-o,--output", out, "trace file to write")->required();
  app.add_option("--events", events,
                 "number of events; the session's length and message count scale with it")
      ->check(CLI::Range(uint64_t{1000}, uint64_t{1} << 32));
  app.add_option("--seed", seed, "random seed: the same seed writes the same trace");
  app.add_flag("--text", text, "write the text form (holds the whole trace in memory)");
  CLI11_PARSE(app, argc, argv);

  try {
    const auto started = std::chrono::steady_clock::now();
    cw::Trace trace;  // the tables, and the events not yet written
    cw::bench::EventQueue queue;
    cw::bench::SessionShape shape;
    shape.events = events;
    shape.seed = seed;
    cw::bench::SessionModel model(shape, trace, queue);
    std::unique_ptr<cw::TraceWriter> writer;
    if (!text) writer = std::make_unique<cw::TraceWriter>(out);

    constexpr size_t kChunkEvents = size_t{1} << 16;
    uint64_t written = 0;
    uint64_t first_ts = 0, last_ts = 0;
    while (written < events) {
      const size_t before = trace.events.size();
      written += queue.drain_before(model.next_episode_time(), trace, events - written);
      if (trace.events.size() > before) {
        if (first_ts == 0) first_ts = trace.events[before].ts;
        last_ts = trace.events.back().ts;
      }
      if (writer && trace.events.size() >= kChunkEvents) {
        writer->append(trace);
        trace.events.clear();
        trace.values.clear();
      }
      if (written < events) model.run_next_episode();
    }
    if (writer) {
      writer->append(trace);
      writer->close();
    } else {
      write_private_file(out, cw::write_text_trace(trace));
    }

    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const auto& pop = model.population();
    std::fprintf(stderr,
                 "cw-gen-trace: %s: %llu events, %zu processes, %zu threads, %llu messages, "
                 "%.1f s of session, %llu episodes, written in %.1f s\n",
                 out.c_str(), static_cast<unsigned long long>(written), pop.processes.size(),
                 pop.threads.size(), static_cast<unsigned long long>(model.messages_sent()),
                 static_cast<double>(last_ts - first_ts) / 1e9,
                 static_cast<unsigned long long>(model.episodes()), seconds);
  } catch (const std::exception& e) {
    std::cerr << "cw-gen-trace: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
