// PEGTL grammar of the rule language (docs/rules.md). parser.cc turns the parse tree of one
// top-level item at a time into dsl/ast.h; every must<> names an Err so each failure has a
// message a person wrote (parser.cc renders them).
#pragma once

#include <cstdint>
#include <tao/pegtl.hpp>
#include <tao/pegtl/contrib/analyze.hpp>
#include <tao/pegtl/contrib/parse_tree.hpp>
#include <tao/pegtl/contrib/raw_string.hpp>
#include <utility>
#include <vector>

#include "dsl/rule_kinds.h"

namespace cw::dsl::grammar {

namespace pegtl = tao::pegtl;
using namespace tao::pegtl;

// Why a parse stopped; parser.cc words each one with the context it knows.
enum class Err : uint8_t {
  UnknownItem,
  PackId,
  PackIdChar,
  RuleId,
  ListName,
  ListEquals,
  ListValue,
  LuaString,
  TestName,
  OpenBrace,
  CloseBrace,
  ExprAfter,
  CloseParen,
  CloseList,
  CloseCall,
  UnterminatedString,
  NulInString,
  BadEscape,
  UnterminatedLongString,
  HexDigits,
  BadHexDigit,
  UnknownUnit,
  TraceString,
  TraceFilePath,
  ExpectSubject,
  NoSubject,
  Arrow,
  Comparison,
  StatName,
  RuleRef,
  TooDeep,
  // Found while building the tree rather than by the grammar:
  IntRange,
  FractionUnit,
  DuplicatePack,
  DuplicateTrace,
};

// What the parse is in the middle of: nesting depth (bounded, so hostile input cannot
// overflow the stack) and the openers of brackets for "to close" messages.
struct ParseState {
  uint32_t depth = 0;
  uint32_t max_depth = 64;
  std::vector<const char*> openers;  // innermost last: '(' '[' or a call's callee
};

// A thrown syntax error: what and where (a pointer into the source text).
struct SyntaxError {
  Err code;
  const char* at;
  const char* opener = nullptr;  // innermost open bracket or string, if any
};

// `need<E, R...>` is seq<R...> that, under must<>, fails with E.
template <Err E, typename... R>
struct need : seq<R...> {
  static constexpr Err error = E;
};
template <Err E, typename... R>
using must_ = must<need<E, R...>>;
template <Err E>
using fail_with = raise<need<E>>;

// Matches R one nesting level deeper; throws TooDeep past ParseState::max_depth.
template <typename R>
struct nested {
  using rule_t = nested;
  using subs_t = type_list<R>;

