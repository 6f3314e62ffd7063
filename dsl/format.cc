// format_source: the canonical layout of a rule file, printed from its syntax tree with the
// comments put back (own-line comments before the line they preceded, end-of-line comments
// after it) and literals copied verbatim from the source.
#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "dsl/parser.h"

namespace cw::dsl {
namespace {

int precedence(const Expr& e) {
  if (e.kind == ExprKind::Unary) return e.op == "not" ? 3 : 7;
  if (e.kind != ExprKind::Binary) return 8;
  const std::string& op = e.op;
  if (op == "or") return 1;
  if (op == "and") return 2;
  if (op == "+" || op == "-") return 5;
  if (op == "*" || op == "/" || op == "%") return 6;
  return 4;  // comparisons, in, not in, matches
}

// Tightest precedence an `expect` operand may have unbracketed (the grammar reads A + B).
constexpr int kOperandPrecedence = 5;

class Printer {
 public:
  explicit Printer(const Source& source) : text_(source.text), tokens_(lex(source.text)) {
    for (const Token& t : tokens_)
      if (t.kind == Token::Kind::Comment) comments_.push_back(t);
    for (size_t i = 0; i < text_.size(); ++i)
      if (text_[i] == '\n') newlines_.push_back(i);
  }

  std::string run(const File& file) {
    struct Item {
      uint32_t byte;
      std::function<void()> print;
    };
    std::vector<Item> items;
    if (file.pack) items.push_back({file.pack->loc.byte, [&] { pack(*file.pack); }});
    for (const auto& l : file.lists) items.push_back({l.loc.byte, [&] { list(l); }});
    for (const auto& l : file.lua) items.push_back({l.loc.byte, [&] { lua(l); }});
    for (const auto& r : file.rules) items.push_back({r.loc.byte, [&] { rule(r); }});
    for (const auto& t : file.tests) items.push_back({t.loc.byte, [&] { test(t); }});
    for (const auto& d : file.disables)
      items.push_back({d.loc.byte, [&] {
                         line(0, "disable " + d.rule,
                              d.rule_loc.byte + static_cast<uint32_t>(d.rule.size()));
                       }});
    std::sort(items.begin(), items.end(),
              [](const Item& a, const Item& b) { return a.byte < b.byte; });
    for (const Item& item : items) {
      if (!out_.empty() && !out_.ends_with("\n\n")) out_ += '\n';
      item.print();
    }
    comments_before(text_.size(), 0);
    return out_;
  }

 private:
  // ---- source positions
  size_t token_index_at(size_t byte) const {
    return std::lower_bound(tokens_.begin(), tokens_.end(), byte,
                            [](const Token& t, size_t b) { return t.begin < b; }) -
           tokens_.begin();
  }
  std::string token_text(const Token& t) const { return text_.substr(t.begin, t.end - t.begin); }
  size_t line_of(size_t byte) const {
    return std::lower_bound(newlines_.begin(), newlines_.end(), byte) - newlines_.begin();
  }
  // The next non-comment token at or after `byte`.
  size_t next_code_token(size_t byte) const {
    size_t i = token_index_at(byte);
    while (i < tokens_.size() && tokens_[i].kind == Token::Kind::Comment) ++i;
    return i;
  }
  bool is_punct(size_t i, char c) const {
    return i < tokens_.size() && tokens_[i].kind == Token::Kind::Punct &&
           text_[tokens_[i].begin] == c && tokens_[i].end == tokens_[i].begin + 1;
  }
  // The token index of the '}' matching the '{' at token `open`.
  size_t matching_brace(size_t open) const {
    int depth = 0;
    for (size_t i = open; i < tokens_.size(); ++i) {
      if (is_punct(i, '{')) ++depth;
      if (is_punct(i, '}') && --depth == 0) return i;
    }
    return tokens_.size() - 1;
  }
  size_t first_brace_after(size_t byte) const {
    size_t i = next_code_token(byte);
    while (i < tokens_.size() && !is_punct(i, '{')) i = next_code_token(tokens_[i].end);
    return i;
  }

  // ---- output with comments
  void comments_before(size_t byte, int indent) {
    while (next_comment_ < comments_.size() && comments_[next_comment_].begin < byte) {
      const Token& c = comments_[next_comment_++];
      out_.append(indent, ' ');
      out_ += token_text(c);
      out_ += '\n';
      // At the top level a comment block set apart by a blank line stays apart.
      if (indent == 0) {
        const size_t next = text_.find_first_not_of(" \t\r\n", c.end);
        if (next != std::string::npos &&
            std::count(text_.begin() + c.end, text_.begin() + next, '\n') >= 2)
          out_ += '\n';
      }
    }
  }

  // One output line for the source range [begin, end).
  void line(int indent, const std::string& s, size_t end) {
    comments_before(end, indent);
    out_.append(indent, ' ');
    out_ += s;
    if (next_comment_ < comments_.size() && end > 0 &&
        line_of(comments_[next_comment_].begin) == line_of(end - 1)) {
      out_ += "  ";
      out_ += token_text(comments_[next_comment_++]);
    }
    out_ += '\n';
  }

  // ---- expressions
  // A literal as written (hex, durations, escapes, long strings), minus any parentheses,
  // spaces or comments a folded `- 5` or a `(5)` carried.
  std::string literal(const Expr& e) const {
    std::string s;
    const size_t end = e.loc.byte + e.length;
    for (size_t i = token_index_at(e.loc.byte); i < tokens_.size() && tokens_[i].end <= end; ++i) {
      const Token& t = tokens_[i];
      if (t.kind == Token::Kind::Comment || is_punct(i, '(') || is_punct(i, ')')) continue;
      s += token_text(t);
    }
    return s;
  }

