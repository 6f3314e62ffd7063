#include "rules/lua_patterns.h"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstring>
#include <lua.hpp>
#include <string_view>
#include <utility>

namespace cw::rules {
namespace {

constexpr int kMaxCaptures = 32;  // LUA_MAXCAPTURES
constexpr int kMaxDepth = 200;    // nested matcher calls, as in the library
constexpr uint64_t kChargeEvery = 4096;
constexpr ptrdiff_t kNoMatch = -1;
constexpr ptrdiff_t kUnfinished = -1;  // a capture's length while it is open
constexpr ptrdiff_t kPosition = -2;    // the length of a "()" capture

ChargeSteps charge_of(lua_State* L, int upvalue) {
  return *static_cast<ChargeSteps*>(lua_touserdata(L, lua_upvalueindex(upvalue)));
}

bool class_matches(unsigned char c, unsigned char cls) {
  bool result;
  switch (std::tolower(cls)) {
    case 'a': result = std::isalpha(c); break;
    case 'c': result = std::iscntrl(c); break;
    case 'd': result = std::isdigit(c); break;
    case 'g': result = std::isgraph(c); break;
    case 'l': result = std::islower(c); break;
    case 'p': result = std::ispunct(c); break;
    case 's': result = std::isspace(c); break;
    case 'u': result = std::isupper(c); break;
    case 'w': result = std::isalnum(c); break;
    case 'x': result = std::isxdigit(c); break;
    case 'z': result = c == '\0'; break;  // deprecated, still in Lua 5.4
    default: return cls == c;             // an escaped punctuation character stands for itself
  }
  return std::isupper(cls) ? !result : result;
}

// A backtracking matcher over one subject and one pattern; positions are byte offsets.
class Matcher {
 public:
  Matcher(lua_State* L, std::string_view subject, std::string_view pattern, ChargeSteps charge)
      : L_(L), subject_(subject), pattern_(pattern), charge_(charge) {}

  void reset() {
    level_ = 0;
    depth_ = 0;
  }

  // Reports the steps not yet charged; every library call ends with it.
  void finish() {
    if (steps_ > 0) charge_(L_, steps_);
    steps_ = 0;
  }

  // Where a match of the pattern from `p` at subject offset `s` ends, or kNoMatch.
  ptrdiff_t match(ptrdiff_t s, size_t p) {
    if (++depth_ > kMaxDepth) luaL_error(L_, "pattern too complex");
    struct Leave {
      int& depth;
      ~Leave() { --depth; }
    } leave{depth_};
    const size_t end = pattern_.size();
    while (true) {
      step();
      if (p == end) return s;
      switch (pattern_[p]) {
        case '(':
          if (p + 1 < end && pattern_[p + 1] == ')') return start_capture(s, p + 2, kPosition);
          return start_capture(s, p + 1, kUnfinished);
        case ')': return end_capture(s, p + 1);
        case '$':
          if (p + 1 == end) return s == size() ? s : kNoMatch;
          break;
        case '%':
          if (p + 1 >= end) break;
          if (pattern_[p + 1] == 'b') {
            s = match_balance(s, p + 2);
            if (s == kNoMatch) return kNoMatch;
            p += 4;
            continue;
          }
          if (pattern_[p + 1] == 'f') {
            p += 2;
            if (p >= end || pattern_[p] != '[')
              luaL_error(L_, "missing '[' after '%%f' in pattern");
            size_t set_end = class_end(p);
            unsigned char before = s == 0 ? '\0' : byte(s - 1);
            unsigned char here = s < size() ? byte(s) : '\0';
            if (set_matches(before, p, set_end - 1) || !set_matches(here, p, set_end - 1)) {
              return kNoMatch;
            }
            p = set_end;
            continue;
          }
          if (std::isdigit(static_cast<unsigned char>(pattern_[p + 1]))) {
            s = match_capture(s, pattern_[p + 1]);
            if (s == kNoMatch) return kNoMatch;
            p += 2;
            continue;
          }
          break;
        default: break;
      }
      size_t item_end = class_end(p);
      char quantifier = item_end < end ? pattern_[item_end] : '\0';
      if (!single_matches(s, p, item_end)) {
        if (quantifier == '*' || quantifier == '?' || quantifier == '-') {
          p = item_end + 1;  // zero repetitions
          continue;
        }
        return kNoMatch;
      }
      switch (quantifier) {
        case '?': {
          ptrdiff_t matched = match(s + 1, item_end + 1);
          if (matched != kNoMatch) return matched;
          p = item_end + 1;
          continue;
        }
        case '+': return max_expand(s + 1, p, item_end);
        case '*': return max_expand(s, p, item_end);
        case '-': return min_expand(s, p, item_end);
        default:
          ++s;
          p = item_end;
          continue;
      }
    }
  }

