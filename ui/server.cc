#include "ui/server.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>
#include <tuple>
#include <vector>

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

using Clock = std::chrono::steady_clock;

constexpr const char* kLoopback = "127.0.0.1";
// A page told to wait rather than poll (every poll slot taken) asks again after this.
constexpr int kPollAgainMs = 1000;

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

int ms_until(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

// Ends a connection after its last answer: the write side first, so that the answer is
// not lost to a reset when the client's unread bytes are discarded, then what already came.
void close_gently(int fd) {
  ::shutdown(fd, SHUT_WR);
  char sink[4096];
  for (int i = 0; i < 16 && ::recv(fd, sink, sizeof sink, MSG_DONTWAIT) > 0; ++i) {
  }
  ::close(fd);
}

// An answer the server gives without parsing the request (its head too big, or too slow).
void send_plain(int fd, int status, std::string_view reason, std::string_view text) {
  const std::string reply = fmt::format(
      "HTTP/1.1 {} {}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n"
      "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nContent-Length: {}\r\n\r\n{}",
      status, reason, text.size(), text);
  (void)!::send(fd, reply.data(), reply.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
}

std::string address_text(const sockaddr_storage& a, int* port) {
  char text[INET6_ADDRSTRLEN] = "";
  if (a.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(a);
    inet_ntop(AF_INET, &in.sin_addr, text, sizeof text);
    *port = ntohs(in.sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(a);
    inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof text);
    *port = ntohs(in6.sin6_port);
  }
  return text;
}

// A whole decimal number, nothing else (no sign, space or exponent), that fits.
bool parse_u64(std::string_view text, uint64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

// One client connection: the bytes read from it that the parser has not taken yet.
struct Conn {
  int fd = -1;
  std::string buf;
  size_t pos = 0;       // buf[pos…] not yet taken
  size_t scanned = 0;   // buf[pos…scanned] holds no blank line
  size_t head_end = 0;  // once the head is whole: where it ends (after its blank line)
  Clock::time_point waiting_since;
  Clock::time_point deadline;  // for the head
  unsigned served = 0;
  // Set while a request is answered.
  bool has_body = false;
  bool close_after = false;
  std::function<void()> after_answer;  // run once the answer has gone out
};

// The connection a worker thread is answering (for the routing hooks, which see only the
// request and the answer).
thread_local Conn* answering = nullptr;

// httplib's Stream over a connection whose head is already read: the head from the
// buffer, then at most `body_bytes` more from the socket, each wait bounded by a deadline
// and cut short by stop() (which shuts the socket down).
class ConnStream : public httplib::Stream {
 public:
  ConnStream(Conn& c, const Limits& limits, const std::atomic<bool>& stopping)
      : c_(c),
        limits_(limits),
        stopping_(stopping),
        limit_(c.head_end - c.pos + limits.body_bytes),
        read_deadline_(Clock::now() + std::chrono::milliseconds(limits.body_ms)) {}

  bool is_readable() const override {
    return c_.pos < c_.buf.size() || wait(POLLIN, read_deadline_);
  }
  bool is_writable() const override { return !stopping_; }

  ssize_t read(char* ptr, size_t size) override {
    if (taken_ >= limit_) return -1;
    size = std::min(size, limit_ - taken_);
    if (c_.pos < c_.buf.size()) {
      const size_t n = std::min(size, c_.buf.size() - c_.pos);
      std::memcpy(ptr, c_.buf.data() + c_.pos, n);
      c_.pos += n;
      taken_ += n;
      return static_cast<ssize_t>(n);
    }
    for (;;) {
      const ssize_t n = ::recv(c_.fd, ptr, size, MSG_DONTWAIT);
      if (n >= 0) {
        taken_ += static_cast<size_t>(n);
        return n;
      }
      if (errno == EINTR) continue;
      if ((errno != EAGAIN && errno != EWOULDBLOCK) || !wait(POLLIN, read_deadline_)) return -1;
    }
  }

  // All of it or nothing: httplib writes a response's head in one call and does not retry.
  ssize_t write(const char* ptr, size_t size) override {
    const auto deadline = Clock::now() + std::chrono::milliseconds(limits_.body_ms);
    size_t done = 0;
    while (done < size) {
      const ssize_t n = ::send(c_.fd, ptr + done, size - done, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n >= 0) {
        done += static_cast<size_t>(n);
        continue;
      }
      if (errno == EINTR) continue;
      if ((errno != EAGAIN && errno != EWOULDBLOCK) || !wait(POLLOUT, deadline)) return -1;
    }
    return static_cast<ssize_t>(size);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    port = 0;
    ip = getpeername(c_.fd, reinterpret_cast<sockaddr*>(&a), &len) == 0 ? address_text(a, &port)
                                                                        : "";
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    port = 0;
    ip = getsockname(c_.fd, reinterpret_cast<sockaddr*>(&a), &len) == 0 ? address_text(a, &port)
                                                                        : "";
  }
  socket_t socket() const override { return c_.fd; }

 private:
  bool wait(short events, Clock::time_point deadline) const {
    for (;;) {
      if (stopping_) return false;
      const int ms = ms_until(deadline);
      if (ms == 0) return false;
      pollfd p{c_.fd, events, 0};
      const int r = ::poll(&p, 1, ms);
      if (r > 0) return !stopping_;
      if (r < 0 && errno != EINTR) return false;
    }
  }

  Conn& c_;
  const Limits& limits_;
  const std::atomic<bool>& stopping_;
  const size_t limit_;
  size_t taken_ = 0;
  const Clock::time_point read_deadline_;
};

// httplib's listener hands each accepted socket to process_and_close_socket, on the task
// queue's threads. Here that queue runs it at once on the listener's thread, and the
// override passes the socket to the Front, which reads heads and answers with its own
// threads (httplib's parser and routing, through process_request).
class InlineQueue : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {}
};

class Front;

class Http : public httplib::Server {
 public:
  explicit Http(Front& front) : front_(front) {
    new_task_queue = [] { return new InlineQueue; };
  }
  bool answer(httplib::Stream& strm, bool close_connection, bool& connection_closed,
              const std::function<void(httplib::Request&)>& setup) {
    return process_request(strm, close_connection, connection_closed, setup);
  }
  // httplib listens with a backlog of 5: a burst of connections (a page's files, or
  // clients that connect and wait) would have new ones' SYNs dropped and retried a second
  // later. Listening again on the socket raises it.
  void widen_backlog() { ::listen(svr_sock_, 128); }
  // httplib's stop() does nothing before listen has begun; this closes the socket anyway,
  // so that a stop() that comes first still ends run().
  void close_listener() {
    const socket_t sock = svr_sock_.exchange(INVALID_SOCKET);
    if (sock != INVALID_SOCKET) {
      ::shutdown(sock, SHUT_RDWR);
      ::close(sock);
    }
  }

 protected:
  bool process_and_close_socket(socket_t sock) override;

 private:
  Front& front_;
};

// The connections: one thread waits for their heads (all of them at once, with poll), the
// workers answer the requests whose head has come, then give kept-alive connections back.
class Front {
 public:
  Front(Http& http, const Limits& limits) : http_(http), limits_(limits) {
    wake_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  }
  ~Front() {
    if (wake_ >= 0) ::close(wake_);
  }

  void start() {
    heads_ = std::thread([this] { read_heads(); });
    for (int i = 0; i < std::max(1, limits_.workers); ++i)
      workers_.emplace_back([this] { answer_requests(); });
  }

  // Wakes everything and ends every connection; again is harmless.
  void stop() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      for (int fd : answering_) ::shutdown(fd, SHUT_RDWR);
    }
    ready_cv_.notify_all();
    wake();
  }

  void join() {
    if (heads_.joinable()) heads_.join();
    for (auto& w : workers_) w.join();
    workers_.clear();
    std::lock_guard lock(mu_);
    for (auto& c : incoming_) ::close(c->fd);
    for (auto& c : ready_) ::close(c->fd);
    incoming_.clear();
    ready_.clear();
  }

  void adopt(int fd) {
    auto c = std::make_unique<Conn>();
    c->fd = fd;
    c->waiting_since = Clock::now();
    c->deadline = c->waiting_since + std::chrono::milliseconds(limits_.head_ms);
    {
      std::lock_guard lock(mu_);
      if (stopping_) {
        ::close(fd);
        return;
      }
      incoming_.push_back(std::move(c));
    }
    wake();
  }

  bool stopping() const { return stopping_; }

 private:
  void wake() {
    const uint64_t one = 1;
    (void)!::write(wake_, &one, sizeof one);
  }

  // Whether the head has come whole; finds where it ends.
  static bool head_complete(Conn& c) {
    const size_t from = std::max(c.pos, c.scanned >= 3 ? c.scanned - 3 : 0);
    const size_t at = c.buf.find("\r\n\r\n", from);
    if (at == std::string::npos) {
      c.scanned = c.buf.size();
      return false;
    }
    c.head_end = at + 4;
    return true;
  }

  // Hands a connection whose head is whole to the workers, or answers 431 when too big.
  void head_done(std::unique_ptr<Conn> c) {
    if (c->head_end - c->pos > limits_.head_bytes) {
      too_big(*c);
      return;
    }
    {
      std::lock_guard lock(mu_);
      ready_.push_back(std::move(c));
    }
    ready_cv_.notify_one();
  }

  void too_big(Conn& c) {
    send_plain(c.fd, 431, "Request Header Fields Too Large",
               fmt::format("431: the request's line and headers take more than {} bytes\n",
                           limits_.head_bytes));
    close_gently(c.fd);
  }

  void read_heads() {
    std::vector<std::unique_ptr<Conn>> waiting;
    std::vector<pollfd> fds;
    for (;;) {
      size_t busy = 0;
      {
        std::lock_guard lock(mu_);
        if (stopping_) break;
        for (auto& c : incoming_) waiting.push_back(std::move(c));
        incoming_.clear();
        busy = ready_.size() + answering_.size();
      }
      // Pipelined bytes may already hold the next head.
      for (auto& c : waiting)
        if (c->pos < c->buf.size() && head_complete(*c)) head_done(std::move(c));
      std::erase(waiting, nullptr);
      // Past the cap, the connections that have waited longest for a head go first: a
      // crowd of silent clients cannot keep a new one out.
      if (waiting.size() + busy > limits_.connections) {
        std::sort(waiting.begin(), waiting.end(),
                  [](const auto& a, const auto& b) { return a->waiting_since < b->waiting_since; });
        size_t excess = waiting.size() + busy - limits_.connections;
        for (size_t i = 0; i < excess && i < waiting.size(); ++i) {
          close_gently(waiting[i]->fd);
          waiting[i].reset();
        }
        std::erase(waiting, nullptr);
      }

      fds.assign(1, pollfd{wake_, POLLIN, 0});
      Clock::time_point next = Clock::time_point::max();
      for (auto& c : waiting) {
        fds.push_back(pollfd{c->fd, POLLIN, 0});
        next = std::min(next, c->deadline);
      }
      // (A millisecond more: poll rounds down, and a deadline not yet passed would spin.)
      int timeout = next == Clock::time_point::max() ? -1 : ms_until(next) + 1;
      if (wake_ < 0 && (timeout < 0 || timeout > 200)) timeout = 200;  // no eventfd: look often
      if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) break;
      if (fds[0].revents) {
        uint64_t n;
        (void)!::read(wake_, &n, sizeof n);
      }
      const auto now = Clock::now();
      for (size_t i = 0; i < waiting.size(); ++i) {
        auto& c = waiting[i];
        if (fds[i + 1].revents) {
          char chunk[4096];
          const size_t held = c->buf.size() - c->pos;
          const size_t room = held <= limits_.head_bytes ? limits_.head_bytes + 4 - held : 1;
          const ssize_t n = ::recv(c->fd, chunk, std::min(sizeof chunk, room), MSG_DONTWAIT);
          if (n > 0) {
            c->buf.append(chunk, static_cast<size_t>(n));
            if (head_complete(*c)) {
              head_done(std::move(c));
              continue;
            }
            if (c->buf.size() - c->pos > limits_.head_bytes) {
              too_big(*c);
              c.reset();
              continue;
            }
          } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            ::close(c->fd);
            c.reset();
            continue;
          }
        }
        if (now >= c->deadline) {
          // A client that began a request and did not finish it in time is told why; an
          // idle kept-alive one is only closed.
          if (c->pos < c->buf.size())
            send_plain(c->fd, 408, "Request Timeout",
                       fmt::format("408: the request's line and headers did not come whole "
                                   "within {} ms\n",
                                   limits_.head_ms));
          close_gently(c->fd);
          c.reset();
        }
      }
      std::erase(waiting, nullptr);
    }
    for (auto& c : waiting) ::close(c->fd);
  }

  void answer_requests() {
    for (;;) {
      std::unique_ptr<Conn> c;
      {
        std::unique_lock lock(mu_);
        ready_cv_.wait(lock, [&] { return stopping_ || !ready_.empty(); });
        if (stopping_) return;
        c = std::move(ready_.front());
        ready_.pop_front();
        answering_.insert(c->fd);
      }
      const bool keep = answer(*c);
      const std::function<void()> after = std::move(c->after_answer);
      c->after_answer = nullptr;
      std::unique_lock lock(mu_);
      answering_.erase(c->fd);
      if (keep && !stopping_) {
        c->buf.erase(0, c->pos);
        c->pos = c->scanned = c->head_end = 0;
        c->waiting_since = Clock::now();
        c->deadline = c->waiting_since + std::chrono::milliseconds(limits_.head_ms);
        incoming_.push_back(std::move(c));
        lock.unlock();
        wake();
      } else {
        lock.unlock();
        close_gently(c->fd);
      }
      if (after) after();
    }
  }

  // Answers the request whose head has come; whether the connection may serve another.
  bool answer(Conn& c) {
    c.has_body = c.close_after = false;
    const bool last = ++c.served >= limits_.requests_per_connection || stopping_;
    bool closed = false;
    ConnStream strm(c, limits_, stopping_);
    answering = &c;
    const bool ok = http_.answer(strm, last, closed, [&c](httplib::Request& req) {
      c.has_body =
          req.has_header("Transfer-Encoding") ||
          (req.has_header("Content-Length") && req.get_header_value("Content-Length") != "0");
    });
    answering = nullptr;
    // A connection whose request had a body is not kept: a refused request's body is never
    // read, and what follows it on the connection is not a request.
    return ok && !last && !closed && !c.has_body && !c.close_after;
  }

  Http& http_;
  const Limits& limits_;
  int wake_ = -1;
  std::thread heads_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable ready_cv_;
  std::atomic<bool> stopping_ = false;
  std::vector<std::unique_ptr<Conn>> incoming_;  // for the head reader
  std::deque<std::unique_ptr<Conn>> ready_;      // for the workers
  std::set<int> answering_;                      // sockets the workers are answering on
};

