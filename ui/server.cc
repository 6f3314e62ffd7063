#include "ui/server.h"

#include <fmt/format.h>
#include <httplib.h>
#include <sys/random.h>

#include <cerrno>
#include <system_error>

#include "ui/assets.h"

namespace cw::ui {

std::string random_token() {
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "getrandom");
    }
    got += static_cast<size_t>(n);
  }
  std::string hex;
  for (unsigned char b : bytes) hex += fmt::format("{:02x}", b);
  return hex;
}

bool token_matches(std::string_view given, std::string_view token) {
  unsigned char diff = given.size() == token.size() ? 0 : 1;
  for (size_t i = 0; i < token.size(); ++i)
    diff |= static_cast<unsigned char>(token[i] ^ (i < given.size() ? given[i] : 0));
  return diff == 0;
}

namespace {

constexpr const char* kLoopback = "127.0.0.1";
// How long a page's request for a newer state waits before it is answered with the same.
constexpr int kLongPollMs = 10000;

std::string json_body(const nlohmann::json& j) {
  // Trace names are bytes: what is not UTF-8 shows as U+FFFD instead of failing the reply.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string content_type(std::string_view path) {
  auto ends = [&](std::string_view ext) {
    return path.size() >= ext.size() && path.substr(path.size() - ext.size()) == ext;
  };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  if (ends(".png")) return "image/png";
  return "application/octet-stream";
}

// The page runs only its own files and talks only to this server; the heat map (the
// latency page, whose script is inline) runs sandboxed, in an origin of its own.
constexpr const char* kPagePolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; frame-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
    "form-action 'none'";
constexpr const char* kLatencyPolicy =
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data:; frame-ancestors 'self'; sandbox allow-scripts";

}  // namespace

struct Server::Impl {
  Session& session;
  ServerConfig config;
  httplib::Server http;
  int port = -1;

  Impl(Session& s, ServerConfig c) : session(s), config(std::move(c)) {}

  // Only /TOKEN and /TOKEN/…, asked for by the name this server is reached at (a page
  // elsewhere that rebinds its own name to 127.0.0.1 still lacks the token).
  bool allowed(const httplib::Request& req) const {
    const std::string& path = req.path;
    if (path.size() < 2 || path[0] != '/') return false;
    size_t end = path.find('/', 1);
    std::string_view given =
        std::string_view(path).substr(1, end == std::string::npos ? std::string::npos : end - 1);
    if (!token_matches(given, config.token)) return false;
    const std::string host = req.get_header_value("Host");
    return host == fmt::format("127.0.0.1:{}", port) || host == fmt::format("localhost:{}", port);
  }

  void routes() {
    const std::string base = "/" + config.token;
    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (allowed(req)) return httplib::Server::HandlerResponse::Unhandled;
      res.status = 403;
      res.set_content("403 forbidden: this page needs the address causeway ui printed\n",
                      "text/plain; charset=utf-8");
      return httplib::Server::HandlerResponse::Handled;
    });
    http.set_post_routing_handler([](const httplib::Request&, httplib::Response& res) {
      res.set_header("Cache-Control", "no-store");
      res.set_header("X-Content-Type-Options", "nosniff");
      res.set_header("Referrer-Policy", "no-referrer");
      if (!res.has_header("Content-Security-Policy"))
        res.set_header("Content-Security-Policy", kPagePolicy);
    });
    http.Get(base, [base](const httplib::Request&, httplib::Response& res) {
      res.set_redirect(base + "/");
    });
    for (const Asset& a : assets()) {
      const std::string body(a.body);
      const std::string type = content_type(a.path);
      auto serve = [body, type](const httplib::Request&, httplib::Response& res) {
        res.set_content(body, type);
      };
      http.Get(base + "/" + std::string(a.path), serve);
      if (a.path == "index.html") http.Get(base + "/", serve);
    }
    http.Get(base + "/api/state", [this](const httplib::Request& req, httplib::Response& res) {
      uint64_t since = 0;
      if (req.has_param("since"))
        since = std::strtoull(req.get_param_value("since").c_str(), nullptr, 10);
      res.set_content(json_body(session.wait_snapshot(since, kLongPollMs)), "application/json");
    });
    http.Post(base + "/api/answer", [this](const httplib::Request& req, httplib::Response& res) {
      auto body = nlohmann::json::parse(req.body, nullptr, false);
      std::string why = "expected {\"id\": QUESTION, \"option\": INDEX}";
      if (body.is_object() && body["id"].is_number_unsigned() &&
          body["option"].is_number_unsigned() &&
          session.answer(body["id"].get<uint64_t>(), body["option"].get<uint32_t>(), &why)) {
        res.set_content(json_body({{"ok", true}}), "application/json");
        return;
      }
      res.status = 409;
      res.set_content(json_body({{"ok", false}, {"message", why}}), "application/json");
    });
    http.Post(base + "/api/save", [this](const httplib::Request&, httplib::Response& res) {
      nlohmann::json result =
          config.save ? config.save()
                      : nlohmann::json{{"ok", false},
                                       {"message", "no --save-answers folder: download the pack"}};
      if (!result.value("ok", false)) res.status = 409;
      res.set_content(json_body(result), "application/json");
    });
    http.Get(base + "/api/pack.cw", [this](const httplib::Request&, httplib::Response& res) {
      auto text = config.pack_text ? config.pack_text() : std::nullopt;
      if (!text) {
        res.status = 409;
        res.set_content("the diagnosis is not done: no answers to save yet\n",
                        "text/plain; charset=utf-8");
        return;
      }
      res.set_header("Content-Disposition", "attachment; filename=\"pack.cw\"");
      res.set_content(*text, "text/plain; charset=utf-8");
    });
    http.Get(base + "/latency.html", [this](const httplib::Request&, httplib::Response& res) {
      auto page = config.latency_page ? config.latency_page() : std::nullopt;
      if (!page) {
        res.status = 404;
        res.set_content("this trace has no latency data (no stacks)\n",
                        "text/plain; charset=utf-8");
        return;
      }
      res.set_header("Content-Security-Policy", kLatencyPolicy);
      res.set_content(*page, "text/html; charset=utf-8");
    });
    http.Post(base + "/api/quit", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(json_body({{"ok", true}}), "application/json");
      if (config.quit) config.quit();
    });
  }
};

Server::Server(Session& session, ServerConfig config)
    : impl_(std::make_unique<Impl>(session, std::move(config))) {
  impl_->routes();
}

Server::~Server() = default;

bool Server::bind(std::string* why) {
  if (impl_->config.port == 0)
    impl_->port = impl_->http.bind_to_any_port(kLoopback);
  else
    impl_->port = impl_->http.bind_to_port(kLoopback, impl_->config.port) ? impl_->config.port : -1;
  if (impl_->port <= 0) {
    *why = impl_->config.port == 0
               ? "cannot listen on 127.0.0.1"
               : fmt::format("cannot listen on 127.0.0.1:{} (in use?)", impl_->config.port);
    return false;
  }
  return true;
}

int Server::port() const {
  return impl_->port;
}

std::string Server::url() const {
  return fmt::format("http://127.0.0.1:{}/{}/", impl_->port, impl_->config.token);
}

void Server::run() {
  impl_->http.listen_after_bind();
}

void Server::stop() {
  impl_->http.stop();
}

}  // namespace cw::ui