  template <apply_mode A, rewind_mode M, template <typename...> class Action,
            template <typename...> class Control, typename ParseInput, typename... States>
  static bool match(ParseInput& in, ParseState& ps, States&&... st) {
    if (ps.depth >= ps.max_depth) throw SyntaxError{Err::TooDeep, in.current()};
    ++ps.depth;
    struct Leave {
      ParseState& ps;
      ~Leave() { --ps.depth; }
    } leave{ps};
    return Control<R>::template match<A, M, Action, Control>(in, ps, st...);
  }
};

// ---- lexical ----
struct comment : seq<one<'#'>, until<eolf>> {};
struct sp : star<sor<plus<ascii::space>, comment>> {};

struct kw_and : TAO_PEGTL_KEYWORD("and") {};
struct kw_or : TAO_PEGTL_KEYWORD("or") {};
struct kw_not : TAO_PEGTL_KEYWORD("not") {};
struct kw_in : TAO_PEGTL_KEYWORD("in") {};
struct kw_matches : TAO_PEGTL_KEYWORD("matches") {};
struct kw_true : TAO_PEGTL_KEYWORD("true") {};
struct kw_false : TAO_PEGTL_KEYWORD("false") {};
struct reserved : sor<kw_and, kw_or, kw_not, kw_in, kw_matches, kw_true, kw_false> {};

struct word : seq<not_at<reserved>, identifier> {};
struct id_part : seq<identifier_first, star<sor<identifier_other, one<'-'>>>> {};
struct rule_id : seq<id_part, star<one<'.'>, id_part>> {};
struct pack_id : seq<identifier, star<one<'.'>, identifier>> {};
// `rule linux.kernel/futex.wake` in an expectation: a local or qualified rule id.
struct rule_ref : seq<rule_id, opt<one<'/'>, rule_id>> {};

// ---- literals ----
struct hex_int : seq<one<'0'>, one<'x', 'X'>, must_<Err::HexDigits, plus<xdigit>>,
                     must_<Err::BadHexDigit, not_at<identifier_other>>> {};
struct unit
    : seq<sor<TAO_PEGTL_STRING("ns"), TAO_PEGTL_STRING("us"), TAO_PEGTL_STRING("ms"), one<'s'>>,
          not_at<identifier_other>> {};
struct decimal : seq<plus<digit>, opt<one<'.'>, plus<digit>>, opt<unit>,
                     must_<Err::UnknownUnit, not_at<identifier_other>>> {};
struct number : sor<hex_int, decimal> {};

struct escape : seq<one<'\\'>, must_<Err::BadEscape, one<'"', '\\', 'n', 't'>>> {};
// A NUL byte in a string is an error, not dropped: a pack's text is not cut at it.
struct short_string
    : seq<one<'"'>, star<sor<escape, not_one<'"', '\\', '\n', '\r', '\0'>>>,
          must_<Err::NulInString, not_at<one<'\0'>>>, must_<Err::UnterminatedString, one<'"'>>> {};
// Nor in a long string: Lua code or a trace with one would be cut at it in messages.
struct long_string_byte : seq<must_<Err::NulInString, not_at<one<'\0'>>>, any> {};
using lua_raw_string = raw_string<'[', '=', ']', long_string_byte>;
struct long_open : seq<one<'['>, star<one<'='>>, one<'['>> {};
struct long_string : seq<at<long_open>, must_<Err::UnterminatedLongString, lua_raw_string>> {};
struct string_literal : sor<long_string, short_string> {};

// ---- expressions, loosest last ----
struct expr;
struct expr_after : must_<Err::ExprAfter, expr> {};

struct name : seq<word, star<one<'.'>, identifier>> {};
struct cmp_symbol_start : sor<TAO_PEGTL_STRING("=="), TAO_PEGTL_STRING("!="), one<'<', '>'>> {};
struct call_args : opt<expr, star<sp, one<','>, sp, expr_after>, sp> {};
struct call : seq<name, one<'('>, sp, nested<call_args>, must_<Err::CloseCall, one<')'>>> {};
// A trailing comma is allowed: long lists are written one element per line.
struct list_elements : opt<expr, star<sp, one<','>, sp, sor<at<one<']'>>, expr_after>>, sp> {};
struct list_literal : seq<one<'['>, sp, nested<list_elements>, must_<Err::CloseList, one<']'>>> {};
struct paren : seq<one<'('>, sp, nested<expr_after>, sp, must_<Err::CloseParen, one<')'>>> {};
// Clauses may span lines, so a line that starts with a clause keyword (not followed by an
// operator, as in `kind == "x"`) starts the next clause: `where a ==` followed by a line
// `strength weak` is an expression missing its operand, not `a == strength`.
struct at_line_start {
  using rule_t = at_line_start;
  using subs_t = tao::pegtl::empty_list;
  template <typename ParseInput>
  [[nodiscard]] static bool match(ParseInput& in) noexcept {
    const char* p = in.current();
    const char* begin = in.begin();
    while (p > begin && (p[-1] == ' ' || p[-1] == '\t')) --p;
    return p == begin || p[-1] == '\n';
  }
};
// One pegtl::keyword per word of a constexpr array of words (dsl/rule_kinds.h), spelled
// at compile time, so a word added to the table is a word the grammar knows.
template <const auto& Words, size_t W, size_t... I>
auto table_word(std::index_sequence<I...>) -> pegtl::keyword<Words[W][I]...>;
template <const auto& Words, size_t W>
using table_keyword = decltype(table_word<Words, W>(std::make_index_sequence<Words[W].size()>()));
template <const auto& Words, size_t... W>
auto table_words(std::index_sequence<W...>) -> sor<table_keyword<Words, W>...>;
template <const auto& Words>
using table_keywords = decltype(table_words<Words>(std::make_index_sequence<Words.size()>()));

// The clauses of every rule kind (from their table), of the pack header and of test blocks.
struct clause_word : sor<table_keywords<kRuleClauseWords>, TAO_PEGTL_KEYWORD("version"),
                         TAO_PEGTL_KEYWORD("engine"), TAO_PEGTL_KEYWORD("requires"),
                         TAO_PEGTL_KEYWORD("description"), TAO_PEGTL_KEYWORD("trace"),
                         TAO_PEGTL_KEYWORD("expect"), TAO_PEGTL_KEYWORD("hang")> {};
struct continues_expression : sor<cmp_symbol_start, kw_and, kw_or, kw_in, kw_matches, kw_not,
                                  one<'.', '(', '*', '/', '%', '+'>> {};
struct clause_at_line_start : seq<at_line_start, clause_word, sp, not_at<continues_expression>> {};
struct primary
    : seq<not_at<clause_at_line_start>,
          sor<paren, string_literal, list_literal, number, kw_true, kw_false, call, name>> {};

struct unary;
struct negate : seq<one<'-'>, sp, nested<must_<Err::ExprAfter, unary>>> {};
struct unary : sor<negate, primary> {};

struct mul_op : one<'*', '/', '%'> {};
struct mul_expr : seq<unary, star<sp, mul_op, sp, must_<Err::ExprAfter, unary>>> {};
// '-' but not the '->' of `expect edge A -> B`.
struct add_op : sor<one<'+'>, seq<one<'-'>, not_at<one<'>'>>>> {};
struct add_expr : seq<mul_expr, star<sp, add_op, sp, must_<Err::ExprAfter, mul_expr>>> {};
struct cmp_symbol : sor<TAO_PEGTL_STRING("=="), TAO_PEGTL_STRING("!="), TAO_PEGTL_STRING("<="),
                        TAO_PEGTL_STRING(">="), one<'<'>, one<'>'>> {};
struct not_in : seq<kw_not, sp, kw_in> {};
struct cmp_op : sor<cmp_symbol, not_in, kw_in, kw_matches> {};
struct cmp_expr : seq<add_expr, star<sp, cmp_op, sp, must_<Err::ExprAfter, add_expr>>> {};
struct not_expr;
struct negation : seq<kw_not, sp, nested<must_<Err::ExprAfter, not_expr>>> {};
struct not_expr : sor<negation, cmp_expr> {};
struct and_expr : seq<not_expr, star<sp, kw_and, sp, must_<Err::ExprAfter, not_expr>>> {};
struct or_expr : seq<and_expr, star<sp, kw_or, sp, must_<Err::ExprAfter, and_expr>>> {};
struct expr : seq<or_expr> {};

// ---- items ----
struct kw_pack : TAO_PEGTL_KEYWORD("pack") {};
struct kw_list : TAO_PEGTL_KEYWORD("list") {};
struct kw_lua : TAO_PEGTL_KEYWORD("lua") {};
struct kw_test : TAO_PEGTL_KEYWORD("test") {};
struct kw_disable : TAO_PEGTL_KEYWORD("disable") {};
// `split`, `batch`, ...: one keyword per kind of the table (dsl/rule_kinds.h).
struct rule_kind : table_keywords<kRuleKindKeywords> {};
struct test_name : sor<short_string, rule_id> {};

// The head of an item; a clause never looks like one, so a missing '}' is reported where
// the next item starts.
struct item_head
    : sor<seq<kw_pack, sp, pack_id, sp, one<'{'>>, seq<kw_list, sp, identifier, sp, one<'='>>,
          seq<kw_lua, sp, long_open>, seq<rule_kind, sp, rule_id, sp, one<'{'>>,
          seq<kw_test, sp, test_name, sp, one<'{'>>, seq<kw_disable, sp, rule_ref>> {};

struct clause_keyword : word {};
struct clause
    : seq<not_at<item_head>, clause_keyword, sp, expr_after, star<sp, one<','>, sp, expr_after>> {};
// A clause that takes no value (`loop` in a split rule, `ends_polling` in an edge rule): the
// keyword stands alone when what follows on its line is the end of the rule, a comment, or
// the next clause.
struct bare_keyword : table_keywords<kRuleBareWords> {};
struct blanks : star<one<' ', '\t'>> {};
struct bare_clause
    : seq<bare_keyword, at<blanks, sor<one<'}', '#', '\r', '\n'>, eof,
                                       seq<clause_word, sp, not_at<continues_expression>>>>> {};
struct open_brace : must_<Err::OpenBrace, one<'{'>> {};
struct close_brace : must_<Err::CloseBrace, one<'}'>> {};

struct pack_item
    : seq<kw_pack, sp, must_<Err::PackId, pack_id>, must_<Err::PackIdChar, not_at<one<'-'>>>, sp,
          open_brace, sp, star<clause, sp>, close_brace> {};
struct list_name : identifier {};
struct list_item
    : seq<kw_list, sp, must_<Err::ListName, list_name>, sp, must_<Err::ListEquals, one<'='>>, sp,
          must_<Err::ListValue, not_at<long_open>, list_literal>> {};
struct lua_item : seq<kw_lua, sp, must_<Err::LuaString, long_string>> {};
// `disable PACK/RULE`: the pack turns off another pack's rule (docs/rules.md "Overriding").
struct disable_item : seq<kw_disable, sp, must_<Err::RuleRef, rule_ref>> {};
struct rule_item : seq<rule_kind, sp, must_<Err::RuleId, rule_id>, sp, open_brace, sp,
                       star<sor<bare_clause, clause>, sp>, close_brace> {};

// Test blocks: `trace STR` and `expect ...` lines (see dsl/ast.h Expect).
struct kw_trace : TAO_PEGTL_KEYWORD("trace") {};
struct kw_expect : TAO_PEGTL_KEYWORD("expect") {};
struct kw_no : TAO_PEGTL_KEYWORD("no") {};
// `trace [[ ... ]]` holds the trace; `trace file "PATH"` names a text or binary trace file.
struct kw_file : TAO_PEGTL_KEYWORD("file") {};
struct trace_file : seq<kw_file, sp, must_<Err::TraceFilePath, string_literal>> {};
struct trace_entry : seq<kw_trace, sp, must_<Err::TraceString, sor<trace_file, string_literal>>> {};

struct attr_keyword : sor<TAO_PEGTL_KEYWORD("kind"), TAO_PEGTL_KEYWORD("strength"),
                          TAO_PEGTL_KEYWORD("at"), TAO_PEGTL_KEYWORD("link")> {};
struct rule_attr_keyword : TAO_PEGTL_KEYWORD("rule") {};
struct attr : sor<seq<rule_attr_keyword, sp, must_<Err::RuleRef, rule_ref>>,
                  seq<attr_keyword, sp, expr_after>> {};
struct attrs : star<sp, attr> {};
struct operand : must_<Err::ExprAfter, add_expr> {};
struct arrow : TAO_PEGTL_STRING("->") {};
struct subject_edge : TAO_PEGTL_KEYWORD("edge") {};
struct subject_split : TAO_PEGTL_KEYWORD("split") {};
struct subject_segments : TAO_PEGTL_KEYWORD("segments") {};
struct subject_stat : TAO_PEGTL_KEYWORD("stat") {};
struct subject_hang : TAO_PEGTL_KEYWORD("hang") {};
struct subject_root_cause : TAO_PEGTL_KEYWORD("root_cause") {};
struct subject_questions : TAO_PEGTL_KEYWORD("questions") {};
struct expect_edge
    : seq<subject_edge, sp, operand, sp, must_<Err::Arrow, arrow>, sp, operand, attrs> {};
struct expect_split : seq<subject_split, sp, operand, attrs> {};
struct comparison : must_<Err::Comparison, cmp_symbol> {};
struct expect_segments : seq<subject_segments, sp, operand, sp, comparison, sp, operand> {};
struct expect_stat
    : seq<subject_stat, sp, must_<Err::StatName, name>, sp, comparison, sp, operand> {};
// Diagnosis: `expect hang T [kind K]`, `expect root_cause T [kind K]`, `expect questions OP N`.
struct expect_hang : seq<subject_hang, sp, operand, attrs> {};
struct expect_root_cause : seq<subject_root_cause, sp, operand, attrs> {};
struct expect_questions : seq<subject_questions, sp, comparison, sp, operand> {};
struct negated : kw_no {};
struct expect_entry
    : seq<kw_expect, sp,
          must_<Err::ExpectSubject,
                sor<seq<negated, sp, must_<Err::NoSubject, sor<expect_edge, expect_split>>>,
                    expect_edge, expect_split, expect_segments, expect_stat, expect_hang,
                    expect_root_cause, expect_questions>>> {};
struct test_entry : sor<trace_entry, expect_entry, clause> {};
struct test_item : seq<kw_test, sp, must_<Err::TestName, test_name>, sp, open_brace, sp,
                       star<test_entry, sp>, close_brace> {};

struct item : sor<pack_item, list_item, lua_item, rule_item, test_item, disable_item,
                  fail_with<Err::UnknownItem>> {};

// A whole file; parser.cc parses item by item to recover after errors, and analyze<>
// checks this for rules that could loop without consuming input.
struct file : seq<sp, star<item, sp>, eof> {};

// The nodes parser.cc reads back from the parse tree.
template <typename Rule>
using selector = parse_tree::selector<
    Rule, parse_tree::store_content::on<
              pack_item, list_item, lua_item, rule_item, test_item, disable_item, rule_kind,
              rule_id, pack_id, list_name, test_name, clause, clause_keyword, or_expr, and_expr,
              cmp_expr, add_expr, mul_expr, kw_or, kw_and, cmp_op, add_op, mul_op, negation, negate,
              number, short_string, long_string, lua_raw_string::content, kw_true, kw_false, name,
              call, list_literal, paren, trace_entry, trace_file, expect_entry, negated,
              subject_edge, subject_split, subject_segments, subject_stat, subject_hang,
              subject_root_cause, subject_questions, bare_clause, cmp_symbol, attr, attr_keyword,
              rule_attr_keyword, rule_ref>>;

// Control: must<> failures become SyntaxError with the Err of the failed need<>, and the
// position of open brackets is remembered for "to close" messages.
template <typename Rule>
struct control : normal<Rule> {
  // raw_string passes its marker size as an extra state, so ParseState is looked up.
  template <typename T>
  static ParseState* find_state(T&) {
    return nullptr;
  }
  static ParseState* find_state(ParseState& ps) { return &ps; }
  template <typename... States>
  static ParseState* state_of(States&... st) {
    ParseState* found = nullptr;
    ((found = found ? found : find_state(st)), ...);
    return found;
  }

