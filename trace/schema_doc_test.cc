#include "trace/schema_doc.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace cw {
namespace {

TEST_CASE("schema_markdown lists every kind with its span role and typed fields") {
  Schema s;
  s.add(KindDef{"open_thing",
                {{"id", FieldType::Uint, "which | thing"}},
                SpanRole::Open,
                "thing",
                "a thing began"});
  s.add(KindDef{"plain", {}, SpanRole::None, {}, "nothing to see"});
  std::string md = schema_markdown(s);
  CHECK(md.find("| [`open_thing`](#open_thing) | opens `thing` | a thing began |\n") !=
        std::string::npos);
  CHECK(md.find("\n## open_thing\n\nA thing began.\n\nSpan: opens `thing`.\n\n"
                "| Field | Type | Meaning |\n|---|---|---|\n| `id` | uint | which \\| thing |\n") !=
        std::string::npos);
  CHECK(md.find("\n## plain\n\nNothing to see.\n\nNo fields.\n") != std::string::npos);
}

// docs/events.md is generated; this keeps it in sync with Schema::builtin().
TEST_CASE("docs/events.md is the rendered builtin schema") {
  const std::string path = std::string(CW_SOURCE_DIR) + "/docs/events.md";
  const std::string expected = schema_markdown(Schema::builtin());
  if (std::getenv("CW_UPDATE_DOCS")) {
    std::ofstream(path, std::ios::binary) << expected;
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream actual;
  actual << in.rdbuf();
  INFO(
      "docs/events.md is out of date; regenerate it with: CW_UPDATE_DOCS=1 "
      "build/trace/trace_tests -tc='docs/events.md*'");
  CHECK(actual.str() == expected);
}

}  // namespace
}  // namespace cw
