// The command line's exit codes (DESIGN §9): a contract scripts rely on.
#pragma once

namespace cw::cli {
inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 1;     // the input was wrong; the message says where
inline constexpr int kExitEnvironment = 2;  // the environment cannot do it; says what is missing
inline constexpr int kExitMismatch = 3;     // eval: a scenario did not match its ground truth
}  // namespace cw::cli
