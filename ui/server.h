// `causeway ui`'s HTTP server: bound to 127.0.0.1 only, every path under a random token
// (/TOKEN/…); a request without it, or for another host name, gets 403. It serves the
// page (ui/assets), the Session's state as JSON, and takes the page's answers.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "ui/session.h"

namespace cw::ui {

// 128 random bits from the kernel (getrandom), as 32 hex digits. Throws std::system_error
// when the kernel gives none.
std::string random_token();

// Whether `given` is `token`, in time that does not depend on where they differ.
bool token_matches(std::string_view given, std::string_view token);

struct ServerConfig {
  std::string token;  // random_token()
  int port = 0;       // 0: any free port
  // POST api/save: writes the answers where the command was told to; {"ok", "message"}.
  // Null: the page offers the pack as a download (pack_text) instead.
  std::function<nlohmann::json()> save;
  // GET api/pack.cw: the answers as a pack's text, or nullopt before the diagnosis is done.
  std::function<std::optional<std::string>()> pack_text;
  // GET latency.html: the heat-map page, or nullopt when the trace has no latency data.
  std::function<std::optional<std::string>()> latency_page;
  // POST api/quit, after the reply went out.
  std::function<void()> quit;
};

class Server {
 public:
  Server(Session& session, ServerConfig config);
  ~Server();
  // Binds 127.0.0.1:port. Returns false with `*why` when it cannot.
  bool bind(std::string* why);
  int port() const;
  std::string url() const;  // http://127.0.0.1:PORT/TOKEN/
  // Serves until stop() (from another thread).
  void run();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cw::ui
