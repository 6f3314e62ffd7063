// `causeway ui`'s HTTP server: bound to 127.0.0.1 only, every path under a random token
// (/TOKEN/…); a request without it, or for another host name, gets 403. It serves the
// page (ui/assets), the Session's state as JSON, and takes the page's answers.
//
// Any local user can connect, so what a client can make it hold is bounded (Limits): a
// request's head is read by one thread for all connections (a client that sends it slowly
// holds no worker) and must come whole, within a size, before a deadline; a request
// without the token is refused before its body is read; a body is capped; only some of
// the workers may wait in a long poll; stop() ends every connection at once.
#pragma once

#include <cstddef>
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

// What one client can make the server hold. The defaults are for `causeway ui`; the
// tests shorten the times.
struct Limits {
  // A request's line and headers, with their blank line: the most bytes (more: 431), and
  // how long the server waits for them whole, from when it starts waiting (a new
  // connection, or the end of the previous answer on a kept-alive one; then: 408, closed).
  size_t head_bytes = 16 * 1024;
  int head_ms = 10000;
  // A request's body (more: 413), and how long reading it and writing the answer may take.
  size_t body_bytes = 64 * 1024;
  int body_ms = 10000;
  // Threads answering requests whose head has come, and how many of them may wait in a
  // long poll of api/state at once: the others answer at once and tell the page to ask
  // again in a second, so that polls never take every worker.
  int workers = 16;
  int waiting_polls = 8;
  int long_poll_ms = 10000;
  // Connections held at once; past it, the one that has waited longest for its head goes.
  size_t connections = 256;
  // Requests answered on one connection before it is closed.
  unsigned requests_per_connection = 100;
};

struct ServerConfig {
  std::string token;  // random_token()
  int port = 0;       // 0: any free port
  Limits limits;
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
  // Serves until stop() (from another thread); returns once every connection is closed.
  void run();
  // Closes the listening socket and every connection, and cancels the session (a long
  // poll waiting on it answers at once, a question waiting for the page throws Cancelled):
  // run() then returns within moments, whatever clients hold open.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cw::ui
