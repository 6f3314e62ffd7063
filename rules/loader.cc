#include "rules/loader.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <system_error>

#include "dsl/parser.h"
#include "rules/checker.h"
#include "rules/lint.h"
#include "rules/version.h"

namespace cw::rules {

bool LoadResult::ok() const {
  return std::none_of(diagnostics.begin(), diagnostics.end(),
                      [](const Diagnostic& d) { return d.severity == Severity::Error; });
}

std::string LoadResult::render() const {
  // As compilers do, the first errors are enough to act on: a pack with 50,000 bad names
  // gives 50,000 errors, and printing them all buries the first under 200,000 lines.
  std::string out;
  size_t errors = 0, hidden = 0;
  bool hiding = false;  // the notes of a hidden error are hidden with it
  for (const auto& d : diagnostics) {
    if (d.severity == Severity::Error) hiding = ++errors > kErrorsShown;
    if (hiding) {
      hidden += d.severity == Severity::Error;
      continue;
    }
    out += d.render();
  }
  if (hidden)
    out += fmt::format("{} more error{} not shown (the first {} are above)\n", hidden,
                       hidden == 1 ? "" : "s", kErrorsShown);
  return out;
}

namespace {

namespace fs = std::filesystem;

struct ParsedFile {
  SourcePtr source;
  dsl::File file;
  std::string dir;  // the folder, normalised, "" for a bare file name
  bool pack_cw = false;
  bool standard = false;  // from the standard packs: a user's pack of the same id replaces it
};

uint32_t width(size_t n) {
  return static_cast<uint32_t>(std::max<size_t>(1, n));
}

bool dir_contains(const std::string& outer, const std::string& inner) {
  if (outer.empty()) return true;
  return inner == outer ||
         (inner.size() > outer.size() && inner.compare(0, outer.size(), outer) == 0 &&
          inner[outer.size()] == '/');
}

std::string joined(const std::vector<std::string>& path) {
  std::string out;
  for (const auto& p : path) out += (out.empty() ? "" : ".") + p;
  return out;
}

// `applies library("GLOB"), program("GLOB"), symbol("GLOB")`: what the pack is for.
void read_conditions(const ParsedFile& f, const dsl::Clause& clause, PackInfo& info,
                     Diagnostics& diags) {
  const std::vector<std::string> kinds = {"library", "program", "symbol"};
  if (clause.args.empty())
    diags.error(f.source, clause.loc, width(clause.keyword.size()),
                "clause 'applies' needs at least one condition",
                {"write what the pack is for: applies library(\"libuv.so*\"), program(\"node\")"});
  for (const auto& arg : clause.args) {
    const bool call = arg->kind == dsl::ExprKind::Call && arg->path.size() == 1;
    auto kind = call ? std::find(kinds.begin(), kinds.end(), arg->path[0]) : kinds.end();
    if (kind == kinds.end() || arg->args.size() != 1 || arg->args[0]->kind != dsl::ExprKind::Str ||
        arg->args[0]->sval.empty()) {
      diags.error(f.source, arg->loc, arg->length,
                  "expected library(\"GLOB\"), program(\"GLOB\") or symbol(\"GLOB\")",
                  call ? did_you_mean(arg->path[0], kinds) : std::vector<std::string>{});
      continue;
    }
    info.applies.push_back(
        {static_cast<PackCondition::Kind>(kind - kinds.begin()), arg->args[0]->sval});
  }
}

// Reads the header clauses into `info`; false on errors.
void read_header(const ParsedFile& f, PackInfo& info, Diagnostics& diags) {
  const dsl::PackHeader& header = *f.file.pack;
  const std::vector<std::string> known = {"version", "engine", "requires", "description",
                                          "applies"};
  std::set<std::string> seen;
  for (const auto& clause : header.clauses) {
    auto at_keyword = [&](std::string message, std::vector<std::string> hints = {}) {
      diags.error(f.source, clause.loc, width(clause.keyword.size()), std::move(message),
                  std::move(hints));
    };
    if (std::find(known.begin(), known.end(), clause.keyword) == known.end()) {
      at_keyword(fmt::format("unknown clause '{}' in pack header", clause.keyword),
                 did_you_mean(clause.keyword, known));
      continue;
    }
    if (!seen.insert(clause.keyword).second) {
      at_keyword(fmt::format("clause '{}' given twice", clause.keyword));
      continue;
    }
    if (clause.keyword == "requires") {
      for (const auto& arg : clause.args) {
        if (arg->kind == dsl::ExprKind::Name) {
          info.requires_.push_back(joined(arg->path));
          info.requires_versions.emplace_back();
          continue;
        }
        // `ID("RANGE")`: a pack and the versions of it this pack works with.
        if (arg->kind == dsl::ExprKind::Call && arg->args.size() == 1 &&
            arg->args[0]->kind == dsl::ExprKind::Str) {
          const dsl::Expr& range = *arg->args[0];
          if (check_constraint(range.sval, Version{}) == ConstraintResult::Malformed) {
            diags.error(f.source, range.loc, range.length,
                        fmt::format("bad version range '{}'", range.sval),
                        {"write comparisons with versions, like \">= 0.1, < 2\""});
            continue;
          }
          info.requires_.push_back(joined(arg->path));
          info.requires_versions.push_back(range.sval);
          continue;
        }
        diags.error(
            f.source, arg->loc, arg->length, "expected a pack id here",
            {"a pack id, or one with the versions it must have: glibc.pthread(\">= 0.1\")"});
      }
      continue;
    }
    if (clause.keyword == "applies") {
      read_conditions(f, clause, info, diags);
      continue;
    }
    if (clause.args.size() != 1 || clause.args[0]->kind != dsl::ExprKind::Str) {
      at_keyword(fmt::format("clause '{}' takes one string", clause.keyword));
      continue;
    }
    const dsl::Expr& value = *clause.args[0];
    if (clause.keyword == "version") {
      if (parse_pack_version(value.sval))
        info.version = value.sval;
      else
        diags.error(f.source, value.loc, value.length,
                    fmt::format("version '{}' is not of the form X.Y.Z", value.sval));
    } else if (clause.keyword == "engine") {
      info.engine = value.sval;
      auto current = parse_pack_version(engine_version());
      switch (check_constraint(value.sval, current.value_or(Version{}))) {
        case ConstraintResult::Satisfied: break;
        case ConstraintResult::Malformed:
          diags.error(f.source, value.loc, value.length,
                      fmt::format("bad engine constraint '{}'", value.sval),
                      {"write comparisons with versions, like \">= 0.1, < 2\""});
          break;
        case ConstraintResult::Unsatisfied:
          diags.error(f.source, value.loc, value.length,
                      fmt::format("pack '{}' needs causeway {}, this is {}", info.id, value.sval,
                                  engine_version()));
          break;
      }
    } else {
      info.description = value.sval;
    }
  }
  if (!seen.count("version"))
    diags.error(f.source, header.id_loc, width(header.id.size()),
                fmt::format("missing clause 'version' in pack '{}'", header.id),
                {"add `version \"0.1.0\"` to the pack header"});
}

// Every `requires` must name a loaded pack of a version in its range, and requirements
// must not loop. Only one copy of a pack is loaded, so two packs that need versions of it
// no copy can have both are named together.
void resolve(const std::vector<PackUnit>& packs, Diagnostics& diags) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < packs.size(); ++i) index[packs[i].info.id] = i;
  struct Need {
    const PackUnit* by;
    const dsl::Expr* arg;
    std::string range;
  };
  std::map<std::string, std::vector<Need>> needs;  // by required pack
  for (const auto& pack : packs) {
    const dsl::PackHeader& header = *pack.files.front()->pack;
    for (const auto& clause : header.clauses) {
      if (clause.keyword != "requires") continue;
      for (const auto& arg : clause.args) {
        const bool ranged = arg->kind == dsl::ExprKind::Call && arg->args.size() == 1 &&
                            arg->args[0]->kind == dsl::ExprKind::Str;
        if (arg->kind != dsl::ExprKind::Name && !ranged) continue;
        std::string id = joined(arg->path);
        if (!index.count(id)) {
          diags.error(pack.info.header_source, arg->loc, arg->length,
                      fmt::format("pack '{}' requires '{}', which is not loaded", pack.info.id, id),
                      {"add it with --rules, or put it on CAUSEWAY_RULES_PATH"});
          continue;
        }
        if (ranged) needs[id].push_back({&pack, arg.get(), arg->args[0]->sval});
      }
    }
  }
  for (const auto& [id, list] : needs) {
    const PackInfo& have = packs[index[id]].info;
    const auto version = parse_pack_version(have.version);
    if (!version) continue;  // the header's own error says why
    for (const Need& n : list) {
      if (check_constraint(n.range, *version) != ConstraintResult::Unsatisfied) continue;
      std::vector<std::string> hints = {
          fmt::format("{} {} is loaded from {}", id, have.version,
                      have.files.empty() ? std::string("memory") : have.files.front())};
      for (const Need& other : list)
        if (&other != &n && !constraints_overlap(n.range, other.range))
          hints.push_back(fmt::format(
              "it conflicts with pack '{}', which requires {} \"{}\" ({}:{}): no version of {} "
              "is in both ranges",
              other.by->info.id, id, other.range, other.by->info.header_source->path,
              other.arg->loc.line, id));
      hints.push_back("load a copy of " + id + " in the range (--rules, a search folder)");
      diags.error(n.by->info.header_source, n.arg->loc, n.arg->length,
                  fmt::format("pack '{}' requires {} \"{}\", but {} {} is loaded", n.by->info.id,
                              id, n.range, id, have.version),
                  std::move(hints));
    }
  }
  enum class Mark { New, Active, Done };
  std::vector<Mark> mark(packs.size(), Mark::New);
  // Depth first with its own stack, not recursion: a chain of 50,000 packs each requiring
  // the next overflowed the call stack. `path` holds the packs being visited and, for
  // each, the next of its requirements to follow.
  std::vector<std::pair<size_t, size_t>> path;
  for (size_t root = 0; root < packs.size(); ++root) {
    if (mark[root] != Mark::New) continue;
    mark[root] = Mark::Active;
    path.push_back({root, 0});
    while (!path.empty()) {
      auto& [p, next] = path.back();
      const auto& reqs = packs[p].info.requires_;
      if (next == reqs.size()) {
        mark[p] = Mark::Done;
        path.pop_back();
        continue;
      }
      auto it = index.find(reqs[next++]);
      if (it == index.end()) continue;
      size_t q = it->second;
      if (mark[q] == Mark::Active) {
        std::string cycle;
        auto start = std::find_if(path.begin(), path.end(),
                                  [&](const auto& step) { return step.first == q; });
        for (auto i = start; i != path.end(); ++i) cycle += packs[i->first].info.id + " -> ";
        cycle += packs[q].info.id;
        const PackInfo& first = packs[q].info;
        diags.error(first.header_source, first.header_loc, 4,
                    fmt::format("packs require each other in a cycle: {}", cycle));
      } else if (mark[q] == Mark::New) {
        mark[q] = Mark::Active;
        path.push_back({q, 0});  // `p` and `next` are not used past this point
      }
    }
  }
}

