// What libbpf said while the programs were opened and loaded: a failed load's reason (the
// verifier's log, a missing BTF type) reaches the caller only through libbpf's print
// callback, so the last lines are kept here for the error that reports the failure.
#pragma once

#include <bpf/libbpf.h>

#include <cstdarg>
#include <string>

namespace cw::kernel {

// The lines kept: the verifier gives its reason in its log's last lines.
inline constexpr size_t kLibbpfLogLines = 12;

// libbpf's print callback (libbpf_set_print): keeps the last kLibbpfLogLines lines of
// warnings and information, whatever the length of one message (a verifier log is one
// message of thousands of lines).
int keep_libbpf_message(enum libbpf_print_level level, const char* format, va_list args);

// The lines kept since the last call, each on a line of its own indented by two spaces;
// empty when libbpf said nothing. Forgets them.
std::string take_libbpf_log();

}  // namespace cw::kernel