  // Pushes capture `i` (the whole match s..e when there are no captures and i is 0).
  void push_capture(int i, ptrdiff_t s, ptrdiff_t e) {
    if (i >= level_) {
      if (i != 0) luaL_error(L_, "invalid capture index %%%d", i + 1);
      lua_pushlstring(L_, subject_.data() + s, static_cast<size_t>(e - s));
      return;
    }
    const Capture& capture = captures_[i];
    if (capture.length == kUnfinished) luaL_error(L_, "unfinished capture");
    if (capture.length == kPosition) {
      lua_pushinteger(L_, capture.start + 1);
    } else {
      lua_pushlstring(L_, subject_.data() + capture.start, static_cast<size_t>(capture.length));
    }
  }

  // Pushes all captures; with none, the whole match when `whole` (match, gmatch, gsub)
  // or nothing (find). Returns how many were pushed.
  int push_captures(ptrdiff_t s, ptrdiff_t e, bool whole) {
    int count = level_ == 0 && whole ? 1 : level_;
    luaL_checkstack(L_, count, "too many captures");
    for (int i = 0; i < count; ++i) push_capture(i, s, e);
    return count;
  }

  void step() {
    if (++steps_ >= kChargeEvery) finish();
  }

 private:
  struct Capture {
    ptrdiff_t start = 0;
    ptrdiff_t length = 0;
  };

  ptrdiff_t size() const { return static_cast<ptrdiff_t>(subject_.size()); }
  unsigned char byte(ptrdiff_t s) const { return static_cast<unsigned char>(subject_[s]); }

  // The offset just past the single-character class starting at `p`.
  size_t class_end(size_t p) const {
    const size_t end = pattern_.size();
    char c = pattern_[p++];
    if (c == '%') {
      if (p >= end) luaL_error(L_, "malformed pattern (ends with '%%')");
      return p + 1;
    }
    if (c != '[') return p;
    if (p < end && pattern_[p] == '^') ++p;
    // The set's first character never closes it: "[]]" is the set of ']'.
    do {
      if (p >= end) luaL_error(L_, "malformed pattern (missing ']')");
      if (pattern_[p++] == '%' && p < end) ++p;
    } while (p >= end || pattern_[p] != ']');
    return p + 1;
  }

  // Whether `c` is in the set pattern_[open] == '[' .. pattern_[close] == ']'.
  bool set_matches(unsigned char c, size_t open, size_t close) const {
    size_t p = open + 1;
    bool negated = pattern_[p] == '^';
    if (negated) ++p;
    while (p < close) {
      unsigned char here = static_cast<unsigned char>(pattern_[p]);
      if (here == '%' && p + 1 < close) {
        if (class_matches(c, static_cast<unsigned char>(pattern_[p + 1]))) return !negated;
        p += 2;
      } else if (p + 2 < close && pattern_[p + 1] == '-') {
        if (here <= c && c <= static_cast<unsigned char>(pattern_[p + 2])) return !negated;
        p += 3;
      } else {
        if (here == c) return !negated;
        ++p;
      }
    }
    return negated;
  }

