// The framing every entry shares (cache.h): its header (magic, format version, kind, key,
// payload size and checksum) written before the payload, and checked, with the checksum,
// before any payload is believed.
#include "engine/cache/entry_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

namespace cw::cache {

bool enabled_by_environment() {
  const char* v = std::getenv("CAUSEWAY_CACHE");
  if (!v) return true;
  std::string_view s = v;
  return !(s == "off" || s == "0" || s == "no" || s == "false");
}

bool write_entry(const Folder& dir, std::string_view name, EntryKind kind, const Key& key,
                 std::string_view payload, std::string* why) {
  return write_entry_parts(dir, name, kind, key, {payload}, why);
}

bool write_entry_parts(const Folder& dir, std::string_view name, EntryKind kind, const Key& key,
                       const std::vector<std::string_view>& parts, std::string* why) {
  uint64_t size = 0;
  BlockHasher h;
  for (std::string_view p : parts) {
    size += p.size();
    h.bytes(p.data(), p.size());
  }
  unsigned char header[kHeaderSize] = {};
  std::memcpy(header, kMagic, 8);
  auto put = [&](size_t at, auto v) { std::memcpy(header + at, &v, sizeof v); };
  put(8, kFormatVersion);
  put(12, static_cast<uint32_t>(kind));
  put(16, key.trace);
  put(24, key.packs);
  put(32, key.options);
  put(40, key.engine);
  put(48, size);
  put(56, h.digest());
  std::vector<std::string_view> all;
  all.reserve(parts.size() + 1);
  all.emplace_back(reinterpret_cast<const char*>(header), sizeof header);
  all.insert(all.end(), parts.begin(), parts.end());
  if (!dir.write_file(name, all, why)) return false;
  // The user's cache folder holds the entries of every trace whose own folder could not
  // hold them: its least recently used go when it grows past its cap (never this one).
  if (const Folder* pool = dir.pool()) enforce_size_cap(*pool, size_cap(), &dir, name);
  return true;
}

namespace {

// How long ago a file was last marked used (its modification time).
int64_t marked_ago_ns(int64_t mtime_ns) {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec - mtime_ns;
}

// Why the header of a `size`-byte entry does not describe an entry of `kind` and `key`
// of that size; "" when it does (the payload's checksum is checked apart).
std::string check_header(const unsigned char* header, uint64_t size, EntryKind kind,
                         const Key& key) {
  auto get64 = [&](size_t at) { return load_le<uint64_t>(header + at); };
  auto get32 = [&](size_t at) { return static_cast<uint32_t>(load_le<uint32_t>(header + at)); };
  if (std::memcmp(header, kMagic, 8) != 0) return "not a causeway cache file";
  if (get32(8) != kFormatVersion)
    return fmt::format("cache format {} (this causeway writes {})", get32(8), kFormatVersion);
  if (get32(12) != static_cast<uint32_t>(kind)) return "another kind of entry";
  if (Key{get64(16), get64(24), get64(32), get64(40)} != key) return "made from other inputs";
  if (get64(48) != size - kHeaderSize)
    return fmt::format("truncated ({} payload bytes of {})", size - kHeaderSize, get64(48));
  return {};
}

// An entry opened for reading (Folder::open_file: not through a link, only this user's
// regular file), and its size; -1 with the reason ("" when there is no entry) otherwise.
int open_entry(const Folder& dir, std::string_view name, uint64_t* size, std::string* why) {
  return dir.open_file(name, size, why);
}

}  // namespace

std::optional<uint64_t> checksum_by_reading(int fd, uint64_t size) {
  BlockHasher h;
  std::vector<char> buf(uint64_t{1} << 20);
  for (uint64_t at = kHeaderSize; at < size;) {
    const uint64_t n = std::min<uint64_t>(buf.size(), size - at);
    if (!pread_all(fd, buf.data(), n, at)) return std::nullopt;
    h.bytes(buf.data(), n);
    at += n;
  }
  return h.digest();
}

std::optional<MappedEntry> map_entry(const Folder& dir, std::string_view name, EntryKind kind,
                                     const Key& key, bool writable, uint64_t min_payload,
                                     std::string* why, bool populate, CheckedOnce* once) {
  auto fail = [&](std::string reason) -> std::optional<MappedEntry> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  uint64_t size = 0;
  std::string problem;
  const int fd = open_entry(dir, name, &size, &problem);
  if (fd < 0) return fail(problem);
  if (size < kHeaderSize + min_payload) {
    close(fd);
    return fail("truncated header");
  }
  // An entry checked in full before, unchanged since: its checksum is not taken again.
  bool before = false;
  int64_t mtime_ns = 0;
  if (once) {
    *once = CheckedOnce{};
    unsigned char header[kHeaderSize];
    std::optional<FileVersion> v = file_version(fd, &mtime_ns);
    if (v && pread_all(fd, header, kHeaderSize, 0)) {
      once->version = *v;
      once->sum = header_checksum(header);
      once->may_record = settled(*v);
      before = once->before = checked_before(dir, name, *v, once->sum);
    }
  }
  std::optional<uint64_t> read_sum;
  if (!populate && !before) {
    read_sum = checksum_by_reading(fd, size);
    if (!read_sum) {
      close(fd);
      return fail("cannot read the payload");
    }
  }
  // An entry checked before is not read by a checksum that would populate the mapping on
  // every CPU: populated here instead, in one call (~10 ms for the 0.9 GB events entry from
  // the page cache), its pages are not faulted in one by one by whatever reads them first
  // (the hang search's reads across every thread's events took 0.15 s longer so).
  void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | (before && populate ? MAP_POPULATE : 0),
                 fd, 0);
  int err = errno;
  close(fd);
  if (p == MAP_FAILED) return fail(std::strerror(err));
  MappedEntry m;
  m.keep =
      std::shared_ptr<const void>(p, [size](const void* q) { munmap(const_cast<void*>(q), size); });
  if (writable && mprotect(p, size, PROT_READ | PROT_WRITE) != 0) return fail(std::strerror(errno));
  m.base = static_cast<char*>(p);
  m.size = size;
  const auto* header = reinterpret_cast<const unsigned char*>(m.base);
  if (std::string bad = check_header(header, size, kind, key); !bad.empty()) return fail(bad);
  m.payload = std::string_view(m.base + kHeaderSize, size - kHeaderSize);
  if (before) {
    if (header_checksum(header) != once->sum) return fail("checksum mismatch");
  } else {
    const uint64_t sum = read_sum ? *read_sum : payload_checksum(m.payload);
    if (sum != header_checksum(header)) return fail("checksum mismatch");
  }
  // Used now: eviction drops the least recently used. Marking an entry checked once
  // changes its file (kMarkUsedEvery).
  if (!once) {
    dir.touch(name);
  } else if (marked_ago_ns(mtime_ns) > kMarkUsedEvery) {
    dir.touch(name);
    once->may_record = false;
  }
  return m;
}