  std::string expr(const Expr& e, int context = 0) const {
    std::string s;
    switch (e.kind) {
      case ExprKind::Int:
      case ExprKind::Str: return literal(e);
      case ExprKind::Bool: return e.ival ? "true" : "false";
      case ExprKind::Name: return fmt::format("{}", fmt::join(e.path, "."));
      case ExprKind::Call: return fmt::format("{}({})", fmt::join(e.path, "."), args(e.args));
      case ExprKind::List: {
        s = args(e.args);
        // `[[` would open a long string.
        return s.starts_with("[") ? "[ " + s + "]" : "[" + s + "]";
      }
      case ExprKind::Unary:
        s = e.op == "not" ? "not " + expr(*e.args[0], 3) : "-" + expr(*e.args[0], 7);
        break;
      case ExprKind::Binary: {
        const int p = precedence(e);
        s = expr(*e.args[0], p) + " " + e.op + " " + expr(*e.args[1], p + 1);
        break;
      }
    }
    return precedence(e) < context ? "(" + s + ")" : s;
  }

  std::string args(const std::vector<ExprPtr>& list) const {
    std::string s;
    for (const auto& a : list) s += (s.empty() ? "" : ", ") + expr(*a);
    return s;
  }

  static size_t end_of(const Expr& e) { return e.loc.byte + e.length; }

  void clause(const Clause& c) {
    if (c.args.empty())  // a bare keyword: `loop`
      line(2, c.keyword, c.loc.byte + c.keyword.size());
    else
      line(2, c.keyword + " " + args(c.args), end_of(*c.args.back()));
  }
  void clauses(const std::vector<Clause>& list) {
    for (const Clause& c : list) clause(c);
  }

  // `KIND ID {` ... `}` around the body printed by `body`.
  template <typename Body>
  void block(const std::string& head, size_t begin, Body body) {
    const size_t open = first_brace_after(begin);
    line(0, head + " {", tokens_[open].end);
    body();
    const size_t close = matching_brace(open);
    comments_before(tokens_[close].begin, 2);
    line(0, "}", tokens_[close].end);
  }

  // ---- items
  void pack(const PackHeader& p) {
    block("pack " + p.id, p.id_loc.byte, [&] { clauses(p.clauses); });
  }
  void list(const ListDecl& l) {
    line(0, "list " + l.name + " = " + expr(*l.value), end_of(*l.value));
  }
  void lua(const LuaBlock& l) {
    const Token& code = tokens_[next_code_token(l.loc.byte + 3)];
    line(0, "lua " + token_text(code), code.end);
  }
  void rule(const Rule& r) {
    block(std::string(rule_keyword(r.kind)) + " " + r.id, r.id_loc.byte,
          [&] { clauses(r.clauses); });
  }

  void test(const TestBlock& t) {
    const Token& name = tokens_[next_code_token(t.loc.byte + 4)];
    std::string head = "test ";
    if (name.kind == Token::Kind::String) {
      head += token_text(name);
    } else {
      head += t.name;
    }
    block(head, name.begin, [&] { test_body(t); });
  }

  void test_body(const TestBlock& t) {
    struct Entry {
      uint32_t byte;
      std::function<void()> print;
    };
    std::vector<Entry> entries;
    if (t.trace_is_file) {
      const Token& path = tokens_[token_index_at(t.trace_file_loc.byte)];
      entries.push_back(
          {path.begin, [&, path] { line(2, "trace file " + token_text(path), path.end); }});
    } else if (t.has_trace) {
      // The string token holding the trace's first byte, and the `trace` before it.
      const Token& str = tokens_[token_index_at(t.trace_loc.byte + 1) - 1];
      entries.push_back({str.begin, [&, str] { line(2, "trace " + token_text(str), str.end); }});
    }
    for (const Clause& c : t.clauses) entries.push_back({c.loc.byte, [&] { clause(c); }});
    for (const Expect& e : t.expects) entries.push_back({e.loc.byte, [&] { expect(e); }});
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.byte < b.byte; });
    for (const Entry& e : entries) e.print();
  }

  void expect(const Expect& e) {
    std::string s = "expect ";
    if (e.negated) s += "no ";
    s += e.subject;
    size_t end = e.subject_loc.byte + e.subject.size();
    if (e.subject == "questions") {  // `expect questions OP N`: the comparison comes first
      s += ' ';
      s += e.cmp;
    }
    for (size_t i = 0; i < e.operands.size(); ++i) {
      // Appended piece by piece: GCC 12 at -O3 misreports `" " + temporary` here
      // (-Wrestrict), which breaks a -Werror release build.
      if (i == 1) {
        s += ' ';
        s += e.subject == "edge" ? std::string_view("->") : std::string_view(e.cmp);
      }
      s += ' ';
      s += expr(*e.operands[i], kOperandPrecedence);
      end = end_of(*e.operands[i]);
    }
    for (const NamedArg& a : e.attrs) {
      s += ' ';
      s += a.name;
      s += ' ';
      s += expr(*a.value);
      end = end_of(*a.value);
    }
    line(2, s, end);
  }

  const std::string& text_;
  std::vector<Token> tokens_;
  std::vector<Token> comments_;
  std::vector<size_t> newlines_;
  size_t next_comment_ = 0;
  std::string out_;
};

}  // namespace

std::string format_source(const SourcePtr& source) {
  ParseResult parsed = parse(source);
  for (const Diagnostic& d : parsed.diagnostics)
    if (d.severity == Severity::Error) throw DiagnosticError(d);
  return Printer(*source).run(parsed.file);
}

}  // namespace cw::dsl
