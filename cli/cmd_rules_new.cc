// `causeway rules new NAME`: a pack skeleton with a test; `causeway rules install PATH`: a
// pack checked, its tests run, then copied into the user's (or the project's) folder of
// packs (docs/rules.md "Sharing packs").
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "dsl/parser.h"
#include "engine/session/pack_paths.h"
#include "eval/pack_tests.h"
#include "rules/loader.h"

namespace fs = std::filesystem;

namespace cw::cli {

namespace {

std::string skeleton_pack(const std::string& id, const std::string& program,
                          const std::string& library) {
  std::vector<std::string> conditions;
  if (!program.empty())
    conditions.push_back(fmt::format("program({})", dsl::string_literal(program)));
  if (!library.empty())
    conditions.push_back(fmt::format("library({})", dsl::string_literal(library)));
  return fmt::format(
      R"(# {0}: what causeway should know about your program. docs/rules.md is the reference.

pack {0} {{
  version "0.1.0"
  engine ">= 0.1"
  requires linux.kernel
  description "The request loop of my program"
  # Loaded only for traces that show one of these (a process's name, a library it maps,
  # a function on a stack); without `applies`, for every trace.
  applies {1}
}}

# One request's work starts where handle_request() is called: cut there, so that each
# request is a segment of its own and one client's wait is not blamed on another's.
# Naming the function makes `causeway record` hook it (docs/instrumentation.md).
split request.begin {{
  at call_enter
  where fn == "handle_request"
}}
)",
      id, fmt::join(conditions, ", "));
}

std::string skeleton_tests(const std::string& program) {
  return fmt::format(
      R"(# Tests of the pack: `causeway rules test` runs them, `causeway rules install` too.
# Each builds a graph from its trace with this pack and the packs it requires.

test "each request is a segment of its own" {{
  trace [[
    causeway-trace 1
    process 10 comm={0}
    thread 11 pid=10 comm={0}
    1ms   11 call_enter fn=handle_request
    2ms   11 call_exit fn=handle_request
    3ms   11 call_enter fn=handle_request
    4ms   11 call_exit fn=handle_request
  ]]
  expect split 11 at 3ms rule request.begin
  expect no split 11 at 2ms
}}
)",
      program.empty() ? "my-server" : program);
}

// Writes `text` to `path`, which must not exist yet.
std::string write_new(const std::string& path, const std::string& text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return fmt::format("{}: {}", path, std::strerror(errno));
  const ssize_t n = write(fd, text.data(), text.size());
  const int err = errno;
  close(fd);
  if (n != static_cast<ssize_t>(text.size()))
    return fmt::format("{}: {}", path, n < 0 ? std::strerror(err) : "short write");
  return "";
}

// Copies the regular file `from` (not a link: opened without following one, checked on
// the descriptor) to `to`, which must not exist yet, a block at a time: a pack may carry a
// recording its tests read, of any size.
std::string copy_file_to_new(const std::string& from, const std::string& to) {
  const int in = open(from.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (in < 0) return fmt::format("{}: {}", from, std::strerror(errno));
  struct stat st {};
  if (fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(in);
    return fmt::format("{}: not a regular file", from);
  }
  const int out = open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (out < 0) {
    const int err = errno;
    close(in);
    return fmt::format("{}: {}", to, std::strerror(err));
  }
  std::string error;
  char block[1 << 16];
  for (;;) {
    const ssize_t n = read(in, block, sizeof block);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      error = fmt::format("{}: {}", from, std::strerror(errno));
      break;
    }
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = write(out, block + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        error = fmt::format("{}: {}", to, w < 0 ? std::strerror(errno) : "short write");
        break;
      }
      done += w;
    }
    if (!error.empty()) break;
  }
  close(in);
  if (close(out) != 0 && error.empty()) error = fmt::format("{}: {}", to, std::strerror(errno));
  return error;
}

// The folder of pack `id` in the user's or the project's folder of packs, created with the
// folders above it when missing; "" and `why` when it cannot be used.
std::string packs_folder(bool project, std::string& why) {
  const std::string folder = project ? ".causeway/rules" : session::user_rules_dir();
  if (folder.empty()) {
    why =
        "neither XDG_DATA_HOME nor HOME names an absolute folder: there is no user folder of "
        "packs (use --project)";
    return "";
  }
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(folder, ec))) {
    // Only the user may write the folders made here: causeway refuses packs from a folder
    // others can write.
    const mode_t old = umask(022);
    fs::create_directories(folder, ec);
    umask(old);
    if (ec) {
      why = fmt::format("{}: {}", folder, ec.message());
      return "";
    }
  }
  std::string bad = session::untrusted(folder);
  if (bad.empty() && project) bad = session::untrusted(".causeway");
  if (!bad.empty()) {
    why = fmt::format("{}: causeway would not load packs from it: {}", folder, bad);
    return "";
  }
  return folder;
}

