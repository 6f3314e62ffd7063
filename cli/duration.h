// Durations on the command line: "250us", "2ms", "1.5s", or a bare number of ns.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace cw::cli {

// `text` in nanoseconds; nullopt when it is not a non-negative number with one of the units
// ns, us, ms, s (none: ns).
std::optional<uint64_t> parse_duration(const std::string& text);

}  // namespace cw::cli