  bool single_matches(ptrdiff_t s, size_t p, size_t item_end) const {
    if (s >= size()) return false;
    unsigned char c = byte(s);
    switch (pattern_[p]) {
      case '.': return true;
      case '%': return class_matches(c, static_cast<unsigned char>(pattern_[p + 1]));
      case '[': return set_matches(c, p, item_end - 1);
      default: return static_cast<unsigned char>(pattern_[p]) == c;
    }
  }

  ptrdiff_t max_expand(ptrdiff_t s, size_t p, size_t item_end) {
    ptrdiff_t count = 0;
    while (single_matches(s + count, p, item_end)) {
      ++count;
      step();
    }
    for (; count >= 0; --count) {
      ptrdiff_t matched = match(s + count, item_end + 1);
      if (matched != kNoMatch) return matched;
    }
    return kNoMatch;
  }

  ptrdiff_t min_expand(ptrdiff_t s, size_t p, size_t item_end) {
    while (true) {
      ptrdiff_t matched = match(s, item_end + 1);
      if (matched != kNoMatch) return matched;
      if (!single_matches(s, p, item_end)) return kNoMatch;
      ++s;
    }
  }

  ptrdiff_t start_capture(ptrdiff_t s, size_t p, ptrdiff_t length) {
    if (level_ >= kMaxCaptures) luaL_error(L_, "too many captures");
    captures_[level_] = {s, length};
    ++level_;
    ptrdiff_t matched = match(s, p);
    if (matched == kNoMatch) --level_;
    return matched;
  }

  ptrdiff_t end_capture(ptrdiff_t s, size_t p) {
    int open = level_ - 1;
    while (open >= 0 && captures_[open].length != kUnfinished) --open;
    if (open < 0) luaL_error(L_, "invalid pattern capture");
    captures_[open].length = s - captures_[open].start;
    ptrdiff_t matched = match(s, p);
    if (matched == kNoMatch) captures_[open].length = kUnfinished;
    return matched;
  }

  ptrdiff_t match_balance(ptrdiff_t s, size_t p) {
    if (p + 1 >= pattern_.size()) luaL_error(L_, "malformed pattern (missing arguments to '%%b')");
    if (s >= size() || subject_[s] != pattern_[p]) return kNoMatch;
    char open = pattern_[p], close = pattern_[p + 1];
    int depth = 1;
    for (ptrdiff_t i = s + 1; i < size(); ++i) {
      step();
      if (subject_[i] == close) {
        if (--depth == 0) return i + 1;
      } else if (subject_[i] == open) {
        ++depth;
      }
    }
    return kNoMatch;
  }

  ptrdiff_t match_capture(ptrdiff_t s, char digit) {
    int index = digit - '1';
    if (index < 0 || index >= level_ || captures_[index].length == kUnfinished) {
      luaL_error(L_, "invalid capture index %%%d", index + 1);
    }
    const Capture& capture = captures_[index];
    if (capture.length == kPosition || size() - s < capture.length) return kNoMatch;
    std::string_view earlier = subject_.substr(capture.start, capture.length);
    if (subject_.substr(s, capture.length) != earlier) return kNoMatch;
    for (ptrdiff_t i = 0; i < capture.length; i += 64) step();
    return s + capture.length;
  }

