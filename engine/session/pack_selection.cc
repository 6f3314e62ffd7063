#include "engine/session/pack_selection.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <set>

#include "engine/session/pack_paths.h"

namespace cw::session {

namespace {

std::string_view base_name(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool matches(const std::string& glob, std::string_view text) {
  return fnmatch(glob.c_str(), std::string(text).c_str(), 0) == 0;
}

std::string process_name(const Trace& trace, Pid pid) {
  const ProcessInfo* p = trace.process(pid);
  return fmt::format("{} {}", p && p->comm ? trace.strings.get(p->comm) : "pid", pid);
}

// Where the condition holds in `trace`: "" when nowhere.
std::string holds(const rules::PackCondition& c, const Trace& trace) {
  using Kind = rules::PackCondition::Kind;
  switch (c.kind) {
    case Kind::Library:
      for (const MapRecord& m : trace.maps) {
        const std::string_view file = base_name(trace.strings.get(m.path));
        if (m.path && matches(c.glob, file))
          return fmt::format("library {} mapped in {}", file, process_name(trace, m.pid));
      }
      return "";
    case Kind::Program:
      for (const ProcessInfo& p : trace.processes) {
        for (StrId name : {p.comm, p.exe}) {
          if (name == 0) continue;
          const std::string_view text = base_name(trace.strings.get(name));
          if (matches(c.glob, text)) return fmt::format("program {} (pid {})", text, p.pid);
        }
      }
      return "";
    case Kind::Symbol: {
      std::set<StrId> seen;
      for (const Stack& s : trace.stacks) {
        for (StrId id : s.symbols)
          if (id != 0 && seen.insert(id).second && matches(c.glob, trace.strings.get(id)))
            return fmt::format("function {} on a recorded stack", trace.strings.get(id));
        for (const Frame& f : s.frames)
          if (f.function != 0 && seen.insert(f.function).second &&
              matches(c.glob, trace.strings.get(f.function)))
            return fmt::format("function {} on a recorded stack", trace.strings.get(f.function));
      }
      return "";
    }
  }
  return "";
}

}  // namespace

std::string applies_because(const rules::PackInfo& pack, const Trace& trace) {
  if (pack.applies.empty()) return "always (no conditions)";
  for (const rules::PackCondition& c : pack.applies)
    if (std::string where = holds(c, trace); !where.empty()) return where;
  return "";
}

bool any_conditional(const rules::RuleSet& rules) {
  return std::any_of(rules.packs.begin(), rules.packs.end(),
                     [](const rules::PackInfo& p) { return !p.applies.empty(); });
}

std::vector<std::string> keep_applying(rules::LoadResult& loaded, const Trace& trace,
                                       const std::vector<std::string>& explicit_paths) {
  std::vector<std::string> given;
  for (const std::string& p : explicit_paths) given.push_back(canonical_path(p));
  std::vector<std::string> keep, left_out;
  for (const rules::PackInfo& pack : loaded.rules.packs) {
    const bool asked = std::any_of(pack.files.begin(), pack.files.end(), [&](const auto& f) {
      const std::string file = canonical_path(f);
      return std::any_of(given.begin(), given.end(),
                         [&](const std::string& g) { return path_within(g, file); });
    });
    if (asked || !applies_because(pack, trace).empty())
      keep.push_back(pack.id);
    else
      left_out.push_back(pack.id);
  }
  if (left_out.empty()) return {};
  loaded.rules = rules::select_packs(loaded.rules, keep);
  // A pack kept because another needs it is not left out.
  std::erase_if(left_out, [&](const std::string& id) { return loaded.rules.pack(id) != nullptr; });
  return left_out;
}

}  // namespace cw::session
