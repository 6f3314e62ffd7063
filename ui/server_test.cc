#include "ui/server.h"

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>
#include <vector>

using namespace cw::ui;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// This process's resident memory (the server runs in it), in bytes.
size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// A client at the socket level: what a browser would never send, slowly or not at all.
struct Raw {
  int fd = -1;
  explicit Raw(int port) {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  }
  ~Raw() { close(fd); }
  Raw(const Raw&) = delete;
  // False once the server has closed the connection (or `ms` passed with no room to write).
  bool send_all(std::string_view data, int ms = 5000) {
    while (!data.empty()) {
      pollfd p{fd, POLLOUT, 0};
      if (poll(&p, 1, ms) <= 0) return false;
      const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }
  // What came within `ms`, until the server closed the connection or, with `head_only`, a
  // response's head came whole. `*closed`: whether it closed.
  std::string receive(int ms, bool head_only = false, bool* closed = nullptr) {
    std::string got;
    const auto deadline = Clock::now() + std::chrono::milliseconds(ms);
    if (closed) *closed = false;
    while (!(head_only && got.find("\r\n\r\n") != std::string::npos)) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      pollfd p{fd, POLLIN, 0};
      if (left <= 0 || poll(&p, 1, static_cast<int>(left)) <= 0) break;
      char buf[4096];
      const ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n <= 0) {
        if (closed) *closed = true;
        break;
      }
      got.append(buf, static_cast<size_t>(n));
    }
    return got;
  }
  // Whether the server closes the connection within `ms` (what it sends before is skipped).
  bool closed_within(int ms) {
    bool closed = false;
    receive(ms, false, &closed);
    return closed;
  }
};

std::string status_line(const std::string& response) {
  return response.substr(0, response.find("\r\n"));
}

}  // namespace

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
  std::atomic<bool> quit = false;
  config.quit = [&] { quit = true; };
  Running r(config);
  httplib::Client client("127.0.0.1", r.server.port());
  const std::string base = "/" + config.token;
  uint32_t chosen = 99;
  std::thread worker([&] {
    try {
      chosen =
          r.session.ask({{"text", "which?"}, {"options", {{{"label", "a"}}, {{"label", "b"}}}}});
    } catch (const Cancelled&) {
    }
  });
  // As the page does: each poll waits for a version past the one seen (a loaded machine
  // may take a while to start the question's thread).
  uint64_t id = 0;
  uint64_t seen = 0;
  for (int i = 0; i < 20 && id == 0; ++i) {
    auto res = client.Get((base + "/api/state?since=" + std::to_string(seen)).c_str());
    REQUIRE(res);
    auto j = nlohmann::json::parse(res->body);
    seen = j["version"];
    if (j.value("phase", "") == "question") id = j["question"]["id"];
  }
  if (id == 0) {  // the thread asking must end before the test does
    r.session.cancel();
    worker.join();
  }
  REQUIRE(id != 0);
  auto bad =
      client.Post((base + "/api/answer").c_str(), R"({"id": 1, "option": 7})", "application/json");
  REQUIRE(bad);
  CHECK(bad->status == 409);
  // Numbers are taken whole or refused: 2^32 + 1 is not option 1, nor is -1, 1.0 or "1".
  for (const std::string option : {"4294967297", "18446744073709551617", "-1", "1.0", "\"1\""}) {
    auto huge = client.Post((base + "/api/answer").c_str(),
                            "{\"id\": " + std::to_string(id) + ", \"option\": " + option + "}",
                            "application/json");
    REQUIRE(huge);
    CHECK_MESSAGE(huge->status == 400, option);
    CHECK(nlohmann::json::parse(huge->body)["message"].get<std::string>().starts_with("option:"));
  }
  auto no_id = client.Post((base + "/api/answer").c_str(), R"({"option": 1})", "application/json");
  REQUIRE(no_id);
  CHECK(no_id->status == 400);
  auto since = client.Get((base + "/api/state?since=1x").c_str());
  REQUIRE(since);
  CHECK(since->status == 400);
  CHECK(r.session.snapshot()["phase"] == "question");  // none of them answered it
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
  CHECK(bye->status == 200);
  // Called once the answer has gone out.
  for (int i = 0; i < 200 && !quit; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(quit);
}