int open_checked_entry(const Folder& dir, std::string_view name, EntryKind kind, const Key& key,
                       uint64_t* size, unsigned char (&header)[kHeaderSize], std::string* why) {
  const int fd = open_entry(dir, name, size, why);
  if (fd < 0) return -1;
  std::string bad;
  if (*size < kHeaderSize || !pread_all(fd, header, kHeaderSize, 0))
    bad = "truncated header";
  else
    bad = check_header(header, *size, kind, key);
  if (bad.empty()) return fd;
  close(fd);
  *why = std::move(bad);
  return -1;
}

std::optional<std::string> read_entry(const Folder& dir, std::string_view name, EntryKind kind,
                                      const Key& key, std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<std::string> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  uint64_t size = 0;
  unsigned char header[kHeaderSize];
  std::string problem;
  const int fd = open_checked_entry(dir, name, kind, key, &size, header, &problem);
  if (fd < 0) return fail(problem);
  std::string payload(size - kHeaderSize, '\0');
  BlockHasher h;
  std::atomic<bool> ok = true;  // (set by the reads of every CPU)
  h.in_parallel(payload.data(), payload.size(), [&](char* at, uint64_t n) {
    if (!pread_all(fd, at, n, kHeaderSize + static_cast<uint64_t>(at - payload.data())))
      ok = false;  // (the sum is then not looked at)
  });
  close(fd);
  if (!ok) return fail("cannot read the payload");
  if (h.digest() != header_checksum(header)) return fail("checksum mismatch");
  dir.touch(name);  // used now: eviction drops the least recently used
  return payload;
}

}  // namespace cw::cache
