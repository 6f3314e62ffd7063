#include "engine/fleet/batch.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include "cw_version.h"
#include "engine/session/answers.h"
#include "engine/session/session_error.h"
#include "engine/session/trace_session.h"

namespace cw::fleet {

namespace {

// What the session says while it works, kept with the trace's outcome rather than
// printed: a batch of a thousand traces would bury its own summary.
class KeepingReporter final : public session::Reporter {
 public:
  explicit KeepingReporter(std::vector<std::string>& lines) : lines_(lines) {}
  void message(const std::string& line) override { lines_.push_back(line); }

 private:
  std::vector<std::string>& lines_;
};

nlohmann::json outcome_json(const TraceOutcome& o) {
  nlohmann::json rows = nlohmann::json::array();
  for (const HangRow& r : o.rows) rows.push_back(row_json(r));
  return {{"index", o.index},
          {"rows", std::move(rows)},
          {"no_hang", o.no_hang},
          {"error", o.error},
          {"environment", o.environment_error},
          {"messages", o.messages}};
}

TraceOutcome outcome_from_json(const nlohmann::json& j) {
  TraceOutcome o;
  o.index = j.at("index").get<size_t>();
  for (const nlohmann::json& r : j.at("rows")) o.rows.push_back(row_from_json(r));
  o.no_hang = j.at("no_hang").get<std::string>();
  o.error = j.at("error").get<std::string>();
  o.environment_error = j.at("environment").get<bool>();
  o.messages = j.at("messages").get<std::vector<std::string>>();
  return o;
}

bool write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

struct Worker {
  pid_t pid = -1;
  int fd = -1;
  std::string pending;  // bytes read past the last whole line
};

}  // namespace

TraceOutcome diagnose_one(const std::string& trace, size_t index, const BatchConfig& config) {
  TraceOutcome out;
  out.index = index;
  try {
    KeepingReporter reporter(out.messages);
    session::SessionConfig sc;
    sc.trace_path = trace;
    sc.packs = config.packs;
    sc.no_stdlib = config.no_stdlib;
    sc.cache.off = !config.cache;
    sc.unnamed_frames_per_diagnosis = true;
    session::TraceSession s(sc, reporter);
    s.load_packs();
    std::string why;
    const std::optional<rules::HangSpec> spec = session::parse_hang(config.hang, &why);
    if (!spec) throw session::SessionError(session::SessionError::Kind::BadInput, "--hang: " + why);
    const Trace& t = s.trace();
    const engine::BuildResult& built = s.graph();
    const engine::ThreadEvents& events = s.thread_index();
    engine::DiagnoseOptions options;
    options.symptom = session::symptom_request(t, *spec, config.min_hang_s);
    engine::AutoAnswerer automatic;
    options.answerer = &automatic;
    // The symptoms: auto's choice, or its first candidates that stopped responding.
    std::vector<engine::SymptomRequest> symptoms{options.symptom};
    if (config.hangs > 1) {
      symptoms.clear();
      std::string why;
      for (const engine::HangCandidate& c :
           engine::list_hangs(t, built.graph, events, options.symptom, &why)) {
        if (symptoms.size() == config.hangs) break;
        if (!c.by_design.empty() || c.score_ns < options.symptom.min_hang_ns) continue;
        engine::SymptomRequest at;
        at.mode = engine::SymptomRequest::Mode::ThreadAt;
        at.tid = c.hang.tid;
        at.at_ns = c.hang.start_ns;
        symptoms.push_back(at);
      }
      if (symptoms.empty()) {
        out.no_hang = why.empty() ? fmt::format(
                                        "no hang found: no candidate went {} s without "
                                        "a response",
                                        config.min_hang_s)
                                  : why;
        return out;
      }
    }
    struct stat st {};
    const int64_t recorded_at = ::stat(trace.c_str(), &st) == 0 ? st.st_mtim.tv_sec : 0;
    for (const engine::SymptomRequest& symptom : symptoms) {
      options.symptom = symptom;
      const session::DiagnosisRun run = s.diagnose(options, /*missing_is_no_hang=*/true);
      if (run.no_hang) {
        out.no_hang = *run.no_hang;
        continue;
      }
      HangRow row = make_row(t, built.graph, events, s.rules(), *run.diagnosis);
      row.host = config.host;
      row.trace = trace;
      row.recorded_at = recorded_at;
      row.diagnosed_at = std::time(nullptr);
      row.causeway = CW_VERSION;
      out.rows.push_back(std::move(row));
    }
    if (!out.rows.empty()) out.no_hang.clear();
  } catch (const session::SessionError& e) {
    out.error = e.what();
    // A pack's errors were said through the reporter: they are the why.
    if (out.error.empty() && !out.messages.empty()) out.error = out.messages.back();
    out.environment_error = e.kind() == session::SessionError::Kind::Environment;
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  return out;
}

void diagnose_batch(const std::vector<std::string>& traces, const BatchConfig& config,
                    const std::function<void(TraceOutcome)>& done) {
  const size_t n = traces.size();
  const unsigned workers = static_cast<unsigned>(std::min<size_t>(config.workers, n));
  if (workers <= 1) {
    for (size_t i = 0; i < n; ++i) done(diagnose_one(traces[i], i, config));
    return;
  }
  // The next trace to take, shared by the workers: a long trace does not hold up the
  // traces behind it.
  void* shared = ::mmap(nullptr, sizeof(std::atomic<size_t>), PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) throw std::runtime_error(fmt::format("mmap: {}", std::strerror(errno)));
  auto* next = new (shared) std::atomic<size_t>(0);

  std::vector<Worker> pool;
  auto stop_all = [&] {
    for (Worker& w : pool) {
      if (w.fd >= 0) ::close(w.fd);
      if (w.pid > 0) {
        ::kill(w.pid, SIGKILL);
        ::waitpid(w.pid, nullptr, 0);
      }
    }
    ::munmap(shared, sizeof(std::atomic<size_t>));
  };
  for (unsigned k = 0; k < workers; ++k) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      stop_all();
      throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      stop_all();
      throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
    }
    if (pid == 0) {
      ::close(fds[0]);
      for (Worker& w : pool) ::close(w.fd);
      for (size_t i; (i = next->fetch_add(1)) < n;)
        if (!write_all(fds[1], outcome_json(diagnose_one(traces[i], i, config)).dump() + "\n"))
          ::_exit(1);
      ::_exit(0);
    }
    ::close(fds[1]);
    pool.push_back({pid, fds[0], {}});
  }

