// System call names by number, for trace formats that record only the number.
#pragma once

#include <cstdint>
#include <string_view>

namespace cw {

// The x86_64 name of system call `nr` ("read" for 0), or "" when it has none.
std::string_view x86_64_syscall_name(uint64_t nr);

}  // namespace cw
