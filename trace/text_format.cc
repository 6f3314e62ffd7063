#include "trace/text_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "base/chars.h"
#include "base/quoted.h"
#include "trace/thread_moves.h"

namespace cw {

namespace {

// A whitespace-separated word of one line; `byte` is its offset in the whole source.
struct Token {
  std::string_view text;
  size_t byte = 0;
};

struct KeyValue {
  Token key;
  Token value;  // empty text when the token had no '='
  bool has_equals = false;
};

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decimal digits, or 0x and hex digits (whatever the magnitude).
bool is_number_syntax(std::string_view s) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
    return std::all_of(s.begin() + 2, s.end(), [](char c) { return hex_digit(c) >= 0; });
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return is_digit(c); });
}

// Unsigned decimal or 0x-hex; nullopt on bad syntax or overflow.
std::optional<uint64_t> parse_unsigned(std::string_view s) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    uint64_t v = 0;
    for (char c : s.substr(2)) {
      int d = hex_digit(c);
      if (d < 0 || v > (UINT64_MAX >> 4)) return std::nullopt;
      v = (v << 4) | static_cast<uint64_t>(d);
    }
    return v;
  }
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

class TextParser {
 public:
  TextParser(const SourcePtr& source, size_t begin, size_t end)
      : source_(source), text_(source->text) {
    begin_ = std::min(begin, text_.size());
    end_ = std::min(end, text_.size());
    if (end_ < begin_) end_ = begin_;
    line_ = 1 + static_cast<uint32_t>(std::count(text_.begin(), text_.begin() + begin_, '\n'));
    size_t nl = begin_ == 0 ? std::string::npos : text_.rfind('\n', begin_ - 1);
    line_start_ = nl == std::string::npos ? 0 : nl + 1;
    first_line_ = line_;
    first_line_start_ = line_start_;
  }

  Trace parse() {
    size_t pos = begin_;
    // An editor's UTF-8 byte order mark may open the file.
    if (pos == 0 && text_.compare(0, 3, "\xEF\xBB\xBF") == 0) pos = 3;
    while (pos < end_) {
      size_t nl = text_.find('\n', pos);
      size_t line_end = (nl == std::string::npos || nl > end_) ? end_ : nl;
      size_t content_end = line_end;
      if (content_end > pos && text_[content_end - 1] == '\r') --content_end;
      // A NUL is refused, not kept inside a name or a value where it would cut the text
      // short in every C string the name reaches (a binary trace has its own reader).
      if (const void* nul = std::memchr(text_.data() + pos, '\0', content_end - pos)) {
        const size_t at = static_cast<const char*>(nul) - text_.data();
        fail(at, 1, fmt::format("a NUL byte (byte {}) in a text trace", at),
             {"a text trace holds no NUL; a binary trace starts with the bytes CWTRACE"});
      }
      parse_line(pos, content_end);
      if (line_end >= end_) break;
      pos = line_end + 1;
      line_start_ = pos;
      ++line_;
    }
    if (!seen_header_) {  // nothing but blank lines and comments
      line_ = first_line_;
      line_start_ = first_line_start_;
      fail(begin_, 1, "missing header: a trace starts with 'causeway-trace 1'");
    }
    finish();
    return std::move(trace_);
  }

 private:
  [[noreturn]] void fail(size_t byte, size_t length, std::string message,
                         std::vector<std::string> hints = {}) {
    Diagnostic d;
    d.source = source_;
    d.loc.line = line_;
    d.loc.col = static_cast<uint32_t>(byte - line_start_ + 1);
    d.loc.byte = static_cast<uint32_t>(byte);
    d.length = static_cast<uint32_t>(std::max<size_t>(1, length));
    d.message = std::move(message);
    d.hints = std::move(hints);
    throw DiagnosticError(std::move(d));
  }
  [[noreturn]] void fail(const Token& t, std::string message, std::vector<std::string> hints = {}) {
    fail(t.byte, t.text.size(), std::move(message), std::move(hints));
  }

  static std::vector<std::string> did_you_mean(std::string_view word,
                                               const std::vector<std::string>& candidates) {
    std::string best = closest_match(word, candidates);
    if (best.empty()) return {};
    return {fmt::format("did you mean '{}'?", best)};
  }

