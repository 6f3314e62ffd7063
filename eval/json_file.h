// Reading the suites' JSON files (scenario.json, pair.json): a parse error says
// FILE:LINE:COL, and every other error names the key, so a suite author can fix it.
#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cw::eval {

// The parsed contents of `file`; throws ScenarioError ("FILE:LINE:COL: not valid JSON: …",
// or "FILE: cannot read").
nlohmann::json read_json_file(const std::string& file);

// The folders under `suite` that hold `file` (a suite's scenario.json, pair.json), sorted.
std::vector<std::string> folders_with(const std::string& suite, const char* file);

// Typed access to one file's keys; each error is a ScenarioError "FILE: KEY: what".
class JsonReader {
 public:
  explicit JsonReader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const;
  // Every key of `obj` must be one of `known`.
  void only(const nlohmann::json& obj, const std::string& where,
            std::initializer_list<const char*> known) const;
  std::string text(const nlohmann::json& obj, const std::string& where, const char* key,
                   bool required) const;
  std::vector<std::string> texts(const nlohmann::json& obj, const char* key, bool required) const;

 private:
  std::string file_;
};

}  // namespace cw::eval