  lua_State* L_;
  std::string_view subject_;
  std::string_view pattern_;
  ChargeSteps charge_;
  uint64_t steps_ = 0;
  int level_ = 0;
  int depth_ = 0;
  Capture captures_[kMaxCaptures];
};

std::string_view check_string(lua_State* L, int arg) {
  size_t size = 0;
  const char* text = luaL_checklstring(L, arg, &size);
  return {text, size};
}

// A 1-based start position, negative counting from the end, clipped at 1.
size_t start_position(lua_Integer position, size_t length) {
  if (position > 0) return static_cast<size_t>(position);
  if (position == 0 || position < -static_cast<lua_Integer>(length)) return 1;
  return length + static_cast<size_t>(position) + 1;
}

bool has_specials(std::string_view pattern) {
  return pattern.find_first_of("^$*+?.([%-") != std::string_view::npos;
}

int find_or_match(lua_State* L, bool find) {
  std::string_view subject = check_string(L, 1);
  std::string_view pattern = check_string(L, 2);
  size_t init = start_position(luaL_optinteger(L, 3, 1), subject.size());
  if (init > subject.size() + 1) {
    lua_pushnil(L);
    return 1;
  }
  Matcher matcher(L, subject, pattern, charge_of(L, 1));
  if (find && (lua_toboolean(L, 4) || !has_specials(pattern))) {
    // Plain search, charged per candidate position so long needles cost what they do.
    for (size_t at = init - 1; at + pattern.size() <= subject.size(); ++at) {
      for (size_t i = 0; i <= pattern.size(); i += 64) matcher.step();
      if (subject.compare(at, pattern.size(), pattern) == 0) {
        matcher.finish();
        lua_pushinteger(L, static_cast<lua_Integer>(at + 1));
        lua_pushinteger(L, static_cast<lua_Integer>(at + pattern.size()));
        return 2;
      }
    }
    matcher.finish();
    lua_pushnil(L);
    return 1;
  }
  bool anchored = pattern.starts_with('^');
  ptrdiff_t s = static_cast<ptrdiff_t>(init - 1);
  do {
    matcher.reset();
    ptrdiff_t e = matcher.match(s, anchored ? 1 : 0);
    if (e != kNoMatch) {
      matcher.finish();
      if (!find) return matcher.push_captures(s, e, true);
      lua_pushinteger(L, s + 1);
      lua_pushinteger(L, e);
      return matcher.push_captures(s, e, false) + 2;
    }
  } while (s++ < static_cast<ptrdiff_t>(subject.size()) && !anchored);
  matcher.finish();
  lua_pushnil(L);
  return 1;
}

int counted_find(lua_State* L) {
  return find_or_match(L, true);
}
int counted_match(lua_State* L) {
  return find_or_match(L, false);
}

struct GmatchState {
  ptrdiff_t next = 0;
  ptrdiff_t last_match = kNoMatch;
};

// Upvalues: charge, subject, pattern, state.
int gmatch_step(lua_State* L) {
  size_t subject_size = 0, pattern_size = 0;
  const char* subject = lua_tolstring(L, lua_upvalueindex(2), &subject_size);
  const char* pattern = lua_tolstring(L, lua_upvalueindex(3), &pattern_size);
  auto& state = *static_cast<GmatchState*>(lua_touserdata(L, lua_upvalueindex(4)));
  Matcher matcher(L, {subject, subject_size}, {pattern, pattern_size}, charge_of(L, 1));
  for (ptrdiff_t s = state.next; s <= static_cast<ptrdiff_t>(subject_size); ++s) {
    matcher.reset();
    ptrdiff_t e = matcher.match(s, 0);
    if (e != kNoMatch && e != state.last_match) {
      state.next = state.last_match = e;
      matcher.finish();
      return matcher.push_captures(s, e, true);
    }
  }
  state.next = static_cast<ptrdiff_t>(subject_size) + 1;
  matcher.finish();
  return 0;
}

int counted_gmatch(lua_State* L) {
  std::string_view subject = check_string(L, 1);
  check_string(L, 2);
  size_t init = start_position(luaL_optinteger(L, 3, 1), subject.size()) - 1;
  lua_settop(L, 2);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);  // charge, subject, pattern
  auto* state = static_cast<GmatchState*>(lua_newuserdatauv(L, sizeof(GmatchState), 0));
  *state = {static_cast<ptrdiff_t>(std::min(init, subject.size() + 1)), kNoMatch};
  lua_pushcclosure(L, &gmatch_step, 4);
  return 1;
}

// Appends the replacement of the match s..e to `buffer`, as gsub's third argument says.
void add_replacement(lua_State* L, Matcher& matcher, luaL_Buffer& buffer, std::string_view subject,
                     ptrdiff_t s, ptrdiff_t e) {
  int type = lua_type(L, 3);
  if (type == LUA_TSTRING || type == LUA_TNUMBER) {
    size_t size = 0;
    const char* text = lua_tolstring(L, 3, &size);
    for (size_t i = 0; i < size; ++i) {
      matcher.step();
      if (text[i] != '%') {
        luaL_addchar(&buffer, text[i]);
        continue;
      }
      char next = ++i < size ? text[i] : '\0';
      if (next == '%') {
        luaL_addchar(&buffer, '%');
      } else if (next == '0') {
        luaL_addlstring(&buffer, subject.data() + s, static_cast<size_t>(e - s));
      } else if (std::isdigit(static_cast<unsigned char>(next))) {
        matcher.push_capture(next - '1', s, e);
        luaL_tolstring(L, -1, nullptr);
        lua_remove(L, -2);
        luaL_addvalue(&buffer);
      } else {
        luaL_error(L, "invalid use of '%%' in replacement string");
      }
    }
    return;
  }
  if (type == LUA_TFUNCTION) {
    lua_pushvalue(L, 3);
    int count = matcher.push_captures(s, e, true);
    lua_call(L, count, 1);
  } else {
    matcher.push_capture(0, s, e);
    lua_gettable(L, 3);
  }
  if (!lua_toboolean(L, -1)) {  // nil or false: keep the original text
    lua_pop(L, 1);
    luaL_addlstring(&buffer, subject.data() + s, static_cast<size_t>(e - s));
  } else if (!lua_isstring(L, -1)) {
    luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
  } else {
    luaL_addvalue(&buffer);
  }
}

int counted_gsub(lua_State* L) {
  std::string_view subject = check_string(L, 1);
  std::string_view pattern = check_string(L, 2);
  int type = lua_type(L, 3);
  lua_Integer max_replacements =
      luaL_optinteger(L, 4, static_cast<lua_Integer>(subject.size()) + 1);
  luaL_argexpected(
      L, type == LUA_TNUMBER || type == LUA_TSTRING || type == LUA_TFUNCTION || type == LUA_TTABLE,
      3, "string/function/table");
  bool anchored = pattern.starts_with('^');
  Matcher matcher(L, subject, pattern, charge_of(L, 1));
  luaL_Buffer buffer;
  luaL_buffinit(L, &buffer);
  ptrdiff_t s = 0, last_match = kNoMatch;
  const ptrdiff_t size = static_cast<ptrdiff_t>(subject.size());
  lua_Integer replacements = 0;
  while (replacements < max_replacements) {
    matcher.reset();
    ptrdiff_t e = matcher.match(s, anchored ? 1 : 0);
    if (e != kNoMatch && e != last_match) {
      ++replacements;
      add_replacement(L, matcher, buffer, subject, s, e);
      s = last_match = e;
    } else if (s < size) {
      luaL_addchar(&buffer, subject[s++]);
    } else {
      break;
    }
    if (anchored) break;
  }
  luaL_addlstring(&buffer, subject.data() + s, static_cast<size_t>(size - s));
  matcher.finish();
  luaL_pushresult(&buffer);
  lua_pushinteger(L, replacements);
  return 2;
}

}  // namespace

void install_counted_patterns(lua_State* L, int string_table, ChargeSteps charge) {
  const std::pair<const char*, lua_CFunction> functions[] = {
      {"find", &counted_find},
      {"match", &counted_match},
      {"gmatch", &counted_gmatch},
      {"gsub", &counted_gsub},
  };
  for (const auto& [name, function] : functions) {
    *static_cast<ChargeSteps*>(lua_newuserdatauv(L, sizeof(ChargeSteps), 0)) = charge;
    lua_pushcclosure(L, function, 1);
    lua_setfield(L, string_table, name);
  }
}

}  // namespace cw::rules