// Groups parsed files into packs (docs/rules.md "Packs"), in the order of their headers.
std::vector<PackUnit> group(const std::vector<ParsedFile>& files, Diagnostics& diags) {
  // A standard pack whose id a user's pack also has is left out with its files: checking
  // another copy of the standard packs must not load them twice.
  constexpr size_t kReplaced = SIZE_MAX;
  std::set<std::string> user_ids;
  for (const auto& f : files)
    if (f.file.pack && !f.standard) user_ids.insert(f.file.pack->id);
  std::vector<PackUnit> packs;
  std::map<std::string, size_t> by_id;
  std::vector<std::pair<std::string, size_t>> folder_packs;  // folder -> pack
  for (const auto& f : files) {
    if (!f.file.pack) {
      if (f.pack_cw)
        diags.error(f.source, {}, 1, "pack.cw does not start with a pack header",
                    {"start it with `pack ID { ... }`"});
      continue;
    }
    const dsl::PackHeader& header = *f.file.pack;
    if (f.standard && user_ids.count(header.id)) {
      if (f.pack_cw) folder_packs.emplace_back(f.dir, kReplaced);
      continue;
    }
    if (auto it = by_id.find(header.id); it != by_id.end()) {
      diags.error(f.source, header.id_loc, width(header.id.size()),
                  fmt::format("duplicate pack id '{}'", header.id));
      const PackInfo& first = packs[it->second].info;
      diags.note(first.header_source, first.header_loc, 4, "first defined here");
      continue;
    }
    PackUnit unit;
    unit.info.id = header.id;
    unit.info.header_source = f.source;
    unit.info.header_loc = header.loc;
    unit.info.files.push_back(f.source->path);
    unit.info.sources.push_back(f.source);
    unit.files.push_back(&f.file);
    read_header(f, unit.info, diags);
    by_id[header.id] = packs.size();
    if (f.pack_cw) folder_packs.emplace_back(f.dir, packs.size());
    packs.push_back(std::move(unit));
  }
  for (const auto& f : files) {
    if (f.file.pack || f.pack_cw) continue;
    // The nearest pack.cw above the file owns it.
    const std::pair<std::string, size_t>* owner = nullptr;
    for (const auto& folder : folder_packs)
      if (dir_contains(folder.first, f.dir) &&
          (!owner || folder.first.size() > owner->first.size()))
        owner = &folder;
    if (!owner) {
      diags.error(f.source, {}, 1, "file is not part of a pack",
                  {"start it with `pack ID { ... }` or put a pack.cw beside it"});
      continue;
    }
    if (owner->second == kReplaced) continue;
    packs[owner->second].files.push_back(&f.file);
    packs[owner->second].info.files.push_back(f.source->path);
    packs[owner->second].info.sources.push_back(f.source);
  }
  return packs;
}

