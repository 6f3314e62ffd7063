// The rule-language parser: text -> syntax tree (dsl/ast.h), PEGTL grammar.
#pragma once

#include <string>
#include <vector>

#include "base/source.h"
#include "dsl/ast.h"

namespace cw::dsl {

struct ParseLimits {
  uint32_t max_depth = 64;              // nesting of expressions/lists (untrusted input)
  size_t max_bytes = 16 * 1024 * 1024;  // a larger file is refused
};

struct ParseResult {
  File file;                             // what was parsed (partial on error)
  std::vector<Diagnostic> diagnostics;   // syntax errors, rendered by Diagnostic::render
  bool ok() const;                       // no error diagnostics
};

ParseResult parse(SourcePtr source, const ParseLimits& limits = {});

// Canonical layout of a rule file, comments kept; throws DiagnosticError on a syntax
// error. Idempotent: format_source(format_source(x)) == format_source(x).
std::string format_source(const SourcePtr& source);

}  // namespace cw::dsl
