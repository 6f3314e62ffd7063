// The rule-language parser: text -> syntax tree (dsl/ast.h), PEGTL grammar.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/source.h"
#include "dsl/ast.h"

namespace cw::dsl {

struct ParseLimits {
  uint32_t max_depth = 64;              // nesting of expressions/lists (untrusted input)
  size_t max_bytes = 16 * 1024 * 1024;  // a larger file is refused
};

struct ParseResult {
  File file;                            // what was parsed (partial on error)
  std::vector<Diagnostic> diagnostics;  // syntax errors, rendered by Diagnostic::render
  bool ok() const;                      // no error diagnostics
};

ParseResult parse(SourcePtr source, const ParseLimits& limits = {});

// Whether `id` is a dotted identifier, as a pack header names a pack (`node.libuv`).
bool is_pack_id(std::string_view id);

// `text` as a string literal of the rule language: quoted, `"` and `\` escaped.
std::string string_literal(std::string_view text);

// Canonical layout of a rule file, comments kept; throws DiagnosticError on a syntax
// error. Idempotent: format_source(format_source(x)) == format_source(x).
std::string format_source(const SourcePtr& source);

// The tokens of a rule file, comments included; never fails (an unterminated string runs
// to the end of its line, a long string to the end of the text). The formatter uses it to
// keep comments and literals verbatim, the parser to name what it found in errors.
struct Token {
  enum class Kind : uint8_t { Ident, Number, String, LongString, Comment, Punct };
  Kind kind;
  uint32_t begin;  // byte offsets in the text
  uint32_t end;
};
std::vector<Token> lex(std::string_view text);

}  // namespace cw::dsl