bool Http::process_and_close_socket(socket_t sock) {
  front_.adopt(sock);
  return true;
}

}  // namespace

struct Server::Impl {
  Session& session;
  ServerConfig config;
  Front front;
  Http http;
  int port = -1;
  std::atomic<int> waiting_polls = 0;

  Impl(Session& s, ServerConfig c)
      : session(s), config(std::move(c)), front(http, config.limits), http(front) {
    http.set_payload_max_length(config.limits.body_bytes);
    http.set_keep_alive_max_count(config.limits.requests_per_connection);
    http.set_keep_alive_timeout(std::max(1, config.limits.head_ms / 1000));
  }

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

  // Decides from the head alone, before any of the body is read: 403 without the token,
  // 413 for a body past the limit, 411 for one of unknown length. 0: go on.
  int refuse(const httplib::Request& req, httplib::Response& res) const {
    auto say = [&](int status, std::string text) {
      res.status = status;
      res.set_content(std::move(text), "text/plain; charset=utf-8");
      return status;
    };
    if (!allowed(req))
      return say(403, "403 forbidden: this page needs the address causeway ui printed\n");
    if (req.has_header("Transfer-Encoding"))
      return say(411, "411: send the body with a Content-Length\n");
    if (req.has_header("Content-Length")) {
      uint64_t length = 0;
      if (!parse_u64(req.get_header_value("Content-Length"), &length))
        return say(400, "400: Content-Length is not a number\n");
      if (length > config.limits.body_bytes)
        return say(413, fmt::format("413: a request's body takes at most {} bytes\n",
                                    config.limits.body_bytes));
    }
    return 0;
  }