LoadResult load(const std::vector<SourcePtr>& sources, Diagnostics diags,
                const std::set<const Source*>& standard = {}) {
  std::vector<ParsedFile> files;
  files.reserve(sources.size());
  for (const auto& source : sources) {
    dsl::ParseResult parsed = dsl::parse(source);
    for (auto& d : parsed.diagnostics) diags.add(std::move(d));
    fs::path path = fs::path(source->path).lexically_normal();
    std::string dir = path.parent_path().generic_string();
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    files.push_back(ParsedFile{source, std::move(parsed.file), dir, path.filename() == "pack.cw",
                               standard.count(source.get()) > 0});
  }
  std::vector<PackUnit> packs = group(files, diags);
  resolve(packs, diags);
  LoadResult result;
  LintFacts facts = check_packs(packs, result.rules, diags);
  sort_edges(result.rules);
  if (!diags.has_errors())
    for (auto& w : lint(result.rules, facts)) diags.add(std::move(w));
  result.diagnostics = diags.sorted(sources);
  return result;
}

SourcePtr path_only_source(const std::string& path) {
  return make_source(path, "");
}

}  // namespace

LoadResult load_sources(const std::vector<SourcePtr>& sources) {
  return load(sources, {});
}

LoadResult load_packs(const std::vector<std::string>& paths) {
  return load_packs({}, paths);
}

