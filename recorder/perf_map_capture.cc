#include "recorder/perf_map_capture.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace cw {

namespace {

// Read in pieces of this size, so a big map costs a bounded buffer.
constexpr size_t kReadPiece = 1u << 20;

// The pid of a file named perf-PID.map (PID in decimal, as runtimes write it), else 0.
Pid perf_map_pid(std::string_view name) {
  if (!name.starts_with("perf-") || !name.ends_with(".map")) return 0;
  std::string_view digits = name.substr(5, name.size() - 9);
  if (digits.empty() || digits.size() > 10 || digits[0] == '0') return 0;
  uint64_t pid = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return 0;
    pid = pid * 10 + static_cast<uint64_t>(c - '0');
  }
  return pid <= UINT32_MAX ? static_cast<Pid>(pid) : 0;
}

std::string size_text(uint64_t bytes) {
  return bytes % (1u << 20) == 0 ? fmt::format("{} MiB", bytes >> 20)
                                 : fmt::format("{} bytes", bytes);
}

}  // namespace

std::vector<uid_t> process_uids(const std::string& proc_root, Pid pid) {
  std::ifstream in(fmt::format("{}/{}/status", proc_root, pid));
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("Uid:")) continue;
    std::istringstream fields(line.substr(4));
    std::vector<uid_t> uids;
    for (uint64_t uid = 0; uids.size() < 4 && fields >> uid;)
      uids.push_back(static_cast<uid_t>(uid));
    return uids;
  }
  return {};
}

PerfMapCapture::PerfMapCapture(PerfMapCaptureOptions options, std::function<bool(Pid)> recorded)
    : options_(std::move(options)), recorded_(std::move(recorded)) {}

std::string PerfMapCapture::path_of(Pid pid) const {
  return fmt::format("{}/perf-{}.map", options_.dir, pid);
}

void PerfMapCapture::poll(uint64_t now, std::vector<CapturedJitSymbol>& out) {
  DIR* dir = ::opendir(options_.dir.c_str());
  if (!dir) return;
  std::vector<Pid> pids;
  while (dirent* entry = ::readdir(dir))
    if (Pid pid = perf_map_pid(entry->d_name); pid != 0) pids.push_back(pid);
  ::closedir(dir);
  std::sort(pids.begin(), pids.end());
  for (Pid pid : pids)
    if (recorded_(pid)) read(pid, now, out);
}

void PerfMapCapture::read(Pid pid, uint64_t now, std::vector<CapturedJitSymbol>& out) {
  auto [it, added] = files_.try_emplace(pid);
  if (added) it->second.parser = PerfMapParser(options_.max_entries);
  if (!it->second.done && !all_full_) read_file(pid, it->second, now, out);
}

void PerfMapCapture::refuse(File& file, std::string note) {
  file.done = true;
  notes_.push_back(std::move(note));
}

void PerfMapCapture::read_file(Pid pid, File& file, uint64_t now,
                               std::vector<CapturedJitSymbol>& out) {
  const std::string path = path_of(pid);
  // Read before the file is opened: a process that exits in between leaves no uids, and
  // its file is then trusted only if already checked.
  const std::vector<uid_t> uids = process_uids(options_.proc_root, pid);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return;  // not written yet, or deleted since
    if (err == ELOOP)
      return refuse(file, fmt::format("{}: a symbolic link; not followed, not read", path));
    return refuse(file, fmt::format("{}: cannot open: {}; not read", path, std::strerror(err)));
  }
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return refuse(file, fmt::format("{}: cannot stat: {}; not read", path, std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    return refuse(file, fmt::format("{}: not a regular file; not read", path));
  const bool same_file = file.opened && file.dev == st.st_dev && file.ino == st.st_ino;
  if (uids.empty()) {
    if (!same_file || st.st_uid != file.owner) {
      if (!file.opened)
        refuse(file, fmt::format("{}: process {} exited before its owner could be checked; "
                                 "not read (its JIT frames stay unnamed)",
                                 path, pid));
      else
        file.done = true;  // replaced after its process exited: not the one checked
      return;
    }
  } else if (std::find(uids.begin(), uids.end(), st.st_uid) == uids.end()) {
    return refuse(
        file, fmt::format("{}: owned by uid {}, not by a uid of process {} ({}); not read", path,
                          st.st_uid, pid, fmt::join(uids, ", ")));
  }
  // A new file under the name (the runtime started it again): read from its start. What
  // the old one gave stays, stamped when it was read.
  if ((file.opened && !same_file) || static_cast<uint64_t>(st.st_size) < file.offset) {
    file.offset = 0;
    file.parser = PerfMapParser(options_.max_entries);
  }
  file.opened = true;
  file.dev = st.st_dev;
  file.ino = st.st_ino;
  file.owner = st.st_uid;
  const uint64_t end = std::min<uint64_t>(static_cast<uint64_t>(st.st_size), options_.max_bytes);
  std::string buffer;
  std::vector<PerfMapEntry> entries;
  while (file.offset < end && !file.parser.full()) {
    buffer.resize(std::min<uint64_t>(kReadPiece, end - file.offset));
    const ssize_t n = ::pread(fd, buffer.data(), buffer.size(), static_cast<off_t>(file.offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // shrunk meanwhile, or unreadable: tried again at the next poll
    file.offset += static_cast<uint64_t>(n);
    entries.clear();
    file.parser.feed(std::string_view(buffer.data(), static_cast<size_t>(n)), entries);
    for (PerfMapEntry& e : entries)
      out.push_back(CapturedJitSymbol{pid, now, e.start, e.size, std::move(e.name)});
    file.entries += entries.size();
    symbols_ += entries.size();
    if (symbols_ >= options_.max_total_entries) {
      all_full_ = true;
      notes_.push_back(fmt::format(
          "{}:{}: more than {} entries read from perf maps in all; the rest of every map not read",
          path, file.parser.lines(), options_.max_total_entries));
      return;
    }
  }
  if (file.parser.full())
    refuse(file, fmt::format("{}:{}: more than {} entries; the rest not read", path,
                             file.parser.lines() + 1, options_.max_entries));
  else if (file.offset >= options_.max_bytes &&
           static_cast<uint64_t>(st.st_size) > options_.max_bytes)
    refuse(file, fmt::format("{}: larger than {}; only its first {} read", path,
                             size_text(options_.max_bytes), size_text(options_.max_bytes)));
}

std::vector<std::string> PerfMapCapture::take_notes() {
  return std::exchange(notes_, {});
}

std::vector<std::string> PerfMapCapture::bad_line_notes() const {
  std::vector<std::string> notes;
  for (const auto& [pid, file] : files_) {
    const PerfMapParser& p = file.parser;
    if (p.bad_lines() == 0) continue;
    notes.push_back(fmt::format("{}:{}: {} line{} not understood, skipped (the first: {})",
                                path_of(pid), p.first_bad_line(), p.bad_lines(),
                                p.bad_lines() == 1 ? "" : "s", p.first_bad_reason()));
  }
  return notes;
}

size_t PerfMapCapture::files_read() const {
  return static_cast<size_t>(std::count_if(files_.begin(), files_.end(),
                                           [](const auto& f) { return f.second.entries > 0; }));
}

void add_jit_symbols(Trace& trace, const std::vector<CapturedJitSymbol>& symbols) {
  trace.jit_symbols.reserve(trace.jit_symbols.size() + symbols.size());
  for (const CapturedJitSymbol& s : symbols)
    trace.jit_symbols.push_back(
        JitSymbol{s.pid, s.ts, s.start, s.size, trace.strings.intern(s.name)});
}

}  // namespace cw
