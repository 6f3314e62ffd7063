#include "engine/export/latency_html.h"

#include <doctest/doctest.h>

namespace cw::engine {
namespace {

TEST_CASE("latency page: names from a trace cannot close the data script or add markup") {
  const nlohmann::json ranking = {
      {"mode", "conservative"},
      {"contexts", {{{"rank", 1}, {"frames", {{{"function", "</script><b>x</b>"}}}}}}}};
  const std::string page = latency_html(ranking, nlohmann::json::array(), "<t>&\"");
  // One closing tag per script element (data, tree, code), none from the name.
  size_t closes = 0;
  for (size_t at = page.find("</script>"); at != std::string::npos;
       at = page.find("</script>", at + 1))
    ++closes;
  CHECK(closes == 3);
  CHECK(page.find("\\u003c/script>\\u003cb>x\\u003c/b>") != std::string::npos);
  CHECK(page.find("<title>causeway latency: &lt;t&gt;&amp;&quot;</title>") != std::string::npos);
  // Self-contained: nothing is fetched.
  CHECK(page.find("src=") == std::string::npos);
  CHECK(page.find("http") == std::string::npos);
}

TEST_CASE("latency page: bytes that are not UTF-8 do not stop the page being written") {
  const nlohmann::json ranking = {{"contexts", {{{"frames", {{{"function", "a\xff"}}}}}}}};
  CHECK_NOTHROW(latency_html(ranking, nlohmann::json::array(), "t"));
}

}  // namespace
}  // namespace cw::engine
