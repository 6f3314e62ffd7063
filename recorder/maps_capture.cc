#include "recorder/maps_capture.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "instrument/proc_maps.h"

namespace cw {

namespace {

std::string to_hex(const uint8_t* bytes, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    out += kDigits[bytes[i] >> 4];
    out += kDigits[bytes[i] & 15];
  }
  return out;
}

// CPUs listed as "0-3,6" in /sys/devices/system/cpu/online.
std::vector<int> online_cpus() {
  std::ifstream in("/sys/devices/system/cpu/online");
  std::string list;
  std::getline(in, list);
  std::vector<int> cpus;
  size_t pos = 0;
  while (pos < list.size()) {
    size_t comma = list.find(',', pos);
    std::string part =
        list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    int first = 0, last = 0;
    if (std::sscanf(part.c_str(), "%d-%d", &first, &last) == 2) {
      for (int c = first; c <= last; ++c) cpus.push_back(c);
    } else if (std::sscanf(part.c_str(), "%d", &first) == 1) {
      cpus.push_back(first);
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (cpus.empty())
    for (long c = 0, n = ::sysconf(_SC_NPROCESSORS_ONLN); c < n; ++c)
      cpus.push_back(static_cast<int>(c));
  return cpus;
}

std::runtime_error perf_error(std::string_view what, int err) {
  std::string message = fmt::format("{}: {}", what, std::strerror(err));
  if (err == EACCES || err == EPERM)
    message += "; recording memory maps needs root or CAP_PERFMON";
  else if (err == ENOENT || err == ENOSYS || err == EOPNOTSUPP)
    message += "; the kernel lacks perf events (CONFIG_PERF_EVENTS)";
  else if (err == EMFILE)
    message += "; too many open files (raise ulimit -n)";
  return std::runtime_error(message);
}

bool is_file_path(std::string_view path) {
  return path.starts_with('/') && !path.starts_with("//anon");
}

}  // namespace

std::string BuildIdCache::get(const std::vector<std::string>& open_paths, uint64_t device,
                              uint64_t inode) {
  auto key = std::make_pair(device, inode);
  if (inode != 0)
    if (auto it = by_file_.find(key); it != by_file_.end()) return it->second;
  std::string id;
  for (const std::string& path : open_paths)
    if (id = read_build_id(path); !id.empty()) break;
  if (inode != 0) by_file_.emplace(key, id);
  return id;
}

uint64_t monotonic_now_ns() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

// ---- snapshots of /proc/PID/maps ----

namespace {

std::vector<Pid> all_pids() {
  std::vector<Pid> pids;
  DIR* dir = ::opendir("/proc");
  if (!dir) return pids;
  while (dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    unsigned long pid = std::strtoul(entry->d_name, &end, 10);
    if (end != entry->d_name && *end == '\0' && pid > 0) pids.push_back(static_cast<Pid>(pid));
  }
  ::closedir(dir);
  std::sort(pids.begin(), pids.end());
  return pids;
}

void snapshot_process(Pid pid, BuildIdCache& build_ids, std::vector<CapturedMap>& out) {
  uint64_t now = monotonic_now_ns();
  auto maps = instrument::read_proc_maps(static_cast<pid_t>(pid), nullptr);
  if (!maps) return;  // exited while being read
  for (instrument::ProcMap& map : *maps) {
    if (!map.executable || !is_file_path(map.path)) continue;
    CapturedMap m;
    m.pid = pid;
    m.ts = now;
    m.start = map.start;
    m.end = map.end;
    m.pgoff = map.offset;
    // map_files opens the file the process really mapped, even if deleted or replaced
    // since (a package upgrade); it needs root, so the path is the fallback.
    std::string mapped = fmt::format("/proc/{}/map_files/{:x}-{:x}", pid, map.start, map.end);
    m.build_id =
        build_ids.get({mapped, map.path}, makedev(map.dev_major, map.dev_minor), map.inode);
    m.path = std::move(map.path);
    out.push_back(std::move(m));
  }
}

}  // namespace

std::vector<CapturedMap> snapshot_maps(const std::vector<Pid>& pids, BuildIdCache& build_ids) {
  std::vector<CapturedMap> out;
  for (Pid pid : pids.empty() ? all_pids() : pids) snapshot_process(pid, build_ids, out);
  return out;
}

// ---- perf mmap records ----

struct MapsCapture::Ring {
  int fd = -1;
  void* base = nullptr;
  size_t mapped_bytes = 0;
  uint8_t* data = nullptr;
  uint64_t data_size = 0;

  ~Ring() {
    if (base) ::munmap(base, mapped_bytes);
    if (fd >= 0) ::close(fd);
  }
  perf_event_mmap_page* meta() const { return static_cast<perf_event_mmap_page*>(base); }
};

namespace {

int open_dummy_event(int cpu, bool with_build_id) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_DUMMY;
  attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
  attr.mmap = 1;
  attr.mmap2 = 1;
  attr.comm = 1;
  attr.task = 1;
  attr.sample_id_all = 1;
  attr.build_id = with_build_id ? 1 : 0;
  // The eBPF recorder stamps events with bpf_ktime_get_ns(), i.e. CLOCK_MONOTONIC.
  attr.use_clockid = 1;
  attr.clockid = CLOCK_MONOTONIC;
  return static_cast<int>(
      ::syscall(SYS_perf_event_open, &attr, -1 /* every process */, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

}  // namespace

MapsCapture::MapsCapture(MapsCaptureOptions options) {
  pids_.insert(options.pids.begin(), options.pids.end());
  all_pids_ = pids_.empty();
  size_t pages = options.ring_pages;
  if (pages == 0 || (pages & (pages - 1)) != 0)
    throw std::invalid_argument(
        fmt::format("ring_pages must be a power of two, got {}", options.ring_pages));
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  for (int cpu : online_cpus()) {
    auto ring = std::make_unique<Ring>();
    ring->fd = open_dummy_event(cpu, kernel_build_ids_);
    if (ring->fd < 0 && errno == EINVAL && kernel_build_ids_) {
      // Kernels before 5.12 refuse the unknown build_id bit; read build ids from files.
      kernel_build_ids_ = false;
      ring->fd = open_dummy_event(cpu, false);
    }
    if (ring->fd < 0) throw perf_error(fmt::format("perf_event_open (cpu {})", cpu), errno);
    ring->mapped_bytes = (pages + 1) * page;
    void* base =
        ::mmap(nullptr, ring->mapped_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, ring->fd, 0);
    if (base == MAP_FAILED) {
      int err = errno;
      std::string message = fmt::format("mmap of the perf ring buffer (cpu {}, {} KiB): {}", cpu,
                                        ring->mapped_bytes / 1024, std::strerror(err));
      if (err == EPERM || err == ENOMEM)
        message += "; raise the locked-memory limit (ulimit -l or kernel.perf_event_mlock_kb)";
      throw std::runtime_error(message);
    }
    ring->base = base;
    ring->data = static_cast<uint8_t*>(base) + page;
    ring->data_size = pages * page;
    rings_.push_back(std::move(ring));
  }
}

MapsCapture::~MapsCapture() = default;

std::vector<CapturedMap> MapsCapture::snapshot(const std::vector<Pid>& pids) {
  if (!pids.empty()) return snapshot_maps(pids, build_ids_);
  return snapshot_maps(std::vector<Pid>(pids_.begin(), pids_.end()), build_ids_);
}

uint64_t MapsCapture::poll(std::vector<CapturedMap>& out) {
  // Rings are per CPU: a child's fork may be on one ring and its mmaps on another, so
  // records are handled in time order across rings (the fork decides the pid filter).
  pending_.clear();
  pending_at_.clear();
  for (auto& ring : rings_) read_ring(*ring);
  std::stable_sort(pending_at_.begin(), pending_at_.end());
  uint64_t lost = 0;
  for (const auto& [ts, at] : pending_at_) {
    perf_event_header header;
    std::memcpy(&header, pending_.data() + at, sizeof header);
    handle_record(pending_.data() + at, header.size, out, lost);
  }
  lost_total_ += lost;
  return lost;
}

void MapsCapture::read_ring(Ring& ring) {
  perf_event_mmap_page* meta = ring.meta();
  uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = meta->data_tail;
  while (tail + sizeof(perf_event_header) <= head) {
    uint64_t at = tail % ring.data_size;
    perf_event_header header;
    for (size_t i = 0; i < sizeof header; ++i)
      reinterpret_cast<uint8_t*>(&header)[i] = ring.data[(at + i) % ring.data_size];
    // A size the ring cannot hold means the buffer is damaged: drop what is left.
    if (header.size < sizeof header || header.size > ring.data_size || tail + header.size > head)
      break;
    // Copied out (also joining a record split by the ring's end) so the ring can be
    // released before the records are sorted.
    const size_t start = pending_.size();
    const size_t first_part = std::min<uint64_t>(header.size, ring.data_size - at);
    pending_.insert(pending_.end(), ring.data + at, ring.data + at + first_part);
    pending_.insert(pending_.end(), ring.data, ring.data + (header.size - first_part));
    // With sample_id_all every record ends in its sample_id, whose last field is the time.
    uint64_t ts = 0;
    if (header.size >= sizeof header + 16)
      std::memcpy(&ts, pending_.data() + start + header.size - 8, 8);
    pending_at_.emplace_back(ts, start);
    tail += header.size;
  }
  __atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
}

void MapsCapture::handle_record(const uint8_t* record, size_t size, std::vector<CapturedMap>& out,
                                uint64_t& lost) {
  auto u32 = [&](size_t at) {
    uint32_t v;
    std::memcpy(&v, record + at, 4);
    return v;
  };
  auto u64 = [&](size_t at) {
    uint64_t v;
    std::memcpy(&v, record + at, 8);
    return v;
  };
  perf_event_header header;
  std::memcpy(&header, record, sizeof header);
  // sample_id_all with TID|TIME appends {u32 pid, u32 tid, u64 time} to every record.
  constexpr size_t kSampleId = 16;
  switch (header.type) {
    case PERF_RECORD_LOST:
      // {header, u64 id, u64 lost, sample_id}
      if (size >= 24) lost += u64(16);
      return;
    case PERF_RECORD_FORK:
      // {header, u32 pid, ppid, tid, ptid, u64 time}: a child of a followed process is
      // followed too (only a new process, not a new thread).
      if (!all_pids_ && size >= 24 && u32(8) == u32(16) && pids_.count(u32(12)))
        pids_.insert(u32(8));
      return;
    case PERF_RECORD_MMAP2: break;
    default: return;
  }
  // {header, u32 pid, tid, u64 addr, len, pgoff, 24 bytes of device+inode or build id,
  //  u32 prot, flags, char filename[], sample_id}
  constexpr size_t kFilename = 72;
  if (size < kFilename + kSampleId) return;
  Pid pid = u32(8);
  uint32_t prot = u32(64);
  if (!(prot & PROT_EXEC) || !wanted(pid)) return;
  const char* name = reinterpret_cast<const char*>(record + kFilename);
  std::string path(name, strnlen(name, size - kFilename - kSampleId));
  if (!is_file_path(path)) return;
  CapturedMap m;
  m.pid = pid;
  m.start = u64(16);
  m.end = m.start + u64(24);
  m.pgoff = u64(32);
  m.ts = u64(size - 8);
  if (header.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
    size_t id_size = std::min<size_t>(record[40], 20);
    m.build_id = to_hex(record + 44, id_size);
  } else {
    // The kernel could not read the note (or ignores attr.build_id): read the file, which
    // is usually still there after its process exited.
    uint64_t device = makedev(u32(40), u32(44));
    m.build_id = build_ids_.get({path}, device, u64(48));
  }
  m.path = std::move(path);
  out.push_back(std::move(m));
}

void add_maps(Trace& trace, const std::vector<CapturedMap>& maps) {
  trace.maps.reserve(trace.maps.size() + maps.size());
  for (const CapturedMap& m : maps) {
    MapRecord r;
    r.pid = m.pid;
    r.ts = m.ts;
    r.start = m.start;
    r.end = m.end;
    r.pgoff = m.pgoff;
    r.path = trace.strings.intern(m.path);
    r.build_id = m.build_id.empty() ? 0 : trace.strings.intern(m.build_id);
    trace.maps.push_back(r);
  }
}

}  // namespace cw