  std::vector<bool> reported(n, false);
  std::vector<std::string> deaths;
  size_t open = pool.size();
  std::vector<pollfd> polls;
  char buf[65536];
  while (open > 0) {
    polls.clear();
    for (const Worker& w : pool)
      if (w.fd >= 0) polls.push_back({w.fd, POLLIN, 0});
    if (::poll(polls.data(), polls.size(), -1) < 0) {
      if (errno == EINTR) continue;
      stop_all();
      throw std::runtime_error(fmt::format("poll: {}", std::strerror(errno)));
    }
    for (Worker& w : pool) {
      if (w.fd < 0) continue;
      const auto it =
          std::find_if(polls.begin(), polls.end(), [&](const pollfd& p) { return p.fd == w.fd; });
      if (it == polls.end() || it->revents == 0) continue;
      const ssize_t got = ::read(w.fd, buf, sizeof(buf));
      if (got < 0 && errno == EINTR) continue;
      if (got > 0) {
        w.pending.append(buf, static_cast<size_t>(got));
        for (size_t nl; (nl = w.pending.find('\n')) != std::string::npos;) {
          TraceOutcome o;
          try {
            o = outcome_from_json(nlohmann::json::parse(w.pending.substr(0, nl)));
          } catch (const std::exception& e) {
            stop_all();
            throw std::runtime_error(
                fmt::format("a worker's report is not readable: {}", e.what()));
          }
          w.pending.erase(0, nl + 1);
          if (o.index >= n || reported[o.index]) continue;
          reported[o.index] = true;
          try {
            done(std::move(o));
          } catch (...) {
            // The caller cannot take more (a store that cannot be written): the workers
            // stop with it rather than diagnose for nobody.
            stop_all();
            throw;
          }
        }
        continue;
      }
      ::close(w.fd);
      w.fd = -1;
      --open;
      int status = 0;
      ::waitpid(w.pid, &status, 0);
      w.pid = -1;
      if (WIFSIGNALED(status))
        deaths.push_back(fmt::format("a worker was killed by signal {}", WTERMSIG(status)));
      else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        deaths.push_back(fmt::format("a worker exited with status {}", WEXITSTATUS(status)));
    }
  }
  ::munmap(shared, sizeof(std::atomic<size_t>));
  // A trace a dead worker had taken has no report: it failed, and says how.
  for (size_t i = 0; i < n; ++i) {
    if (reported[i]) continue;
    TraceOutcome o;
    o.index = i;
    o.error = deaths.empty() ? "its worker ended without a report"
                             : deaths.front() + " while diagnosing it";
    done(std::move(o));
  }
}

}  // namespace cw::fleet
