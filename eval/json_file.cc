#include "eval/json_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "eval/scenario.h"

namespace cw::eval {

using nlohmann::json;

json read_json_file(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw ScenarioError(fmt::format("{}: cannot read", file));
  std::stringstream buffer;
  buffer << in.rdbuf();
  try {
    return json::parse(buffer.str());
  } catch (const json::parse_error& e) {
    // nlohmann names the byte just past the offending token: say where that is.
    const std::string text = buffer.str();
    const size_t at = std::min<size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<long>(at), '\n');
    const size_t line_start = at == 0 ? std::string::npos : text.rfind('\n', at - 1);
    const size_t col = line_start == std::string::npos ? at + 1 : at - line_start;
    std::string what = e.what();
    what = what.substr(what.rfind(": ") + 2);
    throw ScenarioError(fmt::format("{}:{}:{}: not valid JSON: {}", file, line, col, what));
  }
}

std::vector<std::string> folders_with(const std::string& suite, const char* file) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(suite, ec))
    if (entry.is_directory() && std::filesystem::exists(entry.path() / file))
      out.push_back(entry.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

void JsonReader::fail(const std::string& where, const std::string& what) const {
  throw ScenarioError(fmt::format("{}: {}: {}", file_, where, what));
}

void JsonReader::only(const json& obj, const std::string& where,
                      std::initializer_list<const char*> known) const {
  if (!obj.is_object()) fail(where, "expected an object");
  for (const auto& [key, value] : obj.items()) {
    if (std::none_of(known.begin(), known.end(), [&](const char* k) { return key == k; })) {
      std::string list;
      for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      fail(where.empty() ? key : where + "." + key,
           fmt::format("unknown key (expected one of: {})", list));
    }
  }
}

std::string JsonReader::text(const json& obj, const std::string& where, const char* key,
                             bool required) const {
  auto it = obj.find(key);
  std::string at = where.empty() ? key : where + "." + key;
  if (it == obj.end()) {
    if (required) fail(at, "missing");
    return {};
  }
  if (!it->is_string()) fail(at, "expected a string");
  return it->get<std::string>();
}

std::vector<std::string> JsonReader::texts(const json& obj, const char* key, bool required) const {
  auto it = obj.find(key);
  if (it == obj.end()) {
    if (required) fail(key, "missing");
    return {};
  }
  if (!it->is_array()) fail(key, "expected an array of strings");
  std::vector<std::string> out;
  for (size_t i = 0; i < it->size(); ++i) {
    if (!(*it)[i].is_string()) fail(fmt::format("{}[{}]", key, i), "expected a string");
    out.push_back((*it)[i].get<std::string>());
  }
  return out;
}

}  // namespace cw::eval
