#include "ui/server.h"

#include <doctest/doctest.h>
#include <httplib.h>

#include <thread>

using namespace cw::ui;

// A server on any free loopback port, serving until the test ends.
struct Running {
  Session session;
  Server server;
  std::thread thread;
  explicit Running(ServerConfig config) : server(session, std::move(config)) {
    std::string why;
    REQUIRE(server.bind(&why));
    thread = std::thread([this] { server.run(); });
  }
  ~Running() {
    session.cancel();
    server.stop();
    thread.join();
  }
};

TEST_CASE("Server: only the token's paths, asked for by loopback's name, are served") {
  ServerConfig config;
  config.token = random_token();
  Running r(config);
  const int port = r.server.port();
  CHECK(r.server.url() == "http://127.0.0.1:" + std::to_string(port) + "/" + config.token + "/");
  httplib::Client client("127.0.0.1", port);
  const std::string base = "/" + config.token;
  auto status = [&](const std::string& path, const httplib::Headers& headers = {}) {
    auto res = client.Get(path.c_str(), headers);
    return res ? res->status : -1;
  };
  CHECK(status(base + "/") == 200);
  CHECK(status(base + "/app.js") == 200);
  CHECK(status(base + "/api/state") == 200);
  CHECK(status(base) == 302);
  CHECK(status("/") == 403);
  CHECK(status("/index.html") == 403);
  CHECK(status("/" + config.token.substr(0, 31) + "/") == 403);
  CHECK(status("/" + config.token + "0/") == 403);
  CHECK(status(base + "/", {{"Host", "attacker.example:" + std::to_string(port)}}) == 403);
  CHECK(status(base + "/", {{"Host", "localhost:" + std::to_string(port)}}) == 200);

  auto page = client.Get((base + "/").c_str());
  REQUIRE(page);
  CHECK(page->get_header_value("Content-Security-Policy").find("script-src 'self'") !=
        std::string::npos);
  CHECK(page->get_header_value("Cache-Control") == "no-store");
}

TEST_CASE("Server: an answer goes to the question asked, and quit is called") {
  ServerConfig config;
  config.token = random_token();
  bool quit = false;
  config.quit = [&] { quit = true; };
  Running r(config);
  httplib::Client client("127.0.0.1", r.server.port());
  const std::string base = "/" + config.token;
  uint32_t chosen = 99;
  std::thread worker([&] {
    chosen = r.session.ask({{"text", "which?"}, {"options", {{{"label", "a"}}, {{"label", "b"}}}}});
  });
  uint64_t id = 0;
  for (int i = 0; i < 100 && id == 0; ++i) {
    auto res = client.Get((base + "/api/state?since=0").c_str());
    REQUIRE(res);
    auto j = nlohmann::json::parse(res->body);
    if (j.value("phase", "") == "question") id = j["question"]["id"];
  }
  REQUIRE(id != 0);
  auto bad =
      client.Post((base + "/api/answer").c_str(), R"({"id": 1, "option": 7})", "application/json");
  REQUIRE(bad);
  CHECK(bad->status == 409);
  auto good = client.Post((base + "/api/answer").c_str(),
                          nlohmann::json{{"id", id}, {"option", 1}}.dump(), "application/json");
  REQUIRE(good);
  CHECK(good->status == 200);
  worker.join();
  CHECK(chosen == 1);
  auto nothing = client.Get((base + "/api/pack.cw").c_str());
  REQUIRE(nothing);
  CHECK(nothing->status == 409);  // no pack_text: no diagnosis done
  auto bye = client.Post((base + "/api/quit").c_str(), "", "application/json");
  REQUIRE(bye);
  CHECK(quit);
}
