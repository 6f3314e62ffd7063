#include "dsl/parser.h"

#include <doctest/doctest.h>

#include "dsl/grammar.h"

namespace cw::dsl {

TEST_CASE("the grammar has no rule that can loop without consuming input") {
  CHECK(tao::pegtl::analyze<grammar::file>(1) == 0);
}

}  // namespace cw::dsl
