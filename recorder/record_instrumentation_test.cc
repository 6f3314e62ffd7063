#include "recorder/record_instrumentation.h"

#include <doctest/doctest.h>

#include <vector>

namespace cw {
namespace {

// A program built with -fsanitize=address exits at start when another library comes
// before ASan's runtime in LD_PRELOAD, unless told not to check (instrumentation never
// breaks the program; tests/record/instrument_stress.t runs one).
TEST_CASE("the hook library's LD_PRELOAD comes with ASan's link-order check off") {
  CHECK(asan_options_with_preload(nullptr) == "verify_asan_link_order=0");
  CHECK(asan_options_with_preload("") == "verify_asan_link_order=0");
  CHECK(asan_options_with_preload("detect_leaks=0") == "detect_leaks=0:verify_asan_link_order=0");
  // Later options win over the user's own.
  CHECK(asan_options_with_preload("verify_asan_link_order=1") ==
        "verify_asan_link_order=1:verify_asan_link_order=0");
}

// `lock addl $1, flag(%rip)` (what __atomic_fetch_add compiles to) cannot be uprobed: the
// kernel refused it, and the whole recording failed with "Unknown error 524" (found by
// tests/record/instrument_stress.t). Such an instruction is now left out and said.
TEST_CASE("instructions uprobes refuse are told by their prefixes") {
  using Bytes = std::vector<uint8_t>;
  auto why = [](const Bytes& b) { return uprobe_refused_prefix(b); };
  CHECK(why(Bytes{0xf0, 0x83, 0x05, 0x17, 0x58, 0x00, 0x00, 0x01}) == "a lock prefix");
  CHECK(why(Bytes{0x66, 0xf0, 0x0f, 0xb1, 0x0d}) == "a lock prefix");  // after another prefix
  CHECK(why(Bytes{0x2e, 0x8b, 0x05}) == "a segment prefix");
  CHECK(why(Bytes{0x8b, 0x05, 0x17, 0x58, 0x00, 0x00}) == "");  // mov flag(%rip), %eax
  CHECK(why(Bytes{0x64, 0x48, 0x8b, 0x04, 0x25}) == "");        // fs: is allowed
  CHECK(why(Bytes{0x48, 0xf0}) == "");  // 0xf0 after REX is not a prefix (an opcode byte)
  CHECK(why(Bytes{}) == "");
}

}  // namespace
}  // namespace cw
