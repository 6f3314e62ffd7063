#include "trace/schema_doc.h"

#include <fmt/format.h>

namespace cw {

namespace {

// Table cells cannot hold a raw '|' or a line break.
std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string span_text(const KindDef& k) {
  switch (k.span_role) {
    case SpanRole::None: return "—";
    case SpanRole::Open: return fmt::format("opens `{}`", k.span);
    case SpanRole::Close: return fmt::format("closes `{}`", k.span);
  }
  return "—";
}

}  // namespace

std::string schema_markdown(const Schema& schema) {
  std::string out =
      "# Event kinds\n"
      "\n"
      "<!-- Generated from Schema::builtin() by schema_markdown() (trace/schema_doc.cc);\n"
      "     do not edit: trace_tests checks that this file matches. -->\n"
      "\n"
      "Every event has a time (`ts`, ns on CLOCK_MONOTONIC), the thread it happened on\n"
      "(`tid`), the `cpu`, an optional call `stack`, and the typed fields of its kind listed\n"
      "below. Field types: `int` (signed 64-bit), `uint` (unsigned 64-bit: addresses,\n"
      "offsets, identities), `str` (a string), `tid` (a thread id). A field not recorded is\n"
      "0 or the empty string.\n"
      "\n"
      "Kinds that open or close a *span* nest on their thread; rules reach the innermost open\n"
      "span by its name (`syscall.name`, `call.fn`) or test whether one is open (`irq`).\n"
      "\n"
      "| Kind | Span | Description |\n"
      "|---|---|---|\n";
  for (const auto& k : schema.kinds())
    out += fmt::format("| [`{}`](#{}) | {} | {} |\n", k.name, k.name, span_text(k), cell(k.doc));
  for (const auto& k : schema.kinds()) {
    std::string doc = k.doc;
    if (!doc.empty() && doc[0] >= 'a' && doc[0] <= 'z') doc[0] = static_cast<char>(doc[0] - 32);
    out += fmt::format("\n## {}\n\n{}.\n\n", k.name, doc);
    if (k.span_role != SpanRole::None) out += fmt::format("Span: {}.\n\n", span_text(k));
    if (k.fields.empty()) {
      out += "No fields.\n";
      continue;
    }
    out += "| Field | Type | Meaning |\n|---|---|---|\n";
    for (const auto& f : k.fields)
      out += fmt::format("| `{}` | {} | {} |\n", f.name, field_type_name(f.type), cell(f.doc));
  }
  return out;
}

}  // namespace cw