  // Splits [pos, end) into tokens; a token starting with '#' begins a comment. Quoted
  // sections may hold blanks, so they are skipped as a whole.
  std::vector<Token> tokenize(size_t pos, size_t end) {
    std::vector<Token> tokens;
    while (pos < end) {
      while (pos < end && is_blank(text_[pos])) ++pos;
      if (pos >= end || text_[pos] == '#') break;
      size_t start = pos;
      while (pos < end && !is_blank(text_[pos])) {
        if (text_[pos] == '"') {
          size_t quote = pos++;
          while (pos < end && text_[pos] != '"') pos += text_[pos] == '\\' ? 2 : 1;
          if (pos >= end) fail(quote, 1, "unterminated string");
        }
        ++pos;
      }
      tokens.push_back(Token{std::string_view(text_).substr(start, pos - start), start});
    }
    last_byte_ = pos;
    return tokens;
  }

  KeyValue split(const Token& t) {
    KeyValue kv;
    size_t eq = t.text.find('=');
    if (eq == std::string_view::npos) {
      kv.key = t;
      return kv;
    }
    kv.has_equals = true;
    kv.key = Token{t.text.substr(0, eq), t.byte};
    kv.value = Token{t.text.substr(eq + 1), t.byte + eq + 1};
    if (kv.key.text.empty()) fail(t, fmt::format("expected FIELD=VALUE, got '{}'", t.text));
    if (kv.value.text.empty())
      fail(t.byte + eq, 1, fmt::format("missing value for field '{}'", kv.key.text));
    return kv;
  }

  [[noreturn]] void fail_at_end(std::string message) { fail(last_byte_, 1, std::move(message)); }

