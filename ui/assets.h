// The files of `causeway ui`'s page (ui/assets), built into the binary by
// ui/embed_assets.cmake.
#pragma once

#include <span>
#include <string_view>

namespace cw::ui {

struct Asset {
  std::string_view path;  // relative to ui/assets: "index.html", "app.js"
  std::string_view body;
};

std::span<const Asset> assets();

}  // namespace cw::ui