LoadResult load_packs(const std::vector<std::string>& standard_paths,
                      const std::vector<std::string>& paths) {
  Diagnostics diags;
  std::vector<std::string> found;
  size_t standard_files = 0;  // the first files found are the standard packs'
  std::vector<std::string> all = standard_paths;
  all.insert(all.end(), paths.begin(), paths.end());
  for (size_t i = 0; i < all.size(); ++i) {
    if (i == standard_paths.size()) standard_files = found.size();
    const std::string& path = all[i];
    std::error_code ec;
    auto status = fs::status(path, ec);
    if (ec || !fs::exists(status)) {
      diags.error(path_only_source(path), {}, 1, "no such file or folder");
      continue;
    }
    if (!fs::is_directory(status)) {
      found.push_back(path);
      continue;
    }
    // Sorted, so a folder loads the same way on every machine.
    std::vector<std::string> in_folder;
    fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if (it->is_regular_file(ec) && it->path().extension() == ".cw")
        in_folder.push_back(it->path().generic_string());
    if (ec) diags.error(path_only_source(path), {}, 1, "cannot list folder: " + ec.message());
    if (in_folder.empty() && !ec)
      diags.error(path_only_source(path), {}, 1, "no rule files (*.cw) in this folder");
    std::sort(in_folder.begin(), in_folder.end());
    found.insert(found.end(), in_folder.begin(), in_folder.end());
  }
  if (standard_paths.size() == all.size()) standard_files = found.size();
  std::vector<SourcePtr> sources;
  std::set<const Source*> standard;
  std::set<std::string> seen;  // a file reached twice is loaded once
  for (size_t i = 0; i < found.size(); ++i) {
    const std::string& path = found[i];
    std::error_code ec;
    std::string canonical = fs::weakly_canonical(path, ec).string();
    if (!seen.insert(ec ? path : canonical).second) continue;
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    if (in) text << in.rdbuf();
    if (!in || in.bad()) {
      diags.error(path_only_source(path), {}, 1, "cannot read this file");
      continue;
    }
    sources.push_back(make_source(path, text.str()));
    if (i < standard_files) standard.insert(sources.back().get());
  }
  return load(sources, std::move(diags), standard);
}

}  // namespace cw::rules
