#include "kernel/libbpf_log.h"

#include <doctest/doctest.h>

#include <string>

using namespace cw::kernel;

namespace {
int say(enum libbpf_print_level level, const char* format, ...) {
  va_list args;
  va_start(args, format);
  int result = keep_libbpf_message(level, format, args);
  va_end(args);
  return result;
}
}  // namespace

TEST_CASE("a verifier log of one long message keeps its last lines, where the reason is") {
  take_libbpf_log();
  // A load failure's log: libbpf passes it as one message, far longer than a line.
  std::string log = "-- BEGIN PROG LOAD LOG --\n";
  for (int i = 0; i < 200; ++i)
    log += std::to_string(i) + ": (79) r7 = *(u64 *)(r1 +0)  ; R1=ctx() R7=trusted_ptr_sock()\n";
  log += "R2 type=untrusted_ptr_ expected=ptr_, trusted_ptr_, rcu_ptr_\n-- END PROG LOAD LOG --\n";
  say(LIBBPF_WARN, "libbpf: prog 'on_sock_send': BPF program load failed: %s\n%s",
      "Permission denied", log.c_str());
  const std::string kept = take_libbpf_log();
  CHECK(kept.find("R2 type=untrusted_ptr_ expected=ptr_") != std::string::npos);
  CHECK(kept.find("-- END PROG LOAD LOG --") != std::string::npos);
  CHECK(kept.find("BEGIN PROG LOAD LOG") == std::string::npos);  // only the last lines
  size_t lines = 0;
  for (char c : kept) lines += c == '\n';
  CHECK(lines == kLibbpfLogLines);
  CHECK(take_libbpf_log().empty());  // taken
}

TEST_CASE("libbpf's debug chatter is not kept; its warnings are, a line each") {
  take_libbpf_log();
  say(LIBBPF_DEBUG, "libbpf: loading object '%s'\n", "causeway");
  CHECK(take_libbpf_log().empty());
  say(LIBBPF_WARN, "libbpf: prog '%s': failed to load: %d\n", "on_sock_send", -13);
  say(LIBBPF_INFO, "libbpf: failed to load object '%s'\n", "causeway");
  CHECK(take_libbpf_log() ==
        "\n  libbpf: prog 'on_sock_send': failed to load: -13"
        "\n  libbpf: failed to load object 'causeway'");
}
