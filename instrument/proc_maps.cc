#include "instrument/proc_maps.h"

#include <string.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <sstream>

namespace cw::instrument {
namespace {

// Reads a hex number at the start of `s` and drops it and the one separator after it.
bool take_hex(std::string_view& s, uint64_t& value) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value, 16);
  if (ec != std::errc() || end == s.data()) return false;
  s.remove_prefix(static_cast<size_t>(end - s.data()));
  if (!s.empty()) s.remove_prefix(1);
  return true;
}

std::string_view take_field(std::string_view& s) {
  size_t space = s.find(' ');
  std::string_view field = s.substr(0, space);
  s.remove_prefix(space == std::string_view::npos ? s.size() : space);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return field;
}

}  // namespace

std::vector<ProcMap> parse_proc_maps(std::string_view text) {
  std::vector<ProcMap> maps;
  while (!text.empty()) {
    size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    // START-END PERMS OFFSET DEV INODE [PATH]
    ProcMap m;
    std::string_view perms;
    if (!take_hex(line, m.start) || !take_hex(line, m.end)) continue;
    perms = take_field(line);
    if (perms.size() < 3 || !take_hex(line, m.offset)) continue;
    std::string_view device = take_field(line), inode = take_field(line);
    if (size_t colon = device.find(':'); colon != std::string_view::npos) {
      std::from_chars(device.data(), device.data() + colon, m.dev_major, 16);
      std::from_chars(device.data() + colon + 1, device.data() + device.size(), m.dev_minor, 16);
    }
    std::from_chars(inode.data(), inode.data() + inode.size(), m.inode);
    m.readable = perms[0] == 'r';
    m.writable = perms[1] == 'w';
    m.executable = perms[2] == 'x';
    m.path = std::string(line);
    constexpr std::string_view kDeleted = " (deleted)";
    if (m.path.ends_with(kDeleted)) {
      m.path.resize(m.path.size() - kDeleted.size());
      m.deleted = true;
    }
    maps.push_back(std::move(m));
  }
  return maps;
}

std::optional<std::vector<ProcMap>> read_proc_maps(pid_t pid, std::string* error) {
  const std::string path = "/proc/" + std::to_string(pid) + "/maps";
  std::ifstream in(path);
  if (!in) {
    if (error) *error = path + ": " + strerror(errno);
    return std::nullopt;
  }
  std::stringstream text;
  text << in.rdbuf();
  return parse_proc_maps(text.str());
}

const ProcMap* map_at(const std::vector<ProcMap>& maps, uint64_t address) {
  for (const ProcMap& m : maps)
    if (address >= m.start && address < m.end) return &m;
  return nullptr;
}

}  // namespace cw::instrument