TEST_CASE("Server: a request without the token is refused before its body is read") {
  ServerConfig config;
  config.token = random_token();
  Running r(config);
  const int port = r.server.port();
  const size_t before = resident_bytes();
  Raw raw(port);
  // It claims a gigabyte and sends a little: the 403 comes without the rest.
  REQUIRE(raw.send_all("POST /api/answer HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                       "\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n" +
                       std::string(1000, 'x')));
  const auto start = Clock::now();
  const std::string reply = raw.receive(5000, true);
  CHECK(status_line(reply) == "HTTP/1.1 403 Forbidden");
  CHECK(seconds_since(start) < 3);
  // The server then closes the connection: what the client goes on sending is not read
  // (nor kept, as the line of a next request would be).
  const std::string chunk(1 << 16, 'x');
  size_t sent = 0;
  while (sent < (size_t{256} << 20) && raw.send_all(chunk, 2000)) sent += chunk.size();
  CHECK_MESSAGE(sent < (size_t{16} << 20), sent);
  CHECK(resident_bytes() < before + (size_t{32} << 20));

  // A client that asks first (Expect: 100-continue) is refused, not told to send.
  Raw asking(port);
  REQUIRE(asking.send_all("POST /api/answer HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                          "\r\nContent-Length: 1000000000\r\nExpect: 100-continue\r\n\r\n"));
  CHECK(status_line(asking.receive(5000, true)) == "HTTP/1.1 403 Forbidden");
  CHECK(asking.closed_within(3000));
}

TEST_CASE("Server: heads and bodies past their limits are refused before they are read") {
  ServerConfig config;
  config.token = random_token();
  Running r(config);
  const int port = r.server.port();
  const std::string host = "Host: 127.0.0.1:" + std::to_string(port) + "\r\n";
  {
    // Short header lines, many of them: the head as a whole is bounded.
    Raw raw(port);
    std::string head = "GET /" + config.token + "/api/state HTTP/1.1\r\n" + host;
    for (int i = 0; head.size() < 20000; ++i)
      head += "X-Filler-" + std::to_string(i) + ": " + std::string(100, 'a') + "\r\n";
    raw.send_all(head + "\r\n");
    CHECK(status_line(raw.receive(5000, true)) == "HTTP/1.1 431 Request Header Fields Too Large");
    CHECK(raw.closed_within(3000));
  }
  {
    // With the token, a body past the limit is refused from its Content-Length.
    Raw raw(port);
    REQUIRE(raw.send_all("POST /" + config.token + "/api/answer HTTP/1.1\r\n" + host +
                         "Content-Length: 10000000\r\n\r\n{"));
    const auto start = Clock::now();
    CHECK(status_line(raw.receive(5000, true)) == "HTTP/1.1 413 Payload Too Large");
    CHECK(seconds_since(start) < 3);
    CHECK(raw.closed_within(3000));
  }
}

TEST_CASE("Server: clients that send their head slowly hold no worker, and are cut off") {
  ServerConfig config;
  config.token = random_token();
  config.limits.head_ms = 2000;
  Running r(config);
  const int port = r.server.port();
  // More of them than a pool of workers would have: each sends a header line every 300 ms,
  // which no per-read timeout ever ends.
  std::vector<std::unique_ptr<Raw>> slow;
  std::vector<double> cut_after(32, -1);
  for (int i = 0; i < 32; ++i) {
    slow.push_back(std::make_unique<Raw>(port));
    slow.back()->send_all("GET /" + config.token + "/ HTTP/1.1\r\n");
  }
  const auto start = Clock::now();
  double normal = -1;
  int normal_status = -1;
  std::thread asking([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(20);
    const auto asked = Clock::now();
    auto res = client.Get(("/" + config.token + "/app.js").c_str());
    normal = seconds_since(asked);
    normal_status = res ? res->status : -1;
  });
  for (int round = 0; seconds_since(start) < 6; ++round) {
    for (size_t i = 0; i < slow.size(); ++i) {
      if (cut_after[i] >= 0) continue;
      pollfd p{slow[i]->fd, POLLIN, 0};
      if (poll(&p, 1, 0) > 0) {  // a 408 or the end: either way the server let it go
        cut_after[i] = seconds_since(start);
        continue;
      }
      slow[i]->send_all("X-Slow-" + std::to_string(round) + ": 1\r\n", 100);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  asking.join();
  CHECK(normal_status == 200);
  CHECK_MESSAGE(normal < 3, normal);
  for (double t : cut_after) {
    CHECK(t >= 0);  // cut off while still sending
    CHECK(t < 4.5);
  }
}

TEST_CASE("Server: open pages' long polls leave workers for the other requests") {
  ServerConfig config;
  config.token = random_token();
  config.limits.long_poll_ms = 8000;
  Running r(config);
  const int port = r.server.port();
  const uint64_t version = r.session.snapshot()["version"];
  const std::string poll = "GET /" + config.token + "/api/state?since=" + std::to_string(version) +
                           " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\n\r\n";
  std::vector<std::unique_ptr<Raw>> pages;
  for (int i = 0; i < 20; ++i) {
    pages.push_back(std::make_unique<Raw>(port));
    REQUIRE(pages.back()->send_all(poll));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(20);
  const auto asked = Clock::now();
  auto res = client.Get(("/" + config.token + "/app.js").c_str());
  const double took = seconds_since(asked);
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK_MESSAGE(took < 2, took);
  // A change ends the waiting polls; the ones past the limit were answered at once, told
  // to ask again later.
  r.session.set("changed", true);
  int waited = 0, told_to_wait = 0;
  for (auto& page : pages) {
    const std::string reply = page->receive(5000, true);
    REQUIRE(status_line(reply) == "HTTP/1.1 200 OK");
    const size_t length = std::stoul(reply.substr(reply.find("Content-Length: ") + 16));
    std::string body = reply.substr(reply.find("\r\n\r\n") + 4);
    while (body.size() < length) {
      const std::string more = page->receive(5000);
      REQUIRE(!more.empty());
      body += more;
    }
    const auto state = nlohmann::json::parse(body);
    if (state.contains("poll_again_ms"))
      ++told_to_wait;
    else
      ++waited;
  }
  CHECK(waited == config.limits.waiting_polls);
  CHECK(told_to_wait == 20 - config.limits.waiting_polls);
}

TEST_CASE("Server: stop ends every connection at once, whatever the clients hold") {
  ServerConfig config;
  config.token = random_token();
  Session session;
  Server server(session, config);
  std::string why;
  REQUIRE(server.bind(&why));
  std::thread serving([&] { server.run(); });
  const int port = server.port();
  const std::string host = "Host: 127.0.0.1:" + std::to_string(port) + "\r\n";
  const std::string base = "/" + config.token;
  Raw idle(port), partial(port), body(port), polling(port);
  // A kept-alive connection after an answer; a head half sent; a body half sent; a poll.
  REQUIRE(idle.send_all("GET " + base + "/app.js HTTP/1.1\r\n" + host + "\r\n"));
  CHECK(status_line(idle.receive(5000, true)) == "HTTP/1.1 200 OK");
  REQUIRE(partial.send_all("GET " + base + "/ HTTP/1.1\r\n" + host));
  REQUIRE(body.send_all("POST " + base + "/api/answer HTTP/1.1\r\n" + host +
                        "Content-Length: 100\r\n\r\n{"));
  const uint64_t version = session.snapshot()["version"];
  REQUIRE(polling.send_all("GET " + base + "/api/state?since=" + std::to_string(version) +
                           " HTTP/1.1\r\n" + host + "\r\n"));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto stopped = Clock::now();
  server.stop();
  serving.join();
  CHECK_MESSAGE(seconds_since(stopped) < 2, seconds_since(stopped));
  CHECK(idle.closed_within(1000));
  CHECK(partial.closed_within(1000));
  CHECK(body.closed_within(1000));
  CHECK(polling.closed_within(1000));
}

TEST_CASE("Server: a stop that comes before run still ends it") {
  ServerConfig config;
  config.token = random_token();
  Session session;
  Server server(session, config);
  std::string why;
  REQUIRE(server.bind(&why));
  server.stop();
  std::atomic<bool> ended = false;
  std::thread serving([&] {
    server.run();
    ended = true;
  });
  const auto start = Clock::now();
  while (!ended && seconds_since(start) < 2)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(ended);
  if (!ended) server.stop();  // a stop while serving, so that the test ends either way
  serving.join();
}

TEST_CASE("Server: Quit is answered before it stops the server") {
  for (int i = 0; i < 5; ++i) {
    ServerConfig config;
    config.token = random_token();
    Server* server = nullptr;
    config.quit = [&] { server->stop(); };  // as causeway ui does, at once
    Running r(config);
    server = &r.server;
    httplib::Client client("127.0.0.1", r.server.port());
    auto bye = client.Post(("/" + config.token + "/api/quit").c_str(), "", "application/json");
    REQUIRE(bye);
    CHECK(bye->status == 200);
  }
}
