#include "trace/perf_script.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>

#include "base/chars.h"
#include "trace/syscall_names.h"

namespace cw {

namespace {

bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_digit);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

std::optional<uint64_t> parse_decimal(std::string_view s) {
  uint64_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<int64_t> parse_signed(std::string_view s) {
  int64_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// Hexadecimal with or without 0x.
std::optional<uint64_t> parse_hex(std::string_view s) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  uint64_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// "SECONDS.FRACTION:" (perf prints microseconds, nanoseconds with --ns) in ns.
std::optional<uint64_t> parse_time(std::string_view s) {
  if (s.size() < 4 || s.back() != ':') return std::nullopt;
  s.remove_suffix(1);
  const size_t dot = s.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const std::string_view whole = s.substr(0, dot), frac = s.substr(dot + 1);
  if (!all_digits(whole) || !all_digits(frac)) return std::nullopt;
  const auto seconds = parse_decimal(whole);
  if (!seconds || *seconds > UINT64_MAX / 1000000000ull - 1) return std::nullopt;
  uint64_t ns = 0;
  for (size_t i = 0; i < 9; ++i) ns = ns * 10 + (i < frac.size() ? frac[i] - '0' : 0);
  return *seconds * 1000000000ull + ns;
}

// "TID" or "PID/TID".
struct TaskId {
  std::optional<Pid> pid;
  Tid tid = 0;
};
std::optional<TaskId> parse_task(std::string_view s) {
  const size_t slash = s.find('/');
  const std::string_view tid_text = slash == std::string_view::npos ? s : s.substr(slash + 1);
  if (!all_digits(tid_text)) return std::nullopt;
  const auto tid = parse_decimal(tid_text);
  if (!tid || *tid > UINT32_MAX) return std::nullopt;
  TaskId t;
  t.tid = static_cast<Tid>(*tid);
  if (slash != std::string_view::npos) {
    const std::string_view pid_text = s.substr(0, slash);
    if (!all_digits(pid_text)) return std::nullopt;
    const auto pid = parse_decimal(pid_text);
    if (!pid || *pid > UINT32_MAX) return std::nullopt;
    t.pid = static_cast<Pid>(*pid);
  }
  return t;
}

bool is_cpu_token(std::string_view s) {
  return s.size() > 2 && s.front() == '[' && s.back() == ']' &&
         all_digits(s.substr(1, s.size() - 2));
}

struct Token {
  std::string_view text;
  size_t byte = 0;  // offset in the source
};

std::vector<Token> tokenize(std::string_view text, size_t pos, size_t end) {
  std::vector<Token> out;
  while (pos < end) {
    while (pos < end && is_blank(text[pos])) ++pos;
    if (pos >= end) break;
    const size_t start = pos;
    while (pos < end && !is_blank(text[pos])) ++pos;
    out.push_back({text.substr(start, pos - start), start});
  }
  return out;
}

// The header line's parts. `time` is the index of the time token; the tokens before it
// are COMM (any number of words: perf prints the name as it is, blanks included), the
// task and an optional [CPU].
struct Header {
  std::string_view comm;
  TaskId task;
  uint16_t cpu = 0;
  uint64_t ts = 0;
  size_t after_time = 0;  // index of the first token after the time
};

std::optional<Header> parse_header(const std::vector<Token>& tokens, std::string_view line,
                                   size_t line_start) {
  for (size_t k = 1; k < tokens.size(); ++k) {
    const auto ts = parse_time(tokens[k].text);
    if (!ts) continue;
    size_t j = k - 1;
    uint16_t cpu = 0;
    if (is_cpu_token(tokens[j].text)) {
      const auto n = parse_decimal(tokens[j].text.substr(1, tokens[j].text.size() - 2));
      if (!n || *n > UINT16_MAX || j == 0) continue;
      cpu = static_cast<uint16_t>(*n);
      --j;
    }
    const auto task = parse_task(tokens[j].text);
    if (!task) continue;
    Header h;
    h.task = *task;
    h.cpu = cpu;
    h.ts = *ts;
    h.after_time = k + 1;
    if (j > 0) {
      const size_t from = tokens[0].byte - line_start;
      const size_t to = tokens[j - 1].byte + tokens[j - 1].text.size() - line_start;
      h.comm = line.substr(from, to - from);
    }
    return h;
  }
  return std::nullopt;
}

// The text of `key=` in a tracepoint's "key=value key=value" payload: up to the next
// blank, or, for a name that may hold blanks (a comm, a file name), up to " next_key=".
std::optional<std::string_view> field(std::string_view payload, std::string_view key,
                                      std::string_view next_key = {}) {
  size_t at = 0;
  while (true) {
    at = payload.find(key, at);
    if (at == std::string_view::npos) return std::nullopt;
    const size_t end_key = at + key.size();
    // "pid=" is not the end of "prev_pid=".
    if ((at == 0 || payload[at - 1] == ' ') && end_key < payload.size() && payload[end_key] == '=')
      break;
    at = end_key;
  }
  const size_t value = at + key.size() + 1;
  size_t stop = std::string_view::npos;
  if (!next_key.empty()) {
    const std::string marker = fmt::format(" {}=", next_key);
    stop = payload.find(marker, value);
  }
  if (stop == std::string_view::npos) stop = payload.find(' ', value);
  if (stop == std::string_view::npos) stop = payload.size();
  return payload.substr(value, stop - value);
}

// What an event becomes, decided at the end (see Parser::finish).
enum class Origin : uint8_t {
  Plain,
  SwitchIn,     // the next thread of a sched_switch: kept if that thread was recorded
  SchedWakeup,  // sched_wakeup: left out when sched_waking was recorded too
};

class Parser {
 public:
  Parser(const SourcePtr& source, std::vector<std::string>* notes)
      : source_(source), text_(source->text), notes_(notes) {
    k_switch_out_ = kind("switch_out");
    k_switch_in_ = kind("switch_in");
    k_wakeup_ = kind("wakeup");
    k_wakeup_new_ = kind("wakeup_new");
    k_fork_ = kind("fork");
    k_exec_ = kind("exec");
    k_exit_ = kind("exit");
    k_sys_enter_ = kind("syscall_enter");
    k_sys_exit_ = kind("syscall_exit");
    k_sample_ = kind("sample");
  }

  Trace parse() {
    size_t pos = 0;
    while (pos < text_.size()) {
      size_t nl = text_.find('\n', pos);
      size_t line_end = nl == std::string_view::npos ? text_.size() : nl;
      size_t content_end = line_end;
      if (content_end > pos && text_[content_end - 1] == '\r') --content_end;
      line_start_ = pos;
      parse_line(pos, content_end);
      if (nl == std::string_view::npos) break;
      pos = nl + 1;
      ++line_;
    }
    end_event();
    if (headers_ == 0) {
      line_ = 1;
      line_start_ = 0;
      fail(0, 1,
           "no events: perf script output starts with a line 'COMM TID [CPU] SECONDS: EVENT: "
           "...'");
    }
    finish();
    return std::move(trace_);
  }

 private:
  KindId kind(std::string_view name) const {
    const KindId k = trace_.schema.find(name);
    if (k == kNoKind) throw std::logic_error(fmt::format("builtin kind '{}' missing", name));
    return k;
  }

  [[noreturn]] void fail(size_t byte, size_t length, std::string message) {
    Diagnostic d;
    d.source = source_;
    d.loc.line = line_;
    d.loc.col = static_cast<uint32_t>(byte - line_start_ + 1);
    d.loc.byte = static_cast<uint32_t>(std::min<size_t>(byte, UINT32_MAX));
    d.length = static_cast<uint32_t>(std::clamp<size_t>(length, 1, 1u << 16));
    d.message = std::move(message);
    throw DiagnosticError(std::move(d));
  }

  void parse_line(size_t pos, size_t end) {
    const std::string_view line = text_.substr(pos, end - pos);
    if (trim(line).empty()) {
      end_event();
      return;
    }
    if (line.front() == '\t') {
      parse_frame(pos, end);
      return;
    }
    if (trim(line).front() == '#') return;  // perf script --header, or a comment
    end_event();
    parse_event(pos, end);
  }

  // ---- call-chain frames: "\tADDR SYMBOL+0xOFF (DSO)" ----
  void parse_frame(size_t pos, size_t end) {
    if (!pending_)
      fail(pos, 1, "a call-chain frame (a line starting with a tab) with no event line before it");
    while (pos < end && is_blank(text_[pos])) ++pos;
    size_t addr_end = pos;
    while (addr_end < end && !is_blank(text_[addr_end])) ++addr_end;
    const std::string_view addr_text = text_.substr(pos, addr_end - pos);
    const bool hex = !addr_text.empty() && std::all_of(addr_text.begin(), addr_text.end(), is_hex);
    const auto addr = hex ? parse_hex(addr_text) : std::nullopt;
    if (!addr)
      fail(pos, addr_text.size(),
           fmt::format("expected the frame's address in hexadecimal, not '{}'", addr_text));
    add_frame(*addr, trim(text_.substr(addr_end, end - addr_end)));
  }

  // `rest` is "SYMBOL+0xOFF (DSO)", "SYMBOL (DSO)", "[unknown] ([unknown])" or "SYMBOL".
  void add_frame(uint64_t addr, std::string_view rest) {
    std::string_view dso;
    if (!rest.empty() && rest.back() == ')') {
      // The DSO is the last parenthesised group: a path may hold parentheses of its own
      // ("/memfd:x (deleted)"), and a C++ symbol does too, so match them from the end.
      int depth = 0;
      for (size_t i = rest.size(); i-- > 0;) {
        if (rest[i] == ')') ++depth;
        if (rest[i] == '(' && --depth == 0) {
          if (i == 0 || rest[i - 1] == ' ') {
            dso = rest.substr(i + 1, rest.size() - i - 2);
            rest = trim(rest.substr(0, i));
          }
          break;
        }
      }
    }
    // A trace's stack is the user stack; the kernel half of perf's chain (entry code,
    // the scheduler) would be a different leaf on every event.
    if (addr >= 0xffff800000000000ull || dso.starts_with("[kernel.") ||
        dso == "[guest.kernel.kallsyms]")
      return;
    std::string_view symbol = rest;
    if (const size_t plus = symbol.rfind("+0x"); plus != std::string_view::npos && plus > 0) {
      const std::string_view off = symbol.substr(plus + 3);
      if (!off.empty() && std::all_of(off.begin(), off.end(), is_hex))
        symbol = symbol.substr(0, plus);
    }
    // "clock_nanosleep@GLIBC_2.2.5" is "clock_nanosleep" (trace/symbolize.cc names it so,
    // and rules match the plain name).
    if (const size_t at = symbol.find('@'); at != std::string_view::npos && at > 0) {
      const std::string_view version = symbol.substr(at);
      if (version.find_first_of(" ()<>") == std::string_view::npos) symbol = symbol.substr(0, at);
    }
    if (symbol == "[unknown]") symbol = {};
    frame_ips_.push_back(addr);
    frame_symbols_.push_back(symbol.empty() ? 0 : trace_.strings.intern(symbol));
  }

  // ---- event header lines ----
  void parse_event(size_t pos, size_t end) {
    const std::string_view line = text_.substr(pos, end - pos);
    const auto tokens = tokenize(text_, pos, end);
    const auto header = parse_header(tokens, line, pos);
    if (!header) {
      const Token& first = tokens.front();
      fail(first.byte, end - first.byte,
           "expected an event line 'COMM TID [CPU] SECONDS.MICROSECONDS: [PERIOD] EVENT: ...' "
           "(perf script's default fields)");
    }
    ++headers_;
    Pending p;
    p.header = *header;
    size_t k = header->after_time;
    note_task(header->task, header->comm);
    if (k < tokens.size() && tokens[k].text.starts_with("PERF_RECORD_")) {
      task_event(tokens[k], end);  // --show-task-events: ids only, no event
      return;
    }
    if (k < tokens.size() && all_digits(tokens[k].text)) {
      const auto period = parse_decimal(tokens[k].text);
      if (!period) fail(tokens[k].byte, tokens[k].text.size(), "period out of range");
      p.period = *period;
      p.has_period = true;
      ++k;
    }
    if (k >= tokens.size()) {
      const Token& last = tokens.back();
      fail(last.byte + last.text.size(), 1, "expected the event's name after the time");
    }
    const Token& ev = tokens[k];
    if (ev.text.size() < 2 || ev.text.back() != ':')
      fail(ev.byte, ev.text.size(),
           fmt::format("expected the event's name ending in ':', not '{}'", ev.text));
    p.event = ev.text.substr(0, ev.text.size() - 1);
    p.event_byte = ev.byte;
    size_t payload = ev.byte + ev.text.size();
    while (payload < end && is_blank(text_[payload])) ++payload;
    p.payload = text_.substr(payload, end - payload);
    p.payload_byte = payload;
    p.line = line_;
    p.line_start = line_start_;
    pending_ = p;
    frame_ips_.clear();
    frame_symbols_.clear();
  }

  void note_task(const TaskId& t, std::string_view comm) {
    ThreadAcc& acc = tasks_[t.tid];
    acc.recorded = true;
    if (t.pid) acc.pid = *t.pid;
    if (!comm.empty()) acc.comm = trace_.strings.intern(comm);
  }

  // "PERF_RECORD_COMM[ exec]: NAME:PID/TID", "PERF_RECORD_FORK(PID:TID):(PPID:PTID)",
  // "PERF_RECORD_EXIT(PID:TID):(PPID:PTID)": which process each thread is in.
  void task_event(const Token& tok, size_t end) {
    const std::string_view rest = text_.substr(tok.byte, end - tok.byte);
    if (rest.starts_with("PERF_RECORD_COMM")) {
      const size_t colon = rest.rfind(':');
      if (colon == std::string_view::npos) return;
      const auto task = parse_task(trim(rest.substr(colon + 1)));
      if (!task) return;
      ThreadAcc& acc = tasks_[task->tid];
      if (task->pid) acc.pid = *task->pid;
      const size_t name = rest.find(": ");
      if (name != std::string_view::npos && name + 2 <= colon)
        acc.comm = trace_.strings.intern(rest.substr(name + 2, colon - name - 2));
      return;
    }
    if (rest.starts_with("PERF_RECORD_FORK(") || rest.starts_with("PERF_RECORD_EXIT(")) {
      // (PID:TID):(PPID:PTID)
      auto pair = [&](size_t open) -> std::optional<std::pair<uint64_t, uint64_t>> {
        const size_t close = rest.find(')', open);
        if (open == std::string_view::npos || close == std::string_view::npos) return {};
        const std::string_view inner = rest.substr(open + 1, close - open - 1);
        const size_t colon = inner.find(':');
        if (colon == std::string_view::npos) return {};
        const auto a = parse_decimal(inner.substr(0, colon));
        const auto b = parse_decimal(inner.substr(colon + 1));
        if (!a || !b || *a > UINT32_MAX || *b > UINT32_MAX) return {};
        return std::pair{*a, *b};
      };
      const auto child = pair(rest.find('('));
      if (!child) return;
      tasks_[static_cast<Tid>(child->second)].pid = static_cast<Pid>(child->first);
      if (const auto parent = pair(rest.find('(', rest.find(')'))))
        parent_of_[static_cast<Pid>(child->first)] = static_cast<Pid>(parent->first);
    }
  }

  // ---- the event, once its call chain has been read ----
  struct Pending {
    Header header;
    std::string_view event, payload;
    size_t event_byte = 0, payload_byte = 0;
    uint64_t period = 0;
    bool has_period = false;
    uint32_t line = 0;
    size_t line_start = 0;
  };

  StackId intern_stack() {
    if (frame_ips_.empty()) return 0;
    std::string key(frame_ips_.size() * 12, '\0');
    for (size_t i = 0; i < frame_ips_.size(); ++i) {
      std::memcpy(&key[i * 12], &frame_ips_[i], 8);
      std::memcpy(&key[i * 12 + 8], &frame_symbols_[i], 4);
    }
    auto [it, added] = stack_ids_.try_emplace(std::move(key), 0);
    if (added) {
      Stack s;
      s.ips = frame_ips_;
      if (std::any_of(frame_symbols_.begin(), frame_symbols_.end(), [](StrId x) { return x; }))
        s.symbols = frame_symbols_;
      it->second = trace_.add_stack(std::move(s));
    }
    return it->second;
  }

  void end_event() {
    if (!pending_) return;
    const Pending p = *pending_;
    pending_.reset();
    // Errors in the payload point at its line, not at the blank line that ended it.
    const uint32_t line = line_;
    const size_t line_start = line_start_;
    line_ = p.line;
    line_start_ = p.line_start;
    // `perf record` without -g: a sample's one frame is on its line.
    if (frame_ips_.empty() && p.has_period && !p.payload.empty()) {
      const auto tokens = tokenize(p.payload, 0, p.payload.size());
      if (tokens.size() >= 2 && std::all_of(tokens[0].text.begin(), tokens[0].text.end(), is_hex))
        if (const auto addr = parse_hex(tokens[0].text))
          add_frame(*addr, trim(p.payload.substr(tokens[0].text.size())));
    }
    add_event(p, intern_stack());
    frame_ips_.clear();
    frame_symbols_.clear();
    line_ = line;
    line_start_ = line_start;
  }

  [[noreturn]] void fail_payload(const Pending& p, std::string message) {
    fail(p.payload_byte, std::max<size_t>(p.payload.size(), 1), std::move(message));
  }

  int64_t tid_field(const Pending& p, std::string_view key) {
    const auto text = field(p.payload, key);
    const auto v = text ? parse_decimal(*text) : std::nullopt;
    if (!v || *v > UINT32_MAX)
      fail_payload(p, fmt::format("{}: expected '{}=' and a thread id", p.event, key));
    return static_cast<int64_t>(*v);
  }

  Event& emit(const Pending& p, KindId k, StackId stack, Tid tid, Origin origin = Origin::Plain) {
    origins_.push_back(origin);
    return trace_.add_event(p.header.ts, tid, k, p.header.cpu, stack);
  }

  void set(const Event& e, std::string_view field_name, uint64_t v) {
    const int i = trace_.schema.field_index(e.kind, field_name);
    if (i >= 0) trace_.value_ref(e, i) = v;
  }
  void set_str(const Event& e, std::string_view field_name, std::string_view s) {
    set(e, field_name, trace_.strings.intern(s));
  }

  void add_event(const Pending& p, StackId stack) {
    const Tid tid = p.header.task.tid;
    std::string_view ev = p.event;
    // "sched:sched_switch" and the like; a name with no group is a hardware or software
    // event (cpu-clock, cycles).
    const size_t colon = ev.find(':');
    const std::string_view group = colon == std::string_view::npos ? "" : ev.substr(0, colon);
    const std::string_view name = colon == std::string_view::npos ? ev : ev.substr(colon + 1);

    if (group == "sched" && name == "sched_switch") {
      // "prev_comm=C prev_pid=N prev_prio=N prev_state=S ==> next_comm=C next_pid=N next_prio=N"
      const int64_t prev = tid_field(p, "prev_pid");
      const int64_t next = tid_field(p, "next_pid");
      std::string state(field(p.payload, "prev_state").value_or("").substr(0, 1));
      Event& out = emit(p, k_switch_out_, stack, static_cast<Tid>(prev));
      set_str(out, "state", state);
      if (next != 0) {  // 0 is the idle task
        emit(p, k_switch_in_, 0, static_cast<Tid>(next), Origin::SwitchIn);
        if (auto comm = field(p.payload, "next_comm", "next_pid"))
          next_comm_.try_emplace(static_cast<Tid>(next), trace_.strings.intern(*comm));
      }
      return;
    }
    if (group == "sched" &&
        (name == "sched_waking" || name == "sched_wakeup" || name == "sched_wakeup_new")) {
      // "comm=C pid=N prio=N target_cpu=N"
      const int64_t target = tid_field(p, "pid");
      const bool fresh = name == "sched_wakeup_new";
      if (name == "sched_waking") seen_waking_ = true;
      const Event& out = emit(p, fresh ? k_wakeup_new_ : k_wakeup_, stack, tid,
                              name == "sched_wakeup" ? Origin::SchedWakeup : Origin::Plain);
      set(out, "target", static_cast<uint64_t>(target));
      return;
    }
    if (group == "sched" && name == "sched_process_fork") {
      // "comm=C pid=N child_comm=C child_pid=N"
      const int64_t child = tid_field(p, "child_pid");
      const Event& out = emit(p, k_fork_, stack, tid);
      set(out, "child", static_cast<uint64_t>(child));
      forks_.push_back(trace_.events.size() - 1);
      return;
    }
    if (group == "sched" && name == "sched_process_exec") {
      // "filename=PATH pid=N old_pid=N"
      const Event& out = emit(p, k_exec_, stack, tid);
      set_str(out, "path", field(p.payload, "filename", "pid").value_or(""));
      return;
    }
    if (group == "sched" && name == "sched_process_exit") {
      emit(p, k_exit_, stack, tid);
      return;
    }
    if (group == "raw_syscalls" && (name == "sys_enter" || name == "sys_exit")) {
      // "NR 0 (3, 7ffd..., 340, ...)" and "NR 0 = 832"
      if (!p.payload.starts_with("NR "))
        fail_payload(p, fmt::format("{}: expected 'NR' and the system call number", ev));
      const std::string_view rest = p.payload.substr(3);
      const size_t stop = rest.find(' ');
      const auto nr = parse_signed(rest.substr(0, stop));
      if (!nr) fail_payload(p, fmt::format("{}: expected 'NR' and the system call number", ev));
      std::string sys(*nr >= 0 ? x86_64_syscall_name(static_cast<uint64_t>(*nr)) : "");
      if (sys.empty()) sys = fmt::format("syscall_{}", *nr);
      if (name == "sys_enter") {
        syscall_enter(p, stack, tid, sys);
      } else {
        const Event& out = emit(p, k_sys_exit_, stack, tid);
        set_str(out, "name", sys);
        const size_t eq = rest.find("= ");
        if (eq != std::string_view::npos)
          if (const auto ret = parse_signed(trim(rest.substr(eq + 2))))
            set(out, "ret", static_cast<uint64_t>(*ret));
      }
      return;
    }
    if (group == "syscalls" && (name.starts_with("sys_enter_") || name.starts_with("sys_exit_"))) {
      const bool enter = name.starts_with("sys_enter_");
      const std::string_view sys = name.substr(enter ? 10 : 9);
      if (enter) {
        // "fd: 0x00000003, buf: 0x7ffd..., count: 0x00000340"
        const Event& out = syscall_enter(p, stack, tid, sys);
        size_t at = 0;
        while (at < p.payload.size()) {
          size_t comma = p.payload.find(", ", at);
          if (comma == std::string_view::npos) comma = p.payload.size();
          const std::string_view arg = p.payload.substr(at, comma - at);
          at = comma + 2;
          const size_t sep = arg.find(": ");
          if (sep == std::string_view::npos) continue;
          const auto v = parse_hex(trim(arg.substr(sep + 2)));
          if (!v) continue;
          const std::string_view key = arg.substr(0, sep);
          // An fd argument is a C int, printed as its 32 bits (AT_FDCWD is 0xffffff9c).
          if (key == "fd") set(out, "fd", static_cast<uint64_t>(int64_t{static_cast<int32_t>(*v)}));
          if (key == "count") set(out, "count", *v);
        }
      } else {
        const Event& out = emit(p, k_sys_exit_, stack, tid);
        set_str(out, "name", sys);
        if (const auto ret = parse_hex(trim(p.payload))) set(out, "ret", *ret);
      }
      return;
    }
    // Everything else is where the thread was at that moment: a sample.
    const Event& out = emit(p, k_sample_, stack, tid);
    set_str(out, "event", ev);
    set(out, "period", p.has_period ? p.period : 0);
  }

  const Event& syscall_enter(const Pending& p, StackId stack, Tid tid, std::string_view sys) {
    const Event& out = emit(p, k_sys_enter_, stack, tid);
    set_str(out, "name", sys);
    // Not known from perf's output: as the recorder writes them for a call without.
    set(out, "fd", static_cast<uint64_t>(int64_t{-1}));
    set(out, "timeout_ns", static_cast<uint64_t>(int64_t{-1}));
    return out;
  }

  void finish() {
    // Keep a sched_switch's next thread only if the recording followed it (perf record
    // -p/-- CMD sees the others only as they take the CPU), and sched_wakeup only when
    // sched_waking, which the wakeup kind stands for, was not recorded too.
    std::vector<Event> kept;
    kept.reserve(trace_.events.size());
    std::vector<size_t> new_index(trace_.events.size(), SIZE_MAX);
    uint64_t dropped_wakeups = 0;
    for (size_t i = 0; i < trace_.events.size(); ++i) {
      const Event& e = trace_.events[i];
      if (origins_[i] == Origin::SwitchIn && !tasks_[e.tid].recorded) continue;
      if (origins_[i] == Origin::SchedWakeup && seen_waking_) {
        ++dropped_wakeups;
        continue;
      }
      new_index[i] = kept.size();
      kept.push_back(e);
    }
    trace_.events = std::move(kept);

    // Threads: every thread an event is on. Its process is what perf printed (PID/TID,
    // task events); without that, the thread is taken for a process of its own.
    bool pid_missing = false;
    std::map<Tid, ThreadInfo> threads;
    for (const Event& e : trace_.events) {
      if (threads.count(e.tid)) continue;
      ThreadAcc& acc = tasks_[e.tid];
      ThreadInfo t;
      t.tid = e.tid;
      t.pid = acc.pid.value_or(e.tid);
      if (!acc.pid && e.tid != 0) pid_missing = true;
      t.comm = acc.comm;
      if (t.comm == 0)
        if (auto it = next_comm_.find(e.tid); it != next_comm_.end()) t.comm = it->second;
      t.kernel = e.tid == 0;
      threads.emplace(e.tid, t);
    }
    std::map<Pid, ProcessInfo> processes;
    for (const auto& [tid, t] : threads) {
      ProcessInfo& p = processes[t.pid];
      p.pid = t.pid;
      // The process is named by its main thread, else by its first thread.
      if (p.comm == 0 || (tid == t.pid && t.comm != 0)) p.comm = t.comm;
      if (auto it = parent_of_.find(t.pid); it != parent_of_.end()) p.ppid = it->second;
    }
    for (auto& [tid, t] : threads) trace_.threads.push_back(t);
    for (auto& [pid, p] : processes) trace_.processes.push_back(p);

    // A fork's child: its process, and whether it shares its parent's.
    for (size_t i : forks_) {
      if (new_index[i] == SIZE_MAX) continue;
      const Event& e = trace_.events[new_index[i]];
      const Tid child =
          static_cast<Tid>(trace_.value(e, trace_.schema.field_index(k_fork_, "child")));
      auto it = tasks_.find(child);
      const Pid child_pid = it != tasks_.end() && it->second.pid ? *it->second.pid : child;
      set(e, "child_pid", child_pid);
      const auto parent = tasks_.find(e.tid);
      const bool same = parent != tasks_.end() && parent->second.pid &&
                        *parent->second.pid == child_pid && child != child_pid;
      set(e, "thread", same ? 1 : 0);
    }
    trace_.sort_events();
    trace_.rebuild_indexes();

    if (!notes_) return;
    if (pid_missing)
      notes_->push_back(
          "perf script did not print process ids: each thread is taken for a process of its "
          "own (perf script --show-task-events prints them)");
    if (dropped_wakeups)
      notes_->push_back(fmt::format(
          "{} sched_wakeup events left out: sched_waking was recorded too", dropped_wakeups));
  }

  struct ThreadAcc {
    std::optional<Pid> pid;
    StrId comm = 0;
    bool recorded = false;  // some event line was on this thread
  };

  SourcePtr source_;
  std::string_view text_;
  std::vector<std::string>* notes_;
  Trace trace_;
  uint32_t line_ = 1;
  size_t line_start_ = 0;
  uint64_t headers_ = 0;
  std::optional<Pending> pending_;
  std::vector<uint64_t> frame_ips_;
  std::vector<StrId> frame_symbols_;
  std::unordered_map<std::string, StackId> stack_ids_;
  std::vector<Origin> origins_;  // per event, in the order added
  std::vector<size_t> forks_;    // fork events, by index as added
  std::unordered_map<Tid, ThreadAcc> tasks_;
  std::unordered_map<Tid, StrId> next_comm_;
  std::unordered_map<Pid, Pid> parent_of_;
  bool seen_waking_ = false;
  KindId k_switch_out_, k_switch_in_, k_wakeup_, k_wakeup_new_, k_fork_, k_exec_, k_exit_,
      k_sys_enter_, k_sys_exit_, k_sample_;
};

}  // namespace

bool looks_like_perf_script(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string_view content = trim(line);
    if (!content.empty() && content.front() != '#') {
      if (line.front() == '\t') return false;  // a frame before any event
      const auto tokens = tokenize(line, 0, line.size());
      const auto header = parse_header(tokens, line, 0);
      // The time must be followed by something: the event name or a task event.
      return header && header->after_time < tokens.size();
    }
    pos = nl + 1;
  }
  return false;
}

Trace parse_perf_script(const SourcePtr& source, std::vector<std::string>* notes) {
  return Parser(source, notes).parse();
}

}  // namespace cw
