// `causeway debug --watch`: waiting for a change to the rule packs a command loaded.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cw::cli {

// Watches pack files and folders (as given to the loader) for changes with inotify.
//
// A pack file is watched through its folder, for its own name: editors that save by
// writing a new file and renaming it over the old one replace the file, and a watch on
// the old file would see nothing after the first save. A pack folder is watched with
// every folder inside it, for its .cw files (the only files the loader reads) and its
// folders (a folder made or moved in may bring .cw files). The parent of every path is
// watched for the path's own name too, so a pack deleted and made again is seen.
class PackWatcher {
 public:
  // Throws std::system_error when inotify cannot be used.
  PackWatcher();
  ~PackWatcher();
  PackWatcher(const PackWatcher&) = delete;
  PackWatcher& operator=(const PackWatcher&) = delete;

  // Replaces what is watched by `paths` and what they hold now (a folder made since
  // the last call is watched from this call on). Paths that cannot be watched are left
  // out; how many folders are watched is returned.
  size_t watch(const std::vector<std::string>& paths);

  // Waits for a change; then waits until `settle` passes without another, so that a
  // burst (an editor's temporary file, rename and backup; a `git checkout` of several
  // packs) makes one re-run. Returns the changed paths in the order first seen, or
  // nullopt when `stop_fd` became readable first.
  std::optional<std::vector<std::string>> wait(int stop_fd, std::chrono::milliseconds settle);

 private:
  struct Dir {
    std::string path;
    bool whole = false;              // a pack folder: every .cw file and folder in it
    std::vector<std::string> names;  // otherwise only these entries
  };
  bool add_dir(const std::string& dir, bool whole, const std::string& name);
  // Reads the pending events; appends the relevant changed paths to `changed`.
  void drain(std::vector<std::string>& changed);

  int fd_ = -1;
  std::map<int, Dir> dirs_;  // by watch descriptor
};

}  // namespace cw::cli
