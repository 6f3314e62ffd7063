// The record of entries checked in full (checked_entries.h): an entry file of its own,
// framed, keyed by this causeway's build and checksummed like every other.
#include "engine/cache/checked_entries.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "engine/cache/cache.h"
#include "engine/cache/entry_file.h"

namespace cw::cache {

namespace {

int64_t ctime_of(const struct stat& st) {
  return int64_t{st.st_ctim.tv_sec} * 1'000'000'000 + st.st_ctim.tv_nsec;
}

FileVersion version_of(const struct stat& st) {
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
          static_cast<uint64_t>(st.st_size), ctime_of(st)};
}

struct Record {
  char name[64];  // zero-padded (entry names are at most 42 bytes)
  uint64_t dev, ino, size;
  int64_t ctime_ns;
  uint64_t sum;
};

// A build's checks are its own: another build's records are not used (they are a miss).
Key checked_key() {
  return Key{0, 0, 0, engine_key()};
}

std::vector<Record> read_records(const Folder& dir) {
  // Its size looked at before it is read: a record file never holds more than kMaxChecked.
  struct stat st {};
  if (!dir.valid() ||
      fstatat(dir.fd(), std::string(kCheckedName).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
      static_cast<uint64_t>(st.st_size) > kHeaderSize + kMaxChecked * sizeof(Record))
    return {};
  std::string why;
  auto payload = read_entry(dir, kCheckedName, EntryKind::Checked, checked_key(), &why);
  if (!payload || payload->size() % sizeof(Record) != 0 ||
      payload->size() > kMaxChecked * sizeof(Record))
    return {};
  std::vector<Record> out(payload->size() / sizeof(Record));
  std::memcpy(out.data(), payload->data(), payload->size());
  return out;
}

bool names(const Record& r, std::string_view name) {
  return name.size() < sizeof r.name && std::memcmp(r.name, name.data(), name.size()) == 0 &&
         r.name[name.size()] == '\0';
}

}  // namespace

std::optional<FileVersion> file_version(int fd, int64_t* mtime_ns) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return std::nullopt;
  if (mtime_ns) *mtime_ns = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
  return version_of(st);
}

bool settled(const FileVersion& v) {
  timespec now{};
  clock_gettime(CLOCK_REALTIME_COARSE, &now);
  return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec > v.ctime_ns;
}

void wait_settled(const Folder& dir, std::string_view name) {
  if (!dir.valid()) return;
  const std::string n(name);
  for (int tries = 0; tries < 100; ++tries) {
    struct stat st {};
    if (fstatat(dir.fd(), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || settled(version_of(st)))
      return;
    const timespec ms{0, 1'000'000};
    nanosleep(&ms, nullptr);
  }
}

bool checked_before(const Folder& dir, std::string_view name, const FileVersion& v, uint64_t sum) {
  for (const Record& r : read_records(dir))
    if (names(r, name)) return FileVersion{r.dev, r.ino, r.size, r.ctime_ns} == v && r.sum == sum;
  return false;
}

void record_checked(const Folder& dir, std::string_view name, const FileVersion& v, uint64_t sum) {
  if (!dir.valid() || name.size() >= sizeof(Record::name) || !settled(v)) return;
  struct stat st {};
  // As the folder holds it now: still the file checked, unchanged since it was opened.
  if (fstatat(dir.fd(), std::string(name).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
      !S_ISREG(st.st_mode) || version_of(st) != v)
    return;
  Record fresh{};
  std::memcpy(fresh.name, name.data(), name.size());
  fresh.dev = v.dev;
  fresh.ino = v.ino;
  fresh.size = v.size;
  fresh.ctime_ns = v.ctime_ns;
  fresh.sum = sum;
  std::vector<Record> records{fresh};
  for (const Record& r : read_records(dir))
    if (!names(r, name) && records.size() < kMaxChecked) records.push_back(r);
  write_entry(dir, kCheckedName, EntryKind::Checked, checked_key(),
              std::string_view(reinterpret_cast<const char*>(records.data()),
                               records.size() * sizeof(Record)));
}

void record_checked(const Folder& dir, std::string_view name, const CheckedOnce& once) {
  if (!once.before && once.may_record) record_checked(dir, name, once.version, once.sum);
}

}  // namespace cw::cache
