// The event reference (docs/events.md) is generated from the schema, so the document
// cannot drift from what the recorder writes and rules are checked against.
#pragma once

#include <string>

#include "trace/schema.h"

namespace cw {

// Markdown: every kind with its description, span role and a table of typed fields.
std::string schema_markdown(const Schema& schema);

}  // namespace cw
