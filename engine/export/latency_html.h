// `causeway latency --html FILE`: one self-contained page (no network) with the heat map
// of the ranked calling contexts, as IntroPerf's Figure 7 draws them, and the
// performance-annotated CCT of those contexts.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace cw::engine {

// `ranking` is latency::ranking_json, `tree` latency::ranked_tree_json; `title` names the
// trace(s). The data is embedded as JSON and drawn by the page's own script.
std::string latency_html(const nlohmann::json& ranking, const nlohmann::json& tree,
                         std::string_view title);

}  // namespace cw::engine
