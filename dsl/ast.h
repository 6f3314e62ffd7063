// Syntax tree of a rule file (docs/rules.md), with source positions on every node.
//
// The parser (dsl/parser.h) only builds this tree; meaning — which clauses a rule kind
// takes, field names, types — is checked by rules/ in one pass per file, so syntax and
// meaning errors come with the same kind of location.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/source.h"
#include "dsl/rule_kinds.h"

namespace cw::dsl {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

enum class ExprKind : uint8_t {
  Int,     // ival (durations are folded to ns here, `is_duration` set)
  Str,     // sval
  Bool,    // ival 0/1
  List,    // args = elements
  Name,    // path = {"from", "syscall", "name"}
  Unary,   // op = "not" | "-" ; args[0]
  Binary,  // op = "or" "and" "==" "!=" "<" "<=" ">" ">=" "in" "not in" "matches"
           //      "+" "-" "*" "/" "%" ; args[0], args[1]
  Call,    // path = callee ({"shared_symbols"} or {"lua", "score"}); args
};

struct Expr {
  ExprKind kind = ExprKind::Int;
  SourceLoc loc;        // first byte of the expression
  uint32_t length = 1;  // bytes the expression spans in the source (for carets)
  int64_t ival = 0;
  bool is_duration = false;
  std::string sval;
  std::vector<std::string> path;
  std::string op;
  std::vector<ExprPtr> args;
};

// `keyword expr, expr, ...`
struct Clause {
  std::string keyword;
  SourceLoc loc;  // of the keyword
  std::vector<ExprPtr> args;
};

struct PackHeader {
  std::string id;
  SourceLoc loc;  // of `pack`
  SourceLoc id_loc;
  std::vector<Clause> clauses;  // version, engine, requires, description
};

struct ListDecl {
  std::string name;
  SourceLoc loc;
  ExprPtr value;  // a List expression
};

struct LuaBlock {
  SourceLoc loc;            // of `lua`
  std::string code;         // the long string's content
  uint32_t first_line = 1;  // source line of the code's first line
};

// `KIND ID { clauses }`, KIND one of dsl/rule_kinds.h; a bare `loop` is a clause without args
struct Rule {
  RuleKind kind = RuleKind::Split;
  std::string id;
  SourceLoc loc;  // of the kind keyword
  SourceLoc id_loc;
  std::vector<Clause> clauses;
};

// `disable PACK/RULE`: this file's pack turns that rule off.
struct Disable {
  std::string rule;  // as written: qualified, or local to this pack
  SourceLoc loc;     // of `disable`
  SourceLoc rule_loc;
};

struct NamedArg {
  std::string name;
  SourceLoc loc;
  ExprPtr value;
};

// expect [no] edge A -> B {attr value}   operands = {A, B}
// expect [no] split T {attr value}       operands = {T}
// expect segments T OP N                 operands = {T, N}, cmp = OP
// expect stat NAME OP N                  operands = {Name, N}, cmp = OP
// expect hang T {attr value}             operands = {T}
// expect root_cause T {attr value}       operands = {T}
// expect questions OP N                  operands = {N}, cmp = OP
struct Expect {
  SourceLoc loc;  // of `expect`
  bool negated = false;
  std::string subject;
  SourceLoc subject_loc;
  std::vector<ExprPtr> operands;
  std::string cmp;  // "==" "!=" "<" "<=" ">" ">=" or empty
  std::vector<NamedArg> attrs;
};

struct TestBlock {
  std::string name;
  SourceLoc loc;  // of `test`
  std::string trace_text;
  SourceLoc trace_loc;          // of the trace string's first content byte
  bool has_trace = false;       // `trace STR` or `trace file STR` (a test has at most one)
  bool trace_is_file = false;   // `trace file "PATH"`
  std::string trace_file;       // its path as written; trace_text is empty
  SourceLoc trace_file_loc;     // of the path string's opening quote or bracket
  std::vector<Clause> clauses;  // other clauses: `hang STR`
  std::vector<Expect> expects;
};

struct File {
  SourcePtr source;
  std::optional<PackHeader> pack;
  std::vector<ListDecl> lists;
  std::vector<LuaBlock> lua;
  std::vector<Rule> rules;
  std::vector<TestBlock> tests;
  std::vector<Disable> disables;
};

}  // namespace cw::dsl
