// The event names entry (cache.h): every event of a trace under its kind and name
// (engine/graph/event_names.h). The payload: the number of events and of lists, then per
// list its kind, whether it is named, its name's length, its count and its bytes' length,
// then the names one after the other, then the lists' bytes in the same order.
#include <unistd.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/cache/cache.h"
#include "engine/cache/encoding.h"
#include "engine/cache/entry_file.h"

namespace cw::cache {

namespace {

struct ListRecord {
  uint16_t kind;
  uint8_t named;
  uint8_t pad;
  uint32_t name_size;
  uint64_t count;
  uint64_t size;
};
static_assert(sizeof(ListRecord) == 24);

}  // namespace

std::string encode_event_names(const engine::EventNames& names) {
  std::string out;
  const auto& lists = names.lists();
  const uint64_t head[2] = {names.total(), lists.size()};
  out.append(reinterpret_cast<const char*>(head), sizeof head);
  for (const auto& l : lists) {
    const ListRecord r{l.kind,  l.named ? uint8_t{1} : uint8_t{0},
                       0,       static_cast<uint32_t>(l.name.size()),
                       l.count, l.size};
    out.append(reinterpret_cast<const char*>(&r), sizeof r);
  }
  for (const auto& l : lists) out += l.name;
  for (const auto& l : lists) out.append(names.bytes().substr(l.at, l.size));
  return out;
}

namespace {

// The lists of `payload`, whose bytes `keep` keeps (and they with it).
engine::EventNames decode(std::shared_ptr<const void> keep, std::string_view payload,
                          uint64_t events) {
  uint64_t head[2];
  if (payload.size() < sizeof head) throw CorruptEntry("truncated header");
  std::memcpy(head, payload.data(), sizeof head);
  if (head[0] != events) throw CorruptEntry("the lists are of another number of events");
  payload.remove_prefix(sizeof head);
  // Counts are keys read from a file, never sizes: each record is checked to fit first.
  if (head[1] > payload.size() / sizeof(ListRecord)) throw CorruptEntry("lists past the entry");
  std::vector<ListRecord> records(head[1]);
  if (!records.empty())  // (no lists: a trace without events)
    std::memcpy(records.data(), payload.data(), records.size() * sizeof(ListRecord));
  payload.remove_prefix(records.size() * sizeof(ListRecord));
  std::vector<engine::EventNames::List> lists;
  lists.reserve(records.size());
  for (const ListRecord& r : records) {
    if (r.name_size > payload.size()) throw CorruptEntry("a name past the entry");
    if (r.named > 1 || r.pad != 0) throw CorruptEntry("a list's flags are not a list's");
    lists.push_back(
        {r.kind, r.named == 1, std::string(payload.substr(0, r.name_size)), r.count, 0, r.size});
    payload.remove_prefix(r.name_size);
  }
  uint64_t at = 0;
  for (auto& l : lists) {
    if (l.size > payload.size() - at) throw CorruptEntry("a list's bytes past the entry");
    l.at = at;
    at += l.size;
  }
  if (at != payload.size()) throw CorruptEntry("bytes after the last list");
  try {
    return engine::EventNames(std::move(lists), payload, std::move(keep), events);
  } catch (const std::invalid_argument& e) {
    throw CorruptEntry(e.what());
  }
}

}  // namespace

engine::EventNames decode_event_names(std::string_view payload, uint64_t events) {
  auto whole = std::make_shared<const std::string>(payload);
  const std::string_view bytes = *whole;
  return decode(std::move(whole), bytes, events);
}

bool save_event_names(const Folder& dir, const Key& key, const engine::EventNames& names,
                      std::string* why) {
  return write_entry(dir, kEventNamesName, EntryKind::EventNames, key, encode_event_names(names),
                     why);
}

std::optional<engine::EventNames> load_event_names(const Folder& dir, const Key& key,
                                                   uint64_t events, std::string* why) {
  // Mapped, not read: a rebuild decodes the lists of its new rules' names alone, and the
  // rest (~20 MB at 19 M events) would be fresh memory filled for nothing. The checksum is
  // taken by reading the file, before the mapping is used.
  CheckedOnce once;
  auto m = map_entry(dir, kEventNamesName, EntryKind::EventNames, key, false, 0, why, false, &once);
  if (!m) return std::nullopt;
  try {
    engine::EventNames names = decode(m->keep, m->payload, events);
    record_checked(dir, kEventNamesName, once);
    return names;
  } catch (const CorruptEntry& e) {
    if (why) *why = e.what();
    return std::nullopt;
  }
}

bool has_event_names(const Folder& dir, const Key& key) {
  uint64_t size = 0;
  unsigned char header[kHeaderSize];
  std::string why;
  const int fd =
      open_checked_entry(dir, kEventNamesName, EntryKind::EventNames, key, &size, header, &why);
  if (fd < 0) return false;
  close(fd);
  return true;
}

}  // namespace cw::cache