// Copies the pack into the new folder `to`: a single-file pack as pack.cw; a folder pack
// with every regular file under it (its .cw files and what its tests read, a recording),
// in the same places. Links are not followed or copied; nothing is run.
std::string copy_pack(const rules::PackInfo& pack, const fs::path& root, const fs::path& to) {
  std::error_code ec;
  std::vector<std::pair<fs::path, fs::path>> files;  // from, relative to `to`
  if (!fs::is_directory(root, ec)) {
    if (pack.files.empty()) return fmt::format("{}: the pack has no file", root.string());
    files.push_back({pack.files.front(), "pack.cw"});
  } else {
    for (auto it = fs::recursive_directory_iterator(root, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_symlink(ec) || !it->is_regular_file(ec)) continue;
      files.push_back({it->path(), fs::relative(it->path(), root, ec)});
    }
    if (ec) return fmt::format("{}: {}", root.string(), ec.message());
  }
  for (const auto& [from, rel] : files) {
    if (rel.empty() || *rel.begin() == "..")
      return fmt::format("{}: not inside {}", from.string(), root.string());
    fs::create_directories((to / rel).parent_path(), ec);
    if (ec) return fmt::format("{}: {}", (to / rel).parent_path().string(), ec.message());
    if (std::string err = copy_file_to_new(from.string(), (to / rel).string()); !err.empty())
      return err;
  }
  return "";
}

// Loads the pack at `path` beside the packs found (it replaces an installed copy) and runs
// its tests; "" and the results when it is one valid pack, else
// why not.
std::string check_one_pack(const std::string& path, rules::LoadResult& loaded,
                           std::vector<eval::PackTestResult>& results, std::string& id) {
  loaded = session::load_rule_packs({path}, false);
  std::cerr << loaded.render();
  if (!loaded.ok()) return fmt::format("{} is not a valid pack (the errors above)", path);
  const auto ids = session::packs_from(loaded.rules, {path});
  if (ids.size() != 1)
    return fmt::format("{} holds {} packs: install one pack (a file or a folder) at a time", path,
                       ids.size());
  id = ids[0];
  results = eval::run_pack_tests(loaded.rules, ids);
  if (results.empty())
    return fmt::format(
        "pack {} has no tests: a pack is installed only when its tests pass (add a `test`; "
        "`causeway rules new` writes a pack with one)",
        id);
  if (!std::all_of(results.begin(), results.end(),
                   [](const eval::PackTestResult& r) { return r.passed(); })) {
    std::cout << eval::render_pack_tests(results);
    return fmt::format("the tests of pack {} fail: not installed", id);
  }
  return "";
}

}  // namespace