  std::string unquote(const Token& value) {
    std::string_view v = value.text;
    if (v.empty() || v[0] != '"') {
      if (auto q = v.find('"'); q != std::string_view::npos)
        fail(value.byte + q, 1, "a quoted string must be the whole value");
      return std::string(v);
    }
    std::string out;
    size_t i = 1;
    for (; i < v.size() && v[i] != '"'; ++i) {
      if (v[i] != '\\') {
        out += v[i];
        continue;
      }
      char e = i + 1 < v.size() ? v[i + 1] : '\0';
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        default:
          fail(value.byte + i, 2, fmt::format("unknown escape '\\{}' (use \\\" \\\\ \\n \\t)", e));
      }
      ++i;
    }
    if (i + 1 != v.size()) fail(value.byte + i + 1, 1, "a quoted string must be the whole value");
    return out;
  }

  uint64_t parse_int(const Token& value, std::string_view field, FieldType type) {
    std::string_view v = value.text;
    bool negative = !v.empty() && v[0] == '-';
    std::optional<uint64_t> magnitude = parse_unsigned(negative ? v.substr(1) : v);
    const bool is_signed = type == FieldType::Int;
    if (!magnitude) {
      if (is_number_syntax(negative ? v.substr(1) : v))
        fail(value, fmt::format("integer '{}' is out of range for field '{}'", v, field));
      fail(value, fmt::format("field '{}' needs {} integer, got '{}'", field,
                              is_signed ? "an" : "an unsigned", v));
    }
    if (negative) {
      if (!is_signed)
        fail(value, fmt::format("field '{}' needs an unsigned integer, got '{}'", field, v));
      if (*magnitude > (uint64_t{1} << 63))
        fail(value, fmt::format("integer '{}' is out of range for field '{}'", v, field));
      return ~*magnitude + 1;
    }
    if (type == FieldType::Tid && *magnitude > UINT32_MAX)
      fail(value, fmt::format("integer '{}' is out of range for field '{}'", v, field));
    return *magnitude;
  }

  uint64_t parse_bounded(const Token& value, std::string_view what, uint64_t max) {
    uint64_t v = parse_int(value, what, FieldType::Uint);
    if (v > max)
      fail(value, fmt::format("integer '{}' is out of range for field '{}'", value.text, what));
    return v;
  }

  // TIME: integer ns, or a decimal with a unit (ns, us, ms, s).
  uint64_t parse_time(const Token& t) {
    std::string_view v = t.text;
    size_t i = 0;
    while (i < v.size() && is_digit(v[i])) ++i;
    std::string_view whole = v.substr(0, i), fraction;
    if (i < v.size() && v[i] == '.') {
      size_t f = ++i;
      while (i < v.size() && is_digit(v[i])) ++i;
      fraction = v.substr(f, i - f);
      if (fraction.empty()) fail(t, fmt::format("bad time '{}'", v));
    }
    if (whole.empty()) fail(t, fmt::format("bad time '{}'", v));
    std::string_view unit = v.substr(i);
    uint64_t scale = 0;
    unsigned scale_digits = 0;
    if (unit.empty() || unit == "ns")
      scale = 1, scale_digits = 0;
    else if (unit == "us")
      scale = 1000, scale_digits = 3;
    else if (unit == "ms")
      scale = 1000000, scale_digits = 6;
    else if (unit == "s")
      scale = 1000000000, scale_digits = 9;
    else
      fail(t, fmt::format("bad time '{}': unknown unit '{}' (use ns, us, ms or s)", v, unit));
    if (unit.empty() && !fraction.empty())
      fail(t, fmt::format("bad time '{}': a fraction needs a unit (ns, us, ms or s)", v));
    if (fraction.size() > scale_digits)
      fail(t, fmt::format("bad time '{}': finer than a nanosecond", v));
    uint64_t n = 0;
    auto [ptr, ec] = std::from_chars(whole.data(), whole.data() + whole.size(), n);
    uint64_t frac = 0;
    for (char c : fraction) frac = frac * 10 + static_cast<uint64_t>(c - '0');
    for (size_t k = fraction.size(); k < scale_digits; ++k) frac *= 10;
    if (ec != std::errc() || n > (UINT64_MAX - frac) / scale)
      fail(t, fmt::format("time '{}' is out of range", v));
    (void)ptr;
    return n * scale + frac;
  }

  void parse_line(size_t pos, size_t end) {
    std::vector<Token> tokens = tokenize(pos, end);
    if (tokens.empty()) return;
    const Token& first = tokens[0];
    if (first.text == kTextTraceHeader) return parse_header(tokens);
    if (!seen_header_) fail(first, "missing header: a trace starts with 'causeway-trace 1'");
    if (is_digit(first.text[0])) return parse_event(tokens);
    if (first.text == "process") return parse_process(tokens);
    if (first.text == "thread") return parse_thread(tokens);
    if (first.text == "lost") return parse_lost(tokens);
    if (first.text == "map") return parse_map(tokens);
    if (first.text == "loss") return parse_loss(tokens);
    if (first.text == "jit") return parse_jit(tokens);
    if (first.text == "update") return parse_update(tokens);
    fail(first,
         fmt::format("unknown record '{}': a line starts with a time, 'process', 'thread', "
                     "'update', 'lost', 'loss', 'map' or 'jit'",
                     first.text),
         did_you_mean(first.text, {"process", "thread", "update", "lost", "loss", "map", "jit"}));
  }

  // update process PID FIELDS, update thread TID FIELDS: a later state of a process or
  // thread declared above (after an exec or a rename, or its id reused by a new one),
  // which holds for the whole trace, as the last entry of an id does in the binary form.
  void parse_update(const std::vector<Token>& tokens) {
    Token what = required(tokens, 1, "'process' or 'thread' after 'update'");
    if (what.text == "process") return parse_process(tokens, 1, true);
    if (what.text == "thread") return parse_thread(tokens, 1, true);
    fail(what, fmt::format("'update' is followed by 'process' or 'thread', not '{}'", what.text),
         did_you_mean(what.text, {"process", "thread"}));
  }

  void parse_header(const std::vector<Token>& tokens) {
    if (seen_header_) fail(tokens[0], "duplicate 'causeway-trace' header");
    if (tokens.size() < 2) fail_at_end("expected the format version after 'causeway-trace'");
    const Token& version = tokens[1];
    std::string_view major_text = version.text.substr(0, version.text.find('.'));
    std::string_view minor_text = version.text.substr(major_text.size());
    if (!minor_text.empty()) minor_text.remove_prefix(1);
    bool minor_ok = major_text.size() == version.text.size() || is_number_syntax(minor_text);
    std::optional<uint64_t> major = parse_unsigned(major_text);
    if (!major || *major == 0 || !minor_ok || !is_digit(major_text[0]) ||
        major_text.substr(0, 2) == "0x")
      fail(version, fmt::format("bad trace format version '{}'", version.text));
    if (*major > Trace::kFormatMajor)
      fail(version, fmt::format("trace format version {} is newer than this causeway reads ({}); "
                                "upgrade causeway",
                                version.text, Trace::kFormatMajor));
    if (tokens.size() > 2) fail(tokens[2], "unexpected text after the header");
    seen_header_ = true;
  }

  // Fields of process/thread/lost records: KEY=VALUE words from a fixed set.
  template <typename Handle>
  void parse_record_fields(const std::vector<Token>& tokens, size_t from, std::string_view record,
                           const std::vector<std::string>& keys, Handle&& handle) {
    std::unordered_set<std::string_view> seen;
    for (size_t i = from; i < tokens.size(); ++i) {
      KeyValue kv = split(tokens[i]);
      if (record == "thread" && !kv.has_equals && kv.key.text == "kernel") {
        if (!seen.insert("kernel").second) fail(kv.key, "field 'kernel' is given twice");
        handle(kv);
        continue;
      }
      if (std::find(keys.begin(), keys.end(), kv.key.text) == keys.end()) {
        if (!kv.has_equals)
          fail(kv.key, fmt::format("expected FIELD=VALUE, got '{}'", kv.key.text),
               did_you_mean(kv.key.text, keys));
        fail(kv.key, fmt::format("unknown field '{}' of {} record", kv.key.text, record),
             did_you_mean(kv.key.text, keys));
      }
      if (!kv.has_equals)
        fail(kv.key.byte + kv.key.text.size(), 1,
             fmt::format("missing value for field '{}'", kv.key.text));
      if (!seen.insert(kv.key.text).second)
        fail(kv.key, fmt::format("field '{}' is given twice", kv.key.text));
      handle(kv);
    }
  }

  Token required(const std::vector<Token>& tokens, size_t i, std::string_view what) {
    if (i >= tokens.size()) fail_at_end(fmt::format("expected {}", what));
    return tokens[i];
  }

  // `at`: the index of the word 'process' (1 after 'update').
  void parse_process(const std::vector<Token>& tokens, size_t at = 0, bool update = false) {
    Token id = required(tokens, at + 1, "a process id after 'process'");
    ProcessInfo p;
    p.pid = static_cast<Pid>(parse_bounded(id, "pid", UINT32_MAX));
    const bool fresh = declared_pids_.insert(p.pid).second;
    if (update && fresh)
      fail(id, fmt::format("process {} is updated before it is declared", p.pid),
           {fmt::format("declare it first: 'process {} ...'", p.pid)});
    if (!update && !fresh)
      fail(id, fmt::format("process {} is declared twice", p.pid),
           {fmt::format("a later state of the same process (after an exec or a rename) is "
                        "written 'update process {} ...'",
                        p.pid)});
    parse_record_fields(tokens, at + 2, "process", {"comm", "ppid", "exe"},
                        [&](const KeyValue& kv) {
                          if (kv.key.text == "comm")
                            p.comm = trace_.strings.intern(unquote(kv.value));
                          else if (kv.key.text == "exe")
                            p.exe = trace_.strings.intern(unquote(kv.value));
                          else
                            p.ppid = static_cast<Pid>(parse_bounded(kv.value, "ppid", UINT32_MAX));
                        });
    trace_.processes.push_back(p);
  }

  void parse_thread(const std::vector<Token>& tokens, size_t at = 0, bool update = false) {
    Token id = required(tokens, at + 1, "a thread id after 'thread'");
    ThreadInfo t;
    t.tid = static_cast<Tid>(parse_bounded(id, "tid", UINT32_MAX));
    const bool fresh = declared_tids_.insert(t.tid).second;
    if (update && fresh)
      fail(id, fmt::format("thread {} is updated before it is declared", t.tid),
           {fmt::format("declare it first: 'thread {} ...'", t.tid)});
    if (!update && !fresh)
      fail(id, fmt::format("thread {} is declared twice", t.tid),
           {fmt::format("a later state of the same thread (after an exec or a rename) is "
                        "written 'update thread {} ...'",
                        t.tid)});
    thread_records_.push_back({line_, line_start_, id});
    parse_record_fields(tokens, at + 2, "thread", {"pid", "comm", "kernel"},
                        [&](const KeyValue& kv) {
                          if (kv.key.text == "kernel")
                            t.kernel = true;
                          else if (kv.key.text == "comm")
                            t.comm = trace_.strings.intern(unquote(kv.value));
                          else
                            t.pid = static_cast<Pid>(parse_bounded(kv.value, "pid", UINT32_MAX));
                        });
    trace_.threads.push_back(t);
  }

  void parse_lost(const std::vector<Token>& tokens) {
    LostRecord l;
    parse_record_fields(tokens, 1, "lost", {"cpu", "count", "at"}, [&](const KeyValue& kv) {
      if (kv.key.text == "cpu")
        l.cpu = static_cast<uint16_t>(parse_bounded(kv.value, "cpu", 0xffff));
      else if (kv.key.text == "count")
        l.count = parse_int(kv.value, "count", FieldType::Uint);
      else
        l.ts = parse_time(kv.value);
    });
    trace_.lost.push_back(l);
  }

  // loss KIND count=N [at=TIME]: KIND a name (hook_log, ...) or, for a kind from a newer
  // recorder, its number.
  void parse_loss(const std::vector<Token>& tokens) {
    LossRecord l;
    const Token kind = required(tokens, 1, "a kind of loss after 'loss'");
    std::vector<std::string> names;
    for (LossKind k : kLossKinds) names.emplace_back(loss_kind_name(k));
    if (auto known = loss_kind_from_name(kind.text))
      l.kind = *known;
    else if (auto number = parse_unsigned(kind.text);
             number && *number > 0 && *number <= UINT32_MAX)
      l.kind = static_cast<LossKind>(*number);
    else
      fail(kind, fmt::format("unknown kind of loss '{}'", kind.text),
           did_you_mean(kind.text, names));
    parse_record_fields(tokens, 2, "loss", {"count", "at"}, [&](const KeyValue& kv) {
      if (kv.key.text == "count")
        l.count = parse_int(kv.value, "count", FieldType::Uint);
      else
        l.ts = parse_time(kv.value);
    });
    trace_.losses.push_back(l);
  }

  // START-END, END above START.
  std::pair<uint64_t, uint64_t> parse_range(const Token& range) {
    size_t dash = range.text.find('-');
    std::optional<uint64_t> start, end;
    if (dash != std::string_view::npos) {
      start = parse_unsigned(range.text.substr(0, dash));
      end = parse_unsigned(range.text.substr(dash + 1));
    }
    if (!start || !end)
      fail(range, fmt::format("bad address range '{}': expected START-END, e.g. "
                              "0x400000-0x401000",
                              range.text));
    if (*end <= *start)
      fail(range, fmt::format("empty address range '{}': END must be above START", range.text));
    return {*start, *end};
  }

  // map PID START-END PGOFF PATH [build_id=HEX] [at=TIME]
  void parse_map(const std::vector<Token>& tokens) {
    MapRecord m;
    m.pid = static_cast<Pid>(
        parse_bounded(required(tokens, 1, "a process id after 'map'"), "pid", UINT32_MAX));
    std::tie(m.start, m.end) =
        parse_range(required(tokens, 2, "an address range START-END after the process id"));
    m.pgoff = parse_int(required(tokens, 3, "the file offset after the address range"), "pgoff",
                        FieldType::Uint);
    Token path = required(tokens, 4, "the file path after the file offset");
    if (path.text.find('=') != std::string_view::npos && path.text[0] != '"')
      fail(path,
           fmt::format("expected the file path, got '{}' (quote a path holding '=')", path.text));
    m.path = trace_.strings.intern(unquote(path));
    parse_record_fields(tokens, 5, "map", {"build_id", "at"}, [&](const KeyValue& kv) {
      if (kv.key.text == "at") {
        m.ts = parse_time(kv.value);
        return;
      }
      std::string_view hex = kv.value.text;
      if (!std::all_of(hex.begin(), hex.end(), [](char c) { return hex_digit(c) >= 0; }))
        fail(kv.value, fmt::format("build_id needs hex digits, got '{}'", hex));
      std::string lower(hex);
      for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'F' ? c - 'A' + 'a' : c);
      m.build_id = trace_.strings.intern(lower);
    });
    trace_.maps.push_back(m);
  }

  // jit PID START-END NAME [at=TIME]
  void parse_jit(const std::vector<Token>& tokens) {
    JitSymbol j;
    j.pid = static_cast<Pid>(
        parse_bounded(required(tokens, 1, "a process id after 'jit'"), "pid", UINT32_MAX));
    const auto [start, end] =
        parse_range(required(tokens, 2, "an address range START-END after the process id"));
    j.start = start;
    j.size = end - start;
    Token name = required(tokens, 3, "the function's name after the address range");
    if (name.text.find('=') != std::string_view::npos && name.text[0] != '"')
      fail(name, fmt::format("expected the function's name, got '{}' (quote a name holding '=')",
                             name.text));
    j.name = trace_.strings.intern(unquote(name));
    parse_record_fields(tokens, 4, "jit", {"at"},
                        [&](const KeyValue& kv) { j.ts = parse_time(kv.value); });
    trace_.jit_symbols.push_back(j);
  }

  // stack=FRAMES: outermost first, `;`-separated; stored innermost first.
  StackId parse_stack(const Token& value) {
    const bool quoted = value.text[0] == '"';
    std::string frames_text = unquote(value);
    if (auto it = stack_ids_.find(frames_text); it != stack_ids_.end()) return it->second;
    Stack stack;
    bool any_symbol = false;
    size_t start = 0;
    while (true) {
      size_t semi = frames_text.find(';', start);
      size_t stop = semi == std::string::npos ? frames_text.size() : semi;
      std::string_view frame = std::string_view(frames_text).substr(start, stop - start);
      Token where = quoted ? value : Token{frame, value.byte + start};
      if (frame.empty())
        fail(quoted ? value
                    : Token{std::string_view(";"),
                            value.byte + (start < frames_text.size() ? start : start - 1)},
             "empty frame in stack");
      uint64_t ip = 0;
      StrId symbol = 0;
      size_t at = frame.rfind('@');
      if (frame.size() > 2 && frame.substr(0, 2) == "0x" && at == std::string_view::npos) {
        auto addr = parse_unsigned(frame);
        if (!addr) fail(where, fmt::format("bad address '{}' in stack frame", frame));
        ip = *addr;
      } else if (at != std::string_view::npos && frame.substr(at + 1, 2) == "0x") {
        std::string_view addr_text = frame.substr(at + 1);
        auto addr = parse_unsigned(addr_text);
        if (!addr) fail(where, fmt::format("bad address '{}' in stack frame", addr_text));
        if (at == 0) fail(where, fmt::format("missing symbol before '@' in '{}'", frame));
        ip = *addr;
        symbol = trace_.strings.intern(frame.substr(0, at));
      } else {
        symbol = trace_.strings.intern(frame);
      }
      any_symbol |= symbol != 0;
      stack.ips.push_back(ip);
      stack.symbols.push_back(symbol);
      if (semi == std::string::npos) break;
      start = semi + 1;
    }
    std::reverse(stack.ips.begin(), stack.ips.end());
    std::reverse(stack.symbols.begin(), stack.symbols.end());
    if (!any_symbol) stack.symbols.clear();
    StackId id = trace_.add_stack(std::move(stack));
    stack_ids_.emplace(std::move(frames_text), id);
    return id;
  }

  const std::vector<std::string>& kind_names() {
    if (kind_names_.empty())
      for (const auto& k : trace_.schema.kinds()) kind_names_.push_back(k.name);
    return kind_names_;
  }

  void parse_event(const std::vector<Token>& tokens) {
    uint64_t ts = parse_time(tokens[0]);
    Token tid_token = required(tokens, 1, "a thread id after the time");
    Tid tid = static_cast<Tid>(parse_bounded(tid_token, "tid", UINT32_MAX));
    Token kind_token = required(tokens, 2, "an event kind after the thread id");
    KindId kind = trace_.schema.find(kind_token.text);
    if (kind == kNoKind)
      fail(kind_token, fmt::format("unknown event kind '{}'", kind_token.text),
           did_you_mean(kind_token.text, kind_names()));
    const KindDef& def = trace_.schema.kind(kind);

    uint16_t cpu = 0;
    StackId stack = 0;
    std::vector<std::pair<int, uint64_t>> values;
    std::unordered_set<std::string_view> seen;
    for (size_t i = 3; i < tokens.size(); ++i) {
      KeyValue kv = split(tokens[i]);
      std::string_view name = kv.key.text;
      int field = trace_.schema.field_index(kind, name);
      if (field < 0 && name != "cpu" && name != "stack") {
        std::vector<std::string> names;
        for (const auto& f : def.fields) names.push_back(f.name);
        names.push_back("cpu");
        names.push_back("stack");
        std::vector<std::string> hints = did_you_mean(name, names);
        if (hints.empty())
          hints.push_back(
              def.fields.empty()
                  ? fmt::format("'{}' has no fields besides cpu and stack", def.name)
                  : fmt::format("'{}' has fields: {}", def.name, fmt::join(names, ", ")));
        if (!kv.has_equals)
          fail(kv.key, fmt::format("expected FIELD=VALUE, got '{}'", name), std::move(hints));
        fail(kv.key, fmt::format("unknown field '{}' of event '{}'", name, def.name),
             std::move(hints));
      }
      if (!kv.has_equals)
        fail(kv.key.byte + name.size(), 1, fmt::format("missing value for field '{}'", name));
      if (!seen.insert(name).second) fail(kv.key, fmt::format("field '{}' is given twice", name));
      if (name == "cpu" && field < 0) {
        cpu = static_cast<uint16_t>(parse_bounded(kv.value, "cpu", 0xffff));
      } else if (name == "stack" && field < 0) {
        stack = parse_stack(kv.value);
      } else if (def.fields[field].type == FieldType::Str) {
        values.emplace_back(field, trace_.strings.intern(unquote(kv.value)));
      } else {
        values.emplace_back(field, parse_int(kv.value, name, def.fields[field].type));
      }
    }
    const Event& e = trace_.add_event(ts, tid, kind, cpu, stack);
    for (auto [field, v] : values) trace_.value_ref(e, field) = v;
    // Thread 0 is no thread (the recorder's own notes are written on it, as the recorder
    // never declares it): declaring it here would make a text form read back differently
    // from the recording it was converted from.
    if (tid != 0 && !declared_tids_.count(tid) && implicit_tid_set_.insert(tid).second)
      implicit_tids_.push_back(tid);
  }

  // Threads used by events but never declared (thread 0 apart) get an entry of their own
  // process, so hand-written fixtures need not declare every thread.
  void finish() {
    // Which process a thread's events belong to decides where a root cause is reported:
    // an update may rename a thread, but moves it to another process only when a fork
    // event made its id a new thread there (the binary reader refuses the same).
    if (auto move = find_unexplained_thread_move(trace_)) {
      const ThreadRecord& r = thread_records_[move->entry];
      line_ = r.line;
      line_start_ = r.line_start;
      fail(
          r.id,
          fmt::format("thread {} is declared in process {} after process {}, and no fork "
                      "event creates it there",
                      trace_.threads[move->entry].tid, trace_.threads[move->entry].pid, move->from),
          {"a trace puts a thread in one process; its id is reused only by a new thread, "
           "which a fork event (child=TID child_pid=PID) creates"});
    }
    for (Tid tid : implicit_tids_)
      if (!declared_tids_.count(tid)) trace_.threads.push_back(ThreadInfo{tid, tid, 0, false});
    trace_.rebuild_indexes();
    trace_.sort_events();
    trace_.sort_maps();
  }

  SourcePtr source_;
  const std::string& text_;
  size_t begin_ = 0, end_ = 0;
  uint32_t line_ = 1, first_line_ = 1;
  size_t line_start_ = 0, first_line_start_ = 0;
  size_t last_byte_ = 0;  // end of the last tokenized line, for "expected ..." errors
  bool seen_header_ = false;
  Trace trace_;
  std::vector<std::string> kind_names_;
  std::unordered_set<Tid> declared_tids_, implicit_tid_set_;
  std::vector<Tid> implicit_tids_;
  std::unordered_set<Pid> declared_pids_;
  // Where each entry of trace_.threads was declared (the implicit ones come after).
  struct ThreadRecord {
    uint32_t line = 0;
    size_t line_start = 0;
    Token id;
  };
  std::vector<ThreadRecord> thread_records_;
  std::unordered_map<std::string, StackId> stack_ids_;
};

}  // namespace

Trace parse_text_trace(const SourcePtr& source, size_t begin, size_t end) {
  return TextParser(source, begin, end).parse();
}

}  // namespace cw
