// The memory maps of a running process (/proc/PID/maps), to turn its addresses into a
// file and an address inside that file.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cw::instrument {

struct ProcMap {
  uint64_t start = 0, end = 0, offset = 0;
  bool readable = false, writable = false, executable = false;
  std::string path;  // "" for anonymous memory; "[stack]", "[vdso]" … as the kernel names them
  bool deleted = false;  // the file was deleted or replaced since it was mapped
  // The device and inode of the mapped file (0 for anonymous memory).
  uint32_t dev_major = 0, dev_minor = 0;
  uint64_t inode = 0;

  bool file_backed() const { return !path.empty() && path[0] == '/'; }
};

// Parses the text of a maps file; lines that do not parse are skipped.
std::vector<ProcMap> parse_proc_maps(std::string_view text);
// The maps of process `pid`, or nullopt with `*error` saying why ("/proc/42/maps: No such
// file or directory").
std::optional<std::vector<ProcMap>> read_proc_maps(pid_t pid, std::string* error);
// The map holding `address`, or null.
const ProcMap* map_at(const std::vector<ProcMap>& maps, uint64_t address);

}  // namespace cw::instrument