  static void bad_request(httplib::Response& res, const std::string& why) {
    res.status = 400;
    res.set_content(json_body({{"ok", false}, {"message", why}}), "application/json");
  }

  void routes() {
    const std::string base = "/" + config.token;
    http.set_expect_100_continue_handler(
        [this](const httplib::Request& req, httplib::Response& res) {
          const int status = refuse(req, res);
          return status == 0 ? 100 : status;
        });
    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      return refuse(req, res) == 0 ? httplib::Server::HandlerResponse::Unhandled
                                   : httplib::Server::HandlerResponse::Handled;
    });
    http.set_post_routing_handler([](const httplib::Request&, httplib::Response& res) {
      res.set_header("Cache-Control", "no-store");
      res.set_header("X-Content-Type-Options", "nosniff");
      res.set_header("Referrer-Policy", "no-referrer");
      if (!res.has_header("Content-Security-Policy"))
        res.set_header("Content-Security-Policy", kPagePolicy);
      // After a refusal the rest of the connection is not trusted (an unread body may
      // follow): it is closed, and the client told so.
      if (answering && res.status >= 400) answering->close_after = true;
      if (answering && (answering->close_after || answering->has_body)) {
        res.headers.erase("Keep-Alive");
        if (res.get_header_value("Connection") != "close") res.set_header("Connection", "close");
      }
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
      if (req.has_param("since") && !parse_u64(req.get_param_value("since"), &since)) {
        bad_request(res, "since: expected a state version (a whole number)");
        return;
      }
      // A poll waits only while a slot is free; past them it is answered at once and the
      // page waits before asking again, so the other requests always find a worker.
      nlohmann::json state;
      if (waiting_polls.fetch_add(1) < config.limits.waiting_polls) {
        state = session.wait_snapshot(since, config.limits.long_poll_ms);
      } else {
        state = session.snapshot();
        state["poll_again_ms"] = kPollAgainMs;
      }
      waiting_polls.fetch_sub(1);
      res.set_content(json_body(state), "application/json");
    });
    http.Post(base + "/api/answer", [this](const httplib::Request& req, httplib::Response& res) {
      auto body = nlohmann::json::parse(req.body, nullptr, false);
      if (!body.is_object()) {
        bad_request(res, "expected {\"id\": QUESTION, \"option\": INDEX}");
        return;
      }
      // Whole numbers only, each in its range: a value that does not fit is refused, never
      // cut to fit (an option of 2^32 + 1 is not option 1).
      uint64_t id = 0;
      uint64_t option = 0;
      for (auto [key, out, max] :
           {std::tuple<const char*, uint64_t*, uint64_t>{"id", &id, UINT64_MAX},
            {"option", &option, UINT32_MAX}}) {
        const auto it = body.find(key);
        if (it == body.end() || !it->is_number_unsigned() || it->get<uint64_t>() > max) {
          bad_request(res, fmt::format("{}: expected a whole number from 0 to {}, got {}", key, max,
                                       it == body.end() ? "nothing" : json_body(*it)));
          return;
        }
        *out = it->get<uint64_t>();
      }
      std::string why;
      if (session.answer(id, option, &why)) {
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
      // Quitting stops the server, which ends every connection: the page is answered first.
      if (config.quit) {
        if (answering)
          answering->after_answer = config.quit;
        else
          config.quit();
      }
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
  if (impl_->port > 0) impl_->http.widen_backlog();
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
  impl_->front.start();
  if (!impl_->front.stopping()) impl_->http.listen_after_bind();
  impl_->front.join();
}

void Server::stop() {
  impl_->session.cancel();
  impl_->front.stop();
  impl_->http.close_listener();
}

}  // namespace cw::ui
