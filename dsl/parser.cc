#include "dsl/parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "dsl/grammar.h"

namespace cw::dsl {

namespace g = grammar;
using Node = tao::pegtl::parse_tree::node;

bool ParseResult::ok() const {
  return std::none_of(diagnostics.begin(), diagnostics.end(),
                      [](const Diagnostic& d) { return d.severity == Severity::Error; });
}

// ---------------------------------------------------------------- tokens

static bool is_ident_first(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
static bool is_ident_other(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Length of a long-string opener `[==[` at i, or 0.
static size_t long_opener_length(std::string_view t, size_t i) {
  if (i >= t.size() || t[i] != '[') return 0;
  size_t j = i + 1;
  while (j < t.size() && t[j] == '=') ++j;
  return j < t.size() && t[j] == '[' ? j + 1 - i : 0;
}

std::vector<Token> lex(std::string_view t) {
  std::vector<Token> out;
  size_t i = 0;
  const size_t n = t.size();
  auto push = [&](Token::Kind k, size_t b, size_t e) {
    out.push_back({k, static_cast<uint32_t>(b), static_cast<uint32_t>(e)});
  };
  while (i < n) {
    const char c = t[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '#') {
      size_t e = t.find('\n', i);
      if (e == std::string_view::npos) e = n;
      if (e > i && t[e - 1] == '\r') --e;
      push(Token::Kind::Comment, i, e);
      i = std::max(e, i + 1);
    } else if (c == '"') {
      size_t j = i + 1;
      while (j < n && t[j] != '"' && t[j] != '\n')
        j += (t[j] == '\\' && j + 1 < n && t[j + 1] != '\n') ? 2 : 1;
      if (j < n && t[j] == '"') ++j;
      push(Token::Kind::String, i, j);
      i = j;
    } else if (size_t open = long_opener_length(t, i)) {
      std::string close = "]" + std::string(open - 2, '=') + "]";
      size_t e = t.find(close, i + open);
      e = e == std::string_view::npos ? n : e + close.size();
      push(Token::Kind::LongString, i, e);
      i = e;
    } else if (is_ident_first(c)) {
      size_t j = i + 1;
      while (j < n && is_ident_other(t[j])) ++j;
      push(Token::Kind::Ident, i, j);
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i + 1;
      while (j < n && (is_ident_other(t[j]) || t[j] == '.')) ++j;
      push(Token::Kind::Number, i, j);
      i = j;
    } else {
      static constexpr std::array<std::string_view, 5> pairs = {"==", "!=", "<=", ">=", "->"};
      size_t len = 1;
      for (auto p : pairs)
        if (t.substr(i, 2) == p) len = 2;
      push(Token::Kind::Punct, i, i + len);
      i += len;
    }
  }
  return out;
}

// ---------------------------------------------------------------- positions

namespace {

class LineIndex {
 public:
  explicit LineIndex(std::string_view text) {
    starts_.push_back(0);
    for (size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n') starts_.push_back(static_cast<uint32_t>(i + 1));
  }
  uint32_t line_of(size_t byte) const {
    return static_cast<uint32_t>(std::upper_bound(starts_.begin(), starts_.end(), byte) -
                                 starts_.begin());
  }
  uint32_t line_start(uint32_t line) const { return starts_[line - 1]; }
  uint32_t line_count() const { return static_cast<uint32_t>(starts_.size()); }
  SourceLoc loc(size_t byte) const {
    const uint32_t line = line_of(byte);
    return {line, static_cast<uint32_t>(byte - line_start(line) + 1), static_cast<uint32_t>(byte)};
  }

 private:
  std::vector<uint32_t> starts_;
};

// ---------------------------------------------------------------- tree -> AST

class Builder {
 public:
  Builder(const Source& src, const LineIndex& lines, uint32_t max_depth)
      : base_(src.text.data()), lines_(lines), max_depth_(max_depth) {}

  void add_item(const Node& n, File& file) {
    if (n.is_type<g::rule_item>()) {
      file.rules.push_back(rule(n));
    } else if (n.is_type<g::pack_item>()) {
      if (file.pack) throw g::SyntaxError{g::Err::DuplicatePack, n.m_begin.data};
      PackHeader p;
      p.loc = loc(n);
      p.id = std::string(n.children.at(0)->string_view());
      p.id_loc = loc(*n.children[0]);
      for (size_t i = 1; i < n.children.size(); ++i) p.clauses.push_back(clause(*n.children[i]));
      file.pack = std::move(p);
    } else if (n.is_type<g::list_item>()) {
      ListDecl l;
      l.loc = loc(n);
      l.name = std::string(n.children.at(0)->string_view());
      l.value = expr(*n.children.at(1), 1);
      file.lists.push_back(std::move(l));
    } else if (n.is_type<g::lua_item>()) {
      LuaBlock b;
      b.loc = loc(n);
      const Node& content = *n.children.at(0)->children.at(0);
      b.code = std::string(content.string_view());
      b.first_line = loc(content).line;
      file.lua.push_back(std::move(b));
    } else if (n.is_type<g::test_item>()) {
      file.tests.push_back(test(n));
    } else if (n.is_type<g::disable_item>()) {
      const Node& ref = *n.children.at(0);
      file.disables.push_back({std::string(ref.string_view()), loc(n), loc(ref)});
    }
  }

 private:
  SourceLoc loc(const Node& n) const { return lines_.loc(n.m_begin.data - base_); }
  SourceLoc loc(const char* p) const { return lines_.loc(p - base_); }

  Rule rule(const Node& n) {
    Rule r;
    r.loc = loc(n);
    // The grammar admits only the table's keywords.
    const RuleKindInfo* kind = find_rule_kind(n.children.at(0)->string_view());
    if (!kind) throw std::logic_error("dsl parser: a rule kind not in dsl/rule_kinds.h");
    r.kind = kind->kind;
    r.id = std::string(n.children.at(1)->string_view());
    r.id_loc = loc(*n.children[1]);
    for (size_t i = 2; i < n.children.size(); ++i) r.clauses.push_back(clause(*n.children[i]));
    return r;
  }

  Clause clause(const Node& n) {
    Clause c;
    c.loc = loc(n);
    if (n.is_type<g::bare_clause>()) {
      c.keyword = std::string(n.string_view());
      return c;
    }
    c.keyword = std::string(n.children.at(0)->string_view());
    for (size_t i = 1; i < n.children.size(); ++i) c.args.push_back(expr(*n.children[i], 1));
    return c;
  }

  TestBlock test(const Node& n) {
    TestBlock t;
    t.loc = loc(n);
    const Node& name = *n.children.at(0)->children.at(0);
    t.name = name.is_type<g::short_string>() ? unescape(name) : std::string(name.string_view());
    for (size_t i = 1; i < n.children.size(); ++i) {
      const Node& entry = *n.children[i];
      if (entry.is_type<g::trace_entry>()) {
        if (t.has_trace) throw g::SyntaxError{g::Err::DuplicateTrace, entry.m_begin.data};
        t.has_trace = true;
        if (entry.children.at(0)->is_type<g::trace_file>()) {
          const Node& path = *entry.children[0]->children.at(0);
          t.trace_is_file = true;
          t.trace_file_loc = loc(path);
          t.trace_file = path.is_type<g::long_string>()
                             ? std::string(path.children.at(0)->string_view())
                             : unescape(path);
          continue;
        }
        const Node& str = *entry.children.at(0);
        if (str.is_type<g::long_string>()) {
          const Node& content = *str.children.at(0);
          t.trace_text = std::string(content.string_view());
          t.trace_loc = loc(content);
        } else {
          t.trace_text = unescape(str);
          t.trace_loc = loc(str.m_begin.data + 1);
        }
      } else if (entry.is_type<g::expect_entry>()) {
        t.expects.push_back(expect(entry));
      } else {
        t.clauses.push_back(clause(entry));
      }
    }
    return t;
  }

  Expect expect(const Node& n) {
    Expect e;
    e.loc = loc(n);
    for (const auto& child : n.children) {
      const Node& c = *child;
      if (c.is_type<g::negated>()) {
        e.negated = true;
      } else if (c.is_type<g::subject_edge>() || c.is_type<g::subject_split>() ||
                 c.is_type<g::subject_segments>() || c.is_type<g::subject_stat>() ||
                 c.is_type<g::subject_hang>() || c.is_type<g::subject_root_cause>() ||
                 c.is_type<g::subject_questions>()) {
        e.subject = std::string(c.string_view());
        e.subject_loc = loc(c);
      } else if (c.is_type<g::cmp_symbol>()) {
        e.cmp = std::string(c.string_view());
      } else if (c.is_type<g::attr>()) {
        NamedArg a;
        a.name = std::string(c.children.at(0)->string_view());
        a.loc = loc(c);
        a.value = expr(*c.children.at(1), 1);
        e.attrs.push_back(std::move(a));
      } else {
        e.operands.push_back(expr(c, 1));
      }
    }
    return e;
  }

  static std::vector<std::string> split_dots(std::string_view s) {
    std::vector<std::string> path;
    size_t start = 0;
    for (size_t i = 0; i <= s.size(); ++i) {
      if (i == s.size() || s[i] == '.') {
        path.emplace_back(s.substr(start, i - start));
        start = i + 1;
      }
    }
    return path;
  }

  // The grammar only admits the escapes \" \\ \n \t.
  static std::string unescape(const Node& n) {
    std::string_view s = n.string_view();
    s = s.substr(1, s.size() - 2);
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\\' && i + 1 < s.size()) {
        const char e = s[++i];
        out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
      } else {
        out += s[i];
      }
    }
    return out;
  }

  ExprPtr make(ExprKind kind, const Node& n) const {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->loc = loc(n);
    e->length = static_cast<uint32_t>(std::max<ptrdiff_t>(1, n.m_end.data - n.m_begin.data));
    return e;
  }

  void number(const Node& n, Expr& e) const {
    std::string_view s = n.string_view();
    auto out_of_range = [&] { return g::SyntaxError{g::Err::IntRange, n.m_begin.data}; };
    uint64_t value = 0;
    if (s.size() > 2 && (s[1] == 'x' || s[1] == 'X')) {
      for (char c : s.substr(2)) {
        const uint64_t digit = std::isdigit(static_cast<unsigned char>(c))
                                   ? c - '0'
                                   : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
        if (value > (uint64_t(INT64_MAX) - digit) / 16) throw out_of_range();
        value = value * 16 + digit;
      }
      e.ival = static_cast<int64_t>(value);
      return;
    }
    size_t i = 0;
    for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
      const uint64_t digit = s[i] - '0';
      if (value > (uint64_t(INT64_MAX) - digit) / 10) throw out_of_range();
      value = value * 10 + digit;
    }
    std::string_view fraction;
    if (i < s.size() && s[i] == '.') {
      const size_t b = ++i;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
      fraction = s.substr(b, i - b);
    }
    const std::string_view unit = s.substr(i);
    if (unit.empty()) {
      if (!fraction.empty()) throw g::SyntaxError{g::Err::FractionUnit, n.m_begin.data};
      e.ival = static_cast<int64_t>(value);
      return;
    }
    const uint64_t scale = unit == "ns"   ? 1
                           : unit == "us" ? 1000
                           : unit == "ms" ? 1000000
                                          : 1000000000;
    if (value > uint64_t(INT64_MAX) / scale) throw out_of_range();
    value *= scale;
    // Nine fraction digits reach below a nanosecond for every unit; the rest is truncated.
    uint64_t digits = 0, divisor = 1;
    for (size_t k = 0; k < fraction.size() && k < 9; ++k) {
      digits = digits * 10 + (fraction[k] - '0');
      divisor *= 10;
    }
    const uint64_t part = digits * scale / divisor;
    if (value > uint64_t(INT64_MAX) - part) throw out_of_range();
    e.ival = static_cast<int64_t>(value + part);
    e.is_duration = true;
  }

  // `depth` is the node's depth in the expression tree; evaluators recurse on it.
  ExprPtr expr(const Node& n, uint32_t depth) {
    if (depth > max_depth_) throw g::SyntaxError{g::Err::TooDeep, n.m_begin.data};
    if (n.is_type<g::or_expr>() || n.is_type<g::and_expr>() || n.is_type<g::cmp_expr>() ||
        n.is_type<g::add_expr>() || n.is_type<g::mul_expr>()) {
      const size_t ops = n.children.size() / 2;
      if (ops == 0) return expr(*n.children.at(0), depth);
      if (depth + ops > max_depth_)
        throw g::SyntaxError{g::Err::TooDeep,
                             n.children[2 * (max_depth_ - depth) + 1]->m_begin.data};
      ExprPtr acc = expr(*n.children[0], depth + ops);
      for (size_t i = 1; i <= ops; ++i) {
        const Node& op = *n.children[2 * i - 1];
        ExprPtr rhs = expr(*n.children[2 * i], depth + ops - i + 1);
        auto b = std::make_unique<Expr>();
        b->kind = ExprKind::Binary;
        b->loc = acc->loc;
        b->length = rhs->loc.byte + rhs->length - acc->loc.byte;
        std::string_view text = op.string_view();
        b->op = text.substr(0, 3) == "not" ? "not in" : std::string(text);
        b->args.push_back(std::move(acc));
        b->args.push_back(std::move(rhs));
        acc = std::move(b);
      }
      return acc;
    }
    if (n.is_type<g::negation>() || n.is_type<g::negate>()) {
      ExprPtr operand = expr(*n.children.at(0), depth + 1);
      auto e = make(ExprKind::Unary, n);
      if (n.is_type<g::negate>() && operand->kind == ExprKind::Int) {
        // `-7` is the integer -7, so `priority -5` needs no evaluation.
        if (operand->ival == INT64_MIN) throw g::SyntaxError{g::Err::IntRange, n.m_begin.data};
        e->kind = ExprKind::Int;
        e->ival = -operand->ival;
        e->is_duration = operand->is_duration;
        return e;
      }
      e->op = n.is_type<g::negation>() ? "not" : "-";
      e->args.push_back(std::move(operand));
      return e;
    }
    if (n.is_type<g::paren>()) {
      // Parentheses leave no node, but carets of the expression cover them.
      ExprPtr inner = expr(*n.children.at(0), depth);
      const auto widened = make(inner->kind, n);
      inner->loc = widened->loc;
      inner->length = widened->length;
      return inner;
    }
    if (n.is_type<g::number>()) {
      auto e = make(ExprKind::Int, n);
      number(n, *e);
      return e;
    }
    if (n.is_type<g::short_string>()) {
      auto e = make(ExprKind::Str, n);
      e->sval = unescape(n);
      return e;
    }
    if (n.is_type<g::long_string>()) {
      auto e = make(ExprKind::Str, n);
      e->sval = std::string(n.children.at(0)->string_view());
      return e;
    }
    if (n.is_type<g::kw_true>() || n.is_type<g::kw_false>()) {
      auto e = make(ExprKind::Bool, n);
      e->ival = n.is_type<g::kw_true>();
      return e;
    }
    if (n.is_type<g::name>() || n.is_type<g::rule_ref>()) {
      auto e = make(ExprKind::Name, n);
      e->path = split_dots(n.string_view());
      return e;
    }
    if (n.is_type<g::call>()) {
      auto e = make(ExprKind::Call, n);
      e->path = split_dots(n.children.at(0)->string_view());
      for (size_t i = 1; i < n.children.size(); ++i)
        e->args.push_back(expr(*n.children[i], depth + 1));
      return e;
    }
    if (n.is_type<g::list_literal>()) {
      auto e = make(ExprKind::List, n);
      for (const auto& c : n.children) e->args.push_back(expr(*c, depth + 1));
      return e;
    }
    throw std::logic_error(fmt::format("dsl parser: unexpected node {}", n.type));
  }

  const char* base_;
  const LineIndex& lines_;
  uint32_t max_depth_;
};

// ---------------------------------------------------------------- error messages

// The words that start an item: the rule kinds come from their table.
const std::vector<std::string> kItemKeywords = [] {
  std::vector<std::string> words = {"pack", "list", "lua"};
  for (const RuleKindInfo& kind : kRuleKinds) words.emplace_back(kind.keyword);
  words.insert(words.end(), {"test", "disable"});
  return words;
}();
// "pack, list, lua, split, ..., test or disable"
const std::string kItemList = [] {
  std::string out;
  for (size_t i = 0; i < kItemKeywords.size(); ++i)
    out += (i == 0 ? "" : i + 1 == kItemKeywords.size() ? " or " : ", ") + kItemKeywords[i];
  return out;
}();
const std::vector<std::string> kExpectSubjects = {"edge", "split",      "segments", "stat",
                                                  "hang", "root_cause", "questions"};

class ErrorWriter {
 public:
  ErrorWriter(const SourcePtr& source, const LineIndex& lines, const std::vector<Token>& tokens,
              size_t item_begin)
      : source_(source),
        text_(source->text),
        lines_(lines),
        item_begin_(item_begin),
        tokens_(tokens) {}

  Diagnostic write(const g::SyntaxError& e, uint32_t max_depth) {
    size_t at = e.at - text_.data();
    Diagnostic d;
    d.source = source_;
    const Token* found = token_at(at);
    std::string found_text = found ? quote(*found) : found_inside_token(at);
    if (!found && at >= text_.size()) at = end_of_last_token(at);
    d.loc = lines_.loc(at);
    d.length = found ? caret_length(*found) : 1;
    const std::string after = previous_token(at);
    switch (e.code) {
      case g::Err::UnknownItem: {
        if (found && found->kind == Token::Kind::Ident) {
          const std::string word = token_text(*found);
          d.message = fmt::format("unknown item '{}' (expected {})", word, kItemList);
          if (auto m = closest_match(word, kItemKeywords); !m.empty())
            d.hints.push_back(fmt::format("did you mean '{}'?", m));
        } else {
          d.message = fmt::format("expected an item ({}), found {}", kItemList, found_text);
        }
        break;
      }
      case g::Err::PackId: d.message = "expected a pack id after 'pack'"; break;
      case g::Err::PackIdChar:
        d.message = "a pack id cannot hold '-'";
        d.length = 1;
        d.hints.push_back(
            "a pack id is names of letters, digits and '_' joined by '.', e.g. my_team.server");
        break;
      case g::Err::RuleId:
        d.message = fmt::format("expected a rule id after '{}'", item_keyword());
        break;
      case g::Err::ListName: d.message = "expected a list name after 'list'"; break;
      case g::Err::ListEquals:
        d.message = fmt::format("expected '=' after list name '{}'", item_name());
        break;
      case g::Err::ListValue:
        d.message = fmt::format("expected a list [ ... ] after 'list {} ='", item_name());
        if (long_opener_length(text_, at))
          d.hints.push_back("'[[' opens a long string, as in Lua; write '[ [' for a list of lists");
        break;
      case g::Err::LuaString: d.message = "expected a long string [[ ... ]] after 'lua'"; break;
      case g::Err::TestName:
        d.message = "expected a test name (a string or an id) after 'test'";
        break;
      case g::Err::OpenBrace:
        d.message = fmt::format("expected '{{' to open {}", item_description());
        break;
      case g::Err::CloseBrace:
        d.message = fmt::format("expected '}}' to close {}", item_description());
        break;
      case g::Err::ExprAfter:
        d.message = fmt::format("expected an expression after '{}'", after);
        break;
      case g::Err::CloseParen:
        d.message = fmt::format("expected ')' to close {}", opener("'('", e.opener, at));
        break;
      case g::Err::CloseList:
        d.message = fmt::format("expected ']' to close {}", opener("the list", e.opener, at));
        break;
      case g::Err::CloseCall:
        d.message = fmt::format("expected ')' to close the call to '{}'", callee(e.opener));
        break;
      case g::Err::UnterminatedString:
        d.message = "unterminated string";
        d.loc = lines_.loc(e.opener - text_.data());
        d.length = 1;
        d.hints.push_back("a string ends on its line; use [[ ... ]] for text over several lines");
        break;
      case g::Err::NulInString:
        d.message = fmt::format("a NUL byte (byte {}) in a string", at);
        d.length = 1;
        d.hints.push_back(R"(a string cannot hold a NUL; write the text without it)");
        break;
      case g::Err::BadEscape: {
        d.loc = lines_.loc(at - 1);
        d.length = at < text_.size() && text_[at] != '\n' ? 2 : 1;
        d.message = d.length == 2 ? fmt::format("unknown escape '\\{}' in string", text_[at])
                                  : std::string("unknown escape '\\' in string");
        d.hints.push_back(R"(the escapes are \", \\, \n and \t)");
        break;
      }
      case g::Err::UnterminatedLongString: {
        const size_t open_at = e.opener - text_.data();
        const size_t len = long_opener_length(text_, open_at);
        d.loc = lines_.loc(open_at);
        d.length = static_cast<uint32_t>(len);
        d.message =
            fmt::format("unterminated long string (expected ']{}]')", std::string(len - 2, '='));
        break;
      }
      case g::Err::HexDigits: d.message = "expected hex digits after '0x'"; break;
      case g::Err::BadHexDigit:
        d.message = fmt::format("unexpected {} after a hex number", found_text);
        break;
      case g::Err::UnknownUnit: {
        size_t end = at;
        while (end < text_.size() && is_ident_other(text_[end])) ++end;
        const std::string unit = text_.substr(at, end - at);
        d.length = static_cast<uint32_t>(end - at);
        d.message = fmt::format("unknown unit '{}' (expected ns, us, ms or s)", unit);
        if (auto m = closest_match(unit, {"ns", "us", "ms", "s"}); !m.empty())
          d.hints.push_back(fmt::format("did you mean '{}'?", m));
        break;
      }
      case g::Err::TraceString:
        d.message = "expected a string or file \"PATH\" after 'trace'";
        break;
      case g::Err::TraceFilePath:
        d.message = "expected a string (the trace file's path) after 'trace file'";
        break;
      case g::Err::ExpectSubject: {
        d.message = fmt::format(
            "expected edge, split, segments, stat, hang, root_cause or questions after 'expect', "
            "found {}",
            found_text);
        if (found && found->kind == Token::Kind::Ident) {
          if (auto m = closest_match(token_text(*found), kExpectSubjects); !m.empty())
            d.hints.push_back(fmt::format("did you mean '{}'?", m));
        }
        break;
      }
      case g::Err::NoSubject:
        d.message = fmt::format("expected edge or split after 'expect no', found {}", found_text);
        break;
      case g::Err::Arrow:
        d.message =
            fmt::format("expected '->' between the two threads of an edge, found {}", found_text);
        break;
      case g::Err::Comparison:
        d.message =
            fmt::format("expected a comparison (==, !=, <, <=, >, >=), found {}", found_text);
        break;
      case g::Err::StatName: d.message = "expected a statistic name after 'stat'"; break;
      case g::Err::RuleRef:
        d.message = fmt::format("expected a rule id after '{}'",
                                item_keyword() == "disable" ? "disable" : "rule");
        break;
      case g::Err::TooDeep:
        d.message = fmt::format("expression nested too deeply (limit {})", max_depth);
        break;
      case g::Err::IntRange:
        d.message = "number out of range (the largest is 9223372036854775807)";
        d.length = found ? caret_length(*found) : 1;
        break;
      case g::Err::FractionUnit:
        d.message = "a number with a fraction is a duration and needs a unit (ns, us, ms or s)";
        break;
      case g::Err::DuplicatePack:
        d.message = "a file has one pack header; this is a second one";
        break;
      case g::Err::DuplicateTrace: d.message = "a test has one trace; this is a second one"; break;
    }
    return d;
  }

 private:
  std::string token_text(const Token& t) const { return text_.substr(t.begin, t.end - t.begin); }

  std::string quote(const Token& t) const {
    std::string s = token_text(t);
    if (size_t nl = s.find('\n'); nl != std::string::npos) s = s.substr(0, nl) + "...";
    if (s.size() > 24) s = s.substr(0, 21) + "...";
    return "'" + s + "'";
  }

  // What is at `at` when no token starts there (an error inside a number, say).
  std::string found_inside_token(size_t at) const {
    if (at >= text_.size()) return "end of file";
    size_t end = at + 1;
    while (end < text_.size() && is_ident_other(text_[at]) && is_ident_other(text_[end])) ++end;
    return "'" + text_.substr(at, end - at) + "'";
  }

  const Token* token_at(size_t at) const {
    auto it = std::lower_bound(tokens_.begin(), tokens_.end(), at,
                               [](const Token& t, size_t b) { return t.begin < b; });
    return it != tokens_.end() && it->begin == at ? &*it : nullptr;
  }

  uint32_t caret_length(const Token& t) const {
    size_t end = t.end;
    if (size_t nl = text_.find('\n', t.begin); nl != std::string::npos) end = std::min(end, nl);
    return static_cast<uint32_t>(std::max<size_t>(1, end - t.begin));
  }

  const Token* token_before(size_t at) const {
    auto it = std::lower_bound(tokens_.begin(), tokens_.end(), at,
                               [](const Token& t, size_t b) { return t.begin < b; });
    while (it != tokens_.begin()) {
      --it;
      if (it->kind != Token::Kind::Comment) return &*it;
    }
    return nullptr;
  }

  std::string previous_token(size_t at) const {
    const Token* t = token_before(at);
    return t ? quote(*t).substr(1, quote(*t).size() - 2) : std::string();
  }

  // At end of file, point just after the last token rather than at an empty last line.
  size_t end_of_last_token(size_t at) const {
    const Token* t = token_before(at);
    return t ? t->end : at;
  }

  std::string item_keyword() const {
    size_t e = item_begin_;
    while (e < text_.size() && is_ident_other(text_[e])) ++e;
    return text_.substr(item_begin_, e - item_begin_);
  }

  // The id or name after the item keyword, as written (a test's string without quotes).
  std::string item_name() const {
    const Token* kw = token_at(item_begin_);
    if (!kw) return {};
    auto next = std::find_if(
        tokens_.begin() + (kw - tokens_.data()), tokens_.end(),
        [&](const Token& t) { return t.begin >= kw->end && t.kind != Token::Kind::Comment; });
    if (next == tokens_.end()) return {};
    if (next->kind == Token::Kind::String) {
      std::string s = token_text(*next);
      return s.size() >= 2 ? s.substr(1, s.size() - 2) : s;
    }
    size_t e = next->begin;
    while (e < text_.size() && (is_ident_other(text_[e]) || text_[e] == '.' || text_[e] == '-'))
      ++e;
    return text_.substr(next->begin, e - next->begin);
  }

  std::string item_description() const {
    const std::string kw = item_keyword();
    const char* what = kw == "pack" ? "pack" : kw == "test" ? "test" : "rule";
    return fmt::format("{} '{}'", what, item_name());
  }

  std::string opener(std::string_view what, const char* open, size_t at) const {
    if (!open) return std::string(what);
    const uint32_t line = lines_.line_of(open - text_.data());
    if (line == lines_.line_of(at)) return std::string(what);
    return fmt::format("{} opened on line {}", what, line);
  }

  std::string callee(const char* open) const {
    if (!open) return {};
    size_t b = open - text_.data(), e = b;
    while (e < text_.size() && (is_ident_other(text_[e]) || text_[e] == '.')) ++e;
    return text_.substr(b, e - b);
  }

  SourcePtr source_;
  const std::string& text_;
  const LineIndex& lines_;
  size_t item_begin_;
  const std::vector<Token>& tokens_;
};

size_t skip_space(std::string_view text, size_t pos) {
  while (pos < text.size()) {
    if (std::isspace(static_cast<unsigned char>(text[pos]))) {
      ++pos;
    } else if (text[pos] == '#') {
      pos = text.find('\n', pos);
      if (pos == std::string_view::npos) return text.size();
    } else {
      break;
    }
  }
  return pos;
}

bool starts_item(std::string_view text, size_t pos) {
  size_t e = pos;
  while (e < text.size() && is_ident_other(text[e])) ++e;
  const std::string_view word = text.substr(pos, e - pos);
  return std::find(kItemKeywords.begin(), kItemKeywords.end(), word) != kItemKeywords.end();
}

// After an error in the item at `item_begin`: the next line, after the item's first line
// and after the error, whose first word starts an item.
size_t recovery_point(std::string_view text, const LineIndex& lines, size_t item_begin,
                      size_t error_at) {
  const uint32_t error_line = lines.line_of(error_at);
  const size_t error_line_first = text.find_first_not_of(" \t", lines.line_start(error_line));
  uint32_t line = std::max(lines.line_of(item_begin) + 1,
                           error_line_first == error_at ? error_line : error_line + 1);
  for (; line <= lines.line_count(); ++line) {
    const size_t first = text.find_first_not_of(" \t\r", lines.line_start(line));
    if (first == std::string_view::npos) break;
    if (starts_item(text, first)) return first;
  }
  return text.size();
}

}  // namespace

ParseResult parse(SourcePtr source, const ParseLimits& limits) {
  ParseResult result;
  result.file.source = source;
  const std::string& text = source->text;
  if (text.size() > limits.max_bytes) {
    Diagnostic d;
    d.source = source;
    d.message =
        fmt::format("file is too large ({} bytes, the limit is {})", text.size(), limits.max_bytes);
    result.diagnostics.push_back(std::move(d));
    return result;
  }
  const LineIndex lines(text);
  Builder builder(*source, lines, limits.max_depth);
  std::vector<Token> tokens;  // lexed at the first error, for naming what was found
  // An editor's UTF-8 byte order mark may open the file.
  size_t pos = skip_space(text, std::string_view(text).starts_with("\xEF\xBB\xBF") ? 3 : 0);
  while (pos < text.size()) {
    tao::pegtl::memory_input<tao::pegtl::tracking_mode::lazy> in(
        text.data() + pos, text.data() + text.size(), source->path);
    g::ParseState state;
    state.max_depth = limits.max_depth;
    try {
      auto root =
          tao::pegtl::parse_tree::parse<g::item, g::selector, tao::pegtl::nothing, g::control>(
              in, state);
      builder.add_item(*root->children.at(0), result.file);
      pos = in.current() - text.data();
    } catch (const g::SyntaxError& e) {
      if (tokens.empty()) tokens = lex(text);
      ErrorWriter writer(source, lines, tokens, pos);
      result.diagnostics.push_back(writer.write(e, limits.max_depth));
      pos = recovery_point(text, lines, pos, e.at - text.data());
    }
    pos = skip_space(text, pos);
  }
  return result;
}

bool is_pack_id(std::string_view id) {
  bool start = true;
  for (char c : id) {
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (c == '.') {
      if (start) return false;
      start = true;
    } else if (alpha || (digit && !start)) {
      start = false;
    } else {
      return false;
    }
  }
  return !start;
}

std::string string_literal(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace cw::dsl
