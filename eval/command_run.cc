#include "eval/command_run.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "trace/command_marker.h"

namespace cw::eval {

namespace fs = std::filesystem;

std::string self_exe() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("causeway") : p.string();
}

std::optional<std::string> find_folder(const std::vector<std::string>& dirs,
                                       const std::string& name, const std::string& noun,
                                       std::string* why) {
  std::vector<std::string> hits;
  for (const std::string& d : dirs) {
    std::string folder = fs::path(d).filename().string();
    if (folder == name) return d;
    if (folder.find(name) != std::string::npos) hits.push_back(d);
  }
  if (hits.size() == 1) return hits[0];
  std::string list;
  for (const std::string& d : (hits.empty() ? dirs : hits))
    list += (list.empty() ? "" : ", ") + fs::path(d).filename().string();
  *why = hits.empty() ? fmt::format("no {} '{}' (there are: {})", noun, name, list)
                      : fmt::format("'{}' names several {}s: {}", name, noun, list);
  return std::nullopt;
}

std::string failure_line(const std::string& file) {
  std::ifstream in(file);
  std::string line, last, command_last;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    last = line;
    if (line.rfind("causeway:", 0) != 0) command_last = line;
  }
  if (command_last.empty() || command_last == last) return last;
  return command_last + " (recorder: " + last + ")";
}

std::string run_logged(const std::vector<std::string>& argv, const std::string& log,
                       const EnvVars& env, const std::string& path_prefix,
                       std::chrono::seconds timeout) {
  pid_t pid = fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      dup2(fd, STDERR_FILENO);
      dup2(fd, STDOUT_FILENO);
    }
    if (!path_prefix.empty()) {
      std::string path = path_prefix + ":" + (std::getenv("PATH") ? std::getenv("PATH") : "");
      setenv("PATH", path.c_str(), 1);
    }
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0) return "waitpid failed";
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGINT);
      waitpid(pid, &status, 0);
      return fmt::format("took longer than {} s: stopped (log: {})", timeout.count(), log);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  return fmt::format("{}: {} (log: {})",
                     WIFEXITED(status) ? fmt::format("exit {}", WEXITSTATUS(status))
                                       : fmt::format("signal {}", WTERMSIG(status)),
                     failure_line(log), log);
}

std::string record_command(const std::vector<std::string>& options,
                           const std::vector<std::string>& command, const std::string& trace,
                           const std::string& log, const EnvVars& env,
                           const std::string& path_prefix, std::chrono::seconds timeout) {
  std::vector<std::string> argv = {self_exe(), "record", "-o", trace};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  std::string error = run_logged(argv, log, env, path_prefix, timeout);
  if (error.empty()) return {};
  if (error.rfind("took longer", 0) == 0) return "recording " + error;
  return "causeway record failed (" + error.substr(0, error.find(':')) + ")" +
         error.substr(error.find(':'));
}

std::string command_failure(const Trace& trace, const std::string& log, const std::string& whose) {
  std::optional<int> code = command_exit_code(trace);
  if (!code || *code == 0) return {};
  std::string how = (*code & 0x7f) != 0 ? fmt::format("signal {}", *code & 0x7f)
                                        : fmt::format("exit {}", (*code >> 8) & 0xff);
  std::error_code ec;
  if (!fs::exists(log, ec)) return fmt::format("{} command failed ({})", whose, how);
  return fmt::format("{} command failed ({}): {} (log: {})", whose, how, failure_line(log), log);
}

}  // namespace cw::eval