  template <typename ParseInput, typename... States>
  [[noreturn]] static void raise(const ParseInput& in, States&&... st) {
    static_assert(
        requires { Rule::error; }, "every must<> in the grammar names an Err");
    const ParseState* ps = state_of(st...);
    throw SyntaxError{Rule::error, in.current(),
                      ps && !ps->openers.empty() ? ps->openers.back() : nullptr};
  }

  static constexpr bool tracks_opener =
      std::is_same_v<Rule, paren> || std::is_same_v<Rule, list_literal> ||
      std::is_same_v<Rule, call> || std::is_same_v<Rule, short_string> ||
      std::is_same_v<Rule, long_string>;

  template <typename ParseInput, typename... States>
  static void start(const ParseInput& in, States&&... st) {
    if constexpr (tracks_opener) state_of(st...)->openers.push_back(in.current());
  }
  template <typename ParseInput, typename... States>
  static void success(const ParseInput&, States&&... st) {
    if constexpr (tracks_opener) state_of(st...)->openers.pop_back();
  }
  template <typename ParseInput, typename... States>
  static void failure(const ParseInput&, States&&... st) {
    if constexpr (tracks_opener) state_of(st...)->openers.pop_back();
  }
};

}  // namespace cw::dsl::grammar

namespace tao::pegtl {
template <typename Name, typename R>
struct analyze_traits<Name, cw::dsl::grammar::nested<R>> : analyze_seq_traits<R> {};
// A position test: consumes nothing.
template <typename Name>
struct analyze_traits<Name, cw::dsl::grammar::at_line_start> : analyze_opt_traits<> {};
}  // namespace tao::pegtl
