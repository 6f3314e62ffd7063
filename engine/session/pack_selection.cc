#include "engine/session/pack_selection.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <set>
#include <utility>

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

std::vector<AppliedPack> keep_applying(rules::LoadResult& loaded, const Trace& trace,
                                       const std::vector<std::string>& explicit_paths) {
  const std::vector<std::string> asked = packs_from(loaded.rules, explicit_paths);
  std::vector<std::string> keep;
  std::vector<AppliedPack> applied;
  for (const rules::PackInfo& pack : loaded.rules.packs) {
    const bool given = std::find(asked.begin(), asked.end(), pack.id) != asked.end();
    std::string why = applies_because(pack, trace);
    if (why.empty() && given) why = "given with --rules (none of its conditions holds)";
    if (why.empty()) continue;
    keep.push_back(pack.id);
    if (!pack.applies.empty()) applied.push_back({pack.id, std::move(why)});
  }
  if (keep.size() < loaded.rules.packs.size())
    loaded.rules = rules::select_packs(loaded.rules, keep);
  return applied;
}

}  // namespace cw::session
