#include "rules/version.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <vector>

#include "cw_version.h"

namespace cw::rules {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Parses dot-separated decimal parts into `parts`; false on anything else.
bool parse_parts(std::string_view text, std::vector<int>& parts) {
  parts.clear();
  while (true) {
    size_t dot = text.find('.');
    std::string_view part = text.substr(0, dot);
    if (part.empty() || part.size() > 9) return false;
    int value = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (ec != std::errc() || end != part.data() + part.size()) return false;
    parts.push_back(value);
    if (dot == std::string_view::npos) return true;
    text.remove_prefix(dot + 1);
  }
}

bool valid_suffix(std::string_view s) {
  if (s.size() < 2) return false;
  for (char c : s.substr(1))
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-')) return false;
  return true;
}

}  // namespace

std::optional<Version> parse_pack_version(std::string_view text) {
  size_t suffix = text.find_first_of("-+");
  if (suffix != std::string_view::npos) {
    if (!valid_suffix(text.substr(suffix))) return std::nullopt;
    text = text.substr(0, suffix);
  }
  std::vector<int> parts;
  if (!parse_parts(text, parts) || parts.size() != 3) return std::nullopt;
  return Version{parts[0], parts[1], parts[2]};
}

std::optional<Version> parse_partial_version(std::string_view text) {
  std::vector<int> parts;
  if (!parse_parts(text, parts) || parts.size() > 3) return std::nullopt;
  parts.resize(3, 0);
  return Version{parts[0], parts[1], parts[2]};
}

std::string_view engine_version() {
  return CW_VERSION;
}

ConstraintResult check_constraint(std::string_view constraint, const Version& version) {
  bool satisfied = true;
  bool any = false;
  while (true) {
    size_t comma = constraint.find(',');
    std::string_view term = trim(constraint.substr(0, comma));
    size_t op_len = 0;
    while (op_len < term.size() &&
           std::string_view("<>=!").find(term[op_len]) != std::string_view::npos)
      ++op_len;
    std::string_view op = term.substr(0, op_len);
    auto operand = parse_partial_version(trim(term.substr(op_len)));
    if (!operand) return ConstraintResult::Malformed;
    const Version& v = *operand;
    bool holds;
    if (op.empty() || op == "=" || op == "==")
      holds = version == v;
    else if (op == "!=")
      holds = version != v;
    else if (op == "<")
      holds = version < v;
    else if (op == "<=")
      holds = version <= v;
    else if (op == ">")
      holds = version > v;
    else if (op == ">=")
      holds = version >= v;
    else
      return ConstraintResult::Malformed;
    satisfied = satisfied && holds;
    any = true;
    if (comma == std::string_view::npos) break;
    constraint.remove_prefix(comma + 1);
  }
  if (!any) return ConstraintResult::Malformed;
  return satisfied ? ConstraintResult::Satisfied : ConstraintResult::Unsatisfied;
}

bool constraints_overlap(std::string_view a, std::string_view b) {
  // Each term bounds the versions at its operand, so if any version meets both, one of the
  // operands or a version right beside one does.
  std::vector<Version> candidates = {Version{}};
  for (std::string_view c : {a, b}) {
    while (!c.empty()) {
      size_t comma = c.find(',');
      std::string_view term = trim(c.substr(0, comma));
      term.remove_prefix(std::min(term.find_first_not_of("<>=!"), term.size()));
      if (auto v = parse_partial_version(trim(term))) {
        candidates.push_back(*v);
        candidates.push_back({v->major, v->minor, v->patch + 1});
        if (v->patch > 0)
          candidates.push_back({v->major, v->minor, v->patch - 1});
        else if (v->minor > 0)
          candidates.push_back({v->major, v->minor - 1, INT_MAX});
        else if (v->major > 0)
          candidates.push_back({v->major - 1, INT_MAX, INT_MAX});
      }
      if (comma == std::string_view::npos) break;
      c.remove_prefix(comma + 1);
    }
  }
  for (const Version& v : candidates)
    if (check_constraint(a, v) == ConstraintResult::Satisfied &&
        check_constraint(b, v) == ConstraintResult::Satisfied)
      return true;
  return false;
}

}  // namespace cw::rules
