#include "cli/duration.h"

#include <charconv>
#include <string_view>
#include <system_error>

namespace cw::cli {

std::optional<uint64_t> parse_duration(const std::string& text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || value < 0) return std::nullopt;
  const std::string_view unit(end, text.data() + text.size() - end);
  double scale = 0;
  if (unit.empty() || unit == "ns") scale = 1;
  if (unit == "us") scale = 1e3;
  if (unit == "ms") scale = 1e6;
  if (unit == "s") scale = 1e9;
  if (scale == 0 || value * scale > 1.8e19) return std::nullopt;
  return static_cast<uint64_t>(value * scale);
}

}  // namespace cw::cli
