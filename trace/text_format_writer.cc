// Writing the text trace format (docs/trace-format.md): every table as records, every
// event as a line, in the form the parser (text_format.cc) reads back to the same trace.
#include <fmt/format.h>

#include <string>
#include <string_view>
#include <unordered_set>

#include "base/quoted.h"
#include "trace/text_format.h"

namespace cw {

namespace {

bool needs_quotes(std::string_view s) {
  if (s.empty()) return true;
  for (unsigned char c : s)
    if (c <= ' ' || c == '"' || c == '\\' || c == 0x7f) return true;
  return false;
}

void append_value_string(std::string& out, std::string_view s) {
  if (needs_quotes(s))
    append_quoted(out, s);
  else
    out += s;
}

// A record's positional word (a map's path, a jit's name): a bare one holding '=' would
// read as a field, one starting with '#' as a comment, so those are quoted too.
void append_record_word(std::string& out, std::string_view s) {
  if (s.find('=') != std::string_view::npos || s.starts_with('#'))
    append_quoted(out, s);
  else
    append_value_string(out, s);
}

std::string format_time(uint64_t ns) {
  if (ns == 0) return "0";
  if (ns % 1000000000 == 0) return fmt::format("{}s", ns / 1000000000);
  if (ns % 1000000 == 0) return fmt::format("{}ms", ns / 1000000);
  if (ns % 1000 == 0) return fmt::format("{}us", ns / 1000);
  return fmt::format("{}", ns);
}

// A frame the parser would read back differently when written bare (it looks like an
// address, or ends in "@0x...") is written as symbol@0xADDR even when ADDR is 0.
bool symbol_is_ambiguous(std::string_view sym) {
  return sym.substr(0, 2) == "0x" || sym.find('@') != std::string_view::npos;
}

std::string format_stack(const Trace& trace, const Stack& stack) {
  std::string out;
  for (size_t i = stack.ips.size(); i-- > 0;) {
    if (!out.empty()) out += ';';
    StrId sym = i < stack.symbols.size() ? stack.symbols[i] : 0;
    std::string_view name = trace.strings.get(sym);
    uint64_t ip = stack.ips[i];
    if (sym != 0 && ip == 0 && !symbol_is_ambiguous(name))
      out += name;
    else if (sym != 0)
      out += fmt::format("{}@0x{:x}", name, ip);
    else
      out += fmt::format("0x{:x}", ip);
  }
  return out;
}

}  // namespace

std::string write_text_trace(const Trace& trace) {
  std::string out = fmt::format("{} {}\n", kTextTraceHeader, Trace::kFormatMajor);
  auto str = [&](StrId id) { return trace.strings.get(id); };
  // The tables are histories: an id's later entries are written as updates.
  std::unordered_set<Pid> written_pids;
  for (const auto& p : trace.processes) {
    if (!written_pids.insert(p.pid).second) out += "update ";
    out += fmt::format("process {}", p.pid);
    if (p.comm) out += " comm=", append_value_string(out, str(p.comm));
    if (p.ppid) out += fmt::format(" ppid={}", p.ppid);
    if (p.exe) out += " exe=", append_value_string(out, str(p.exe));
    out += '\n';
  }
  std::unordered_set<Tid> written_tids;
  for (const auto& t : trace.threads) {
    if (!written_tids.insert(t.tid).second) out += "update ";
    out += fmt::format("thread {} pid={}", t.tid, t.pid);
    if (t.comm) out += " comm=", append_value_string(out, str(t.comm));
    if (t.kernel) out += " kernel";
    out += '\n';
  }
  for (const auto& l : trace.lost)
    out += fmt::format("lost cpu={} count={} at={}\n", l.cpu, l.count, format_time(l.ts));
  for (const auto& l : trace.losses) {
    std::string_view name = loss_kind_name(l.kind);
    out += fmt::format("loss {} count={} at={}\n",
                       name.empty() ? std::to_string(static_cast<uint32_t>(l.kind)) : name, l.count,
                       format_time(l.ts));
  }
  for (const auto& m : trace.maps) {
    out += fmt::format("map {} 0x{:x}-0x{:x} 0x{:x} ", m.pid, m.start, m.end, m.pgoff);
    append_record_word(out, str(m.path));
    if (m.build_id) out += fmt::format(" build_id={}", str(m.build_id));
    if (m.ts) out += fmt::format(" at={}", format_time(m.ts));
    out += '\n';
  }
  for (const auto& j : trace.jit_symbols) {
    out += fmt::format("jit {} 0x{:x}-0x{:x} ", j.pid, j.start, j.start + j.size);
    append_record_word(out, str(j.name));
    if (j.ts) out += fmt::format(" at={}", format_time(j.ts));
    out += '\n';
  }
  for (const auto& e : trace.events) {
    const KindDef& def = trace.schema.kind(e.kind);
    out += fmt::format("{} {} {}", e.ts, e.tid, def.name);
    if (e.cpu) out += fmt::format(" cpu={}", e.cpu);
    for (size_t f = 0; f < def.fields.size(); ++f) {
      uint64_t v = trace.value(e, static_cast<int>(f));
      if (v == 0) continue;
      out += ' ';
      out += def.fields[f].name;
      out += '=';
      switch (def.fields[f].type) {
        case FieldType::Str: append_value_string(out, str(static_cast<StrId>(v))); break;
        case FieldType::Int: out += fmt::format("{}", static_cast<int64_t>(v)); break;
        case FieldType::Uint:
          out += v >= 0x10000 ? fmt::format("0x{:x}", v) : fmt::format("{}", v);
          break;
        case FieldType::Tid: out += fmt::format("{}", v); break;
      }
    }
    if (e.stack) {
      out += " stack=";
      append_value_string(out, format_stack(trace, trace.stacks[e.stack]));
    }
    out += '\n';
  }
  return out;
}

}  // namespace cw