Command add_rules_new(CLI::App& rules) {
  struct Args {
    std::string id, dir, program, library;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = rules.add_subcommand("new", "write a pack skeleton, with a test, to start from");
  cmd->add_option("NAME", args->id, "the pack's id (dotted names: acme.server)")->required();
  cmd->add_option("DIR", args->dir, "the folder to write (default: NAME with - for .)");
  cmd->add_option("--program", args->program,
                  "the program the pack is for: `applies program(GLOB)` (default: NAME's last "
                  "part)");
  cmd->add_option("--library", args->library,
                  "a library the pack is for: `applies library(GLOB)` too");
  cmd->footer(
      "Writes DIR/pack.cw (the header and one rule) and DIR/tests.cw (a test of the rule). "
      "Edit them, then `causeway rules test DIR` and `causeway rules install DIR`.\nExit "
      "status: 0 written, 1 a bad NAME or DIR exists, 2 DIR cannot be written.");
  return {cmd, [args] {
            if (!dsl::is_pack_id(args->id)) {
              std::cerr << fmt::format(
                  "causeway: rules new: '{}' is not a pack id (dotted names: acme.server)\n",
                  args->id);
              return kExitBadInput;
            }
            std::string dir = args->dir;
            if (dir.empty()) {
              dir = args->id;
              std::replace(dir.begin(), dir.end(), '.', '-');
            }
            std::string program = args->program;
            if (program.empty() && args->library.empty())
              program = args->id.substr(args->id.rfind('.') + 1);
            std::error_code ec;
            if (fs::exists(fs::symlink_status(dir, ec))) {
              std::cerr << fmt::format("causeway: rules new: {} exists; give another DIR\n", dir);
              return kExitBadInput;
            }
            if (mkdir(dir.c_str(), 0755) != 0) {
              std::cerr << fmt::format("causeway: rules new: {}: {}\n", dir, std::strerror(errno));
              return kExitEnvironment;
            }
            for (auto [name, text] :
                 {std::pair{"pack.cw", skeleton_pack(args->id, program, args->library)},
                  std::pair{"tests.cw", skeleton_tests(program)}}) {
              if (std::string err = write_new(dir + "/" + name, text); !err.empty()) {
                std::cerr << "causeway: rules new: " << err << "\n";
                return kExitEnvironment;
              }
            }
            std::cout << fmt::format(
                "wrote {0}/pack.cw and {0}/tests.cw (pack {1})\nnext: edit them, then\n"
                "  causeway rules test {0}\n  causeway rules install {0}\n",
                dir, args->id);
            return kExitOk;
          }};
}

Command add_rules_install(CLI::App& rules) {
  struct Args {
    std::string path;
    bool project = false;
    bool force = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = rules.add_subcommand(
      "install", "check a pack and run its tests, then copy it into your folder of packs");
  cmd->add_option("PACK", args->path, "the pack: a .cw file or a folder with pack.cw")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_flag("--project", args->project,
                "install into the project's .causeway/rules (in the current folder) instead of "
                "the user's folder");
  cmd->add_flag("--force", args->force, "replace an installed pack of the same id");
  cmd->footer(
      "The user's folder is $XDG_DATA_HOME/causeway/rules, else ~/.local/share/causeway/rules "
      "(docs/rules.md \"Where packs are found\"). The pack must load beside the installed "
      "ones and its tests must pass, where it is and again once copied; its files are copied "
      "(no links) and nothing in it is run but its tests (in the rule language's sandbox).\nExit "
      "status: 0 installed, 1 the pack is invalid, has no tests, fails them or is installed "
      "already, 2 the folder of packs cannot be used.");
  return {cmd, [args] {
            rules::LoadResult loaded;
            std::vector<eval::PackTestResult> results;
            std::string id;
            if (std::string why = check_one_pack(args->path, loaded, results, id); !why.empty()) {
              std::cerr << "causeway: rules install: " << why << "\n";
              return kExitBadInput;
            }
            const rules::PackInfo& pack =
                *std::find_if(loaded.rules.packs.begin(), loaded.rules.packs.end(),
                              [&](const rules::PackInfo& p) { return p.id == id; });
            std::string why;
            const std::string folder = packs_folder(args->project, why);
            if (folder.empty()) {
              std::cerr << "causeway: rules install: " << why << "\n";
              return kExitEnvironment;
            }
            const fs::path target = fs::path(folder) / id;
            std::error_code ec;
            const bool exists = fs::exists(fs::symlink_status(target, ec));
            if (exists && !args->force) {
              std::cerr << fmt::format(
                  "causeway: rules install: {} is installed already ({}); --force replaces it\n",
                  id, target.string());
              return kExitBadInput;
            }
            // Copied into a new folder beside the target, its tests run there (a test that
            // reads a file outside the pack would break once installed), then renamed into
            // place: a failed install leaves what was there.
            std::string temp = (fs::path(folder) / ".install-XXXXXX").string();
            if (!mkdtemp(temp.data())) {
              std::cerr << fmt::format("causeway: rules install: {}: {}\n", folder,
                                       std::strerror(errno));
              return kExitEnvironment;
            }
            chmod(temp.c_str(), 0755);
            auto fail = [&](const std::string& text, int code) {
              fs::remove_all(temp, ec);
              std::cerr << "causeway: rules install: " << text << "\n";
              return code;
            };
            if (std::string err = copy_pack(pack, args->path, temp); !err.empty())
              return fail(err, kExitEnvironment);
            rules::LoadResult copied;
            std::vector<eval::PackTestResult> again;
            std::string copied_id;
            if (std::string err = check_one_pack(temp, copied, again, copied_id); !err.empty())
              return fail(fmt::format("once copied: {} (does a test read a file outside the "
                                      "pack?)",
                                      err),
                          kExitBadInput);
            const fs::path old = fs::path(temp).string() + ".old";
            ec.clear();
            if (exists) fs::rename(target, old, ec);
            if (!ec) fs::rename(temp, target, ec);
            if (ec) {
              if (exists) fs::rename(old, target, ec);
              return fail(fmt::format("{}: {}", target.string(), ec.message()), kExitEnvironment);
            }
            if (exists) fs::remove_all(old, ec);
            std::cout << fmt::format("installed {} {} ({} test{} passed) into {}\n", id,
                                     pack.version, results.size(), results.size() == 1 ? "" : "s",
                                     target.string());
            const rules::LoadResult standard =
                rules::load_packs(session::pack_paths({}, false).standard);
            for (const rules::PackInfo& p : standard.rules.packs)
              if (p.id == id) std::cout << "it replaces the standard pack " << id << "\n";
            if (exists) std::cout << "it replaced the pack installed there before\n";
            return kExitOk;
          }};
}

}  // namespace cw::cli
