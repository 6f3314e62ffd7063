// D-Bus episodes: blocking calls that the bus serves in batches, and signals it fans out.
#include <algorithm>
#include <vector>

#include "bench/session_model_internal.h"

namespace cw::bench {

// Several clients make blocking D-Bus calls at once; the bus daemon serves them all in
// one loop iteration (batching, the Argus paper, §3.1), forwards each call to its service,
// then relays the replies in another iteration.
void SessionModel::bus_calls() {
  const size_t clients_wanted = rng_.between(2, 5);
  std::vector<uint32_t> clients, services;
  for (size_t i = 0; i < clients_wanted * 4 && clients.size() < clients_wanted; ++i) {
    const uint32_t c = pick(glib_loops_), s = pick(glib_loops_);
    if (c == s || T(c).process == T(s).process) continue;
    if (std::find(clients.begin(), clients.end(), c) != clients.end() ||
        std::find(clients.begin(), clients.end(), s) != clients.end() ||
        std::find(services.begin(), services.end(), c) != services.end() ||
        std::find(services.begin(), services.end(), s) != services.end())
      continue;
    clients.push_back(c);
    services.push_back(s);
  }
  if (clients.empty()) return;
  const uint64_t base = std::max(now_, T(bus_).free_at);

  struct Call {
    Act client;
    Msg request;
    uint64_t blocked_at = 0;
  };
  std::vector<Call> calls;
  for (uint32_t c : clients) {
    Act a = timer_wakes_loop(c, base + rng_.around(30 * kUs));
    ev_.call_enter(at(a), n_->g_main_dispatch, 0x7f3a00112230);
    tick(a);
    work(a, 20 * kUs);
    // Requests reach the bus in client order: only the first finds it asleep.
    if (!calls.empty()) a.t = std::max(a.t, calls.back().request.sent_at + 300);
    Msg m = send_msg(a, bus_, 200 + rng_.between(0, 400), calls.empty(), T(bus_).free_at);
    SyscallArgs wait;
    wait.fd = channel(c, bus_).fd_src;  // the client's own end of the connection
    wait.count = 1;
    wait.timeout_ns = 25 * static_cast<int64_t>(kS);
    wait.stack = s_->bus_client_wait;
    ev_.syscall_enter(at(a), n_->poll, wait);
    tick(a);
    ev_.switch_out(at(a), 'S');
    const uint64_t blocked = a.t;
    tick(a);
    calls.push_back({a, m, blocked});
  }
  // The first request woke the bus; the others are read in the same iteration.
  const Msg& first = calls.front().request;
  Act bus = leave_home(bus_, first.sent_at, first.fd_dst, first.object);
  ev_.call_enter(at(bus), n_->dbus_iterate, 0x5612000a1b20);
  tick(bus);
  std::vector<Msg> forwarded;
  for (size_t i = 0; i < calls.size(); ++i) {
    recv_msg(bus, calls[i].request);
    work(bus, 6 * kUs);
    forwarded.push_back(
        send_msg(bus, services[i], calls[i].request.len + 80, true, T(services[i]).free_at));
  }
  ev_.call_exit(at(bus), n_->dbus_iterate);
  tick(bus);
  go_home(bus);

  std::vector<Msg> replies;
  for (size_t i = 0; i < calls.size(); ++i) {
    Act s = leave_home(services[i], forwarded[i].sent_at, forwarded[i].fd_dst, forwarded[i].object);
    recv_msg(s, forwarded[i]);
    ev_.call_enter(at(s), n_->g_main_dispatch, 0x7f3a00112230);
    tick(s);
    work(s, 70 * kUs);
    s.t = std::max(s.t, T(bus_).free_at + 500);
    if (!replies.empty()) s.t = std::max(s.t, replies.front().sent_at + 300);
    replies.push_back(
        send_msg(s, bus_, 100 + rng_.between(0, 300), replies.empty(), T(bus_).free_at));
    ev_.call_exit(at(s), n_->g_main_dispatch);
    tick(s);
    go_home(s);
  }
  // Only the earliest reply found the bus asleep; the rest arrive while it relays.
  std::vector<size_t> order(calls.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return replies[x].sent_at < replies[y].sent_at; });
  Act relay = leave_home(bus_, replies[0].sent_at, replies[0].fd_dst, replies[0].object);
  ev_.call_enter(at(relay), n_->dbus_iterate, 0x5612000a1b20);
  tick(relay);
  std::vector<Msg> answers(calls.size());
  for (size_t k : order) {
    recv_msg(relay, replies[k]);
    work(relay, 5 * kUs);
    answers[k] = send_msg(relay, clients[k], replies[k].len + 40, true, calls[k].blocked_at);
  }
  ev_.call_exit(at(relay), n_->dbus_iterate);
  tick(relay);
  go_home(relay);

  for (size_t k = 0; k < calls.size(); ++k) {
    Act& a = calls[k].client;
    a.t = answers[k].sent_at + latency();
    maybe_migrate(a.th);
    ev_.switch_in(at(a));
    tick(a);
    ev_.ready(at(a), answers[k].fd_dst, answers[k].object, kEpollIn);
    tick(a);
    ev_.syscall_exit(at(a), n_->poll, 1);
    tick(a);
    recv_msg(a, answers[k]);
    work(a, 25 * kUs);
    ev_.call_exit(at(a), n_->g_main_dispatch);
    tick(a);
    go_home(a);
  }
}

// A daemon emits a D-Bus signal; the bus fans it out to its subscribers.
void SessionModel::bus_signal(uint32_t sender) {
  const size_t fanout = rng_.between(1, 4);
  std::vector<uint32_t> subscribers;
  for (size_t i = 0; i < fanout * 3 && subscribers.size() < fanout; ++i) {
    const uint32_t s = pick(glib_loops_);
    if (T(s).process == T(sender).process) continue;
    if (std::find(subscribers.begin(), subscribers.end(), s) == subscribers.end())
      subscribers.push_back(s);
  }
  Act a = timer_wakes_loop(sender, std::max(now_, T(bus_).free_at));
  ev_.call_enter(at(a), n_->g_main_dispatch, 0x7f3a00112230);
  tick(a);
  work(a, 40 * kUs);
  const Msg signal = send_msg(a, bus_, 180, true, T(bus_).free_at);
  ev_.call_exit(at(a), n_->g_main_dispatch);
  tick(a);
  go_home(a);

  Act bus = leave_home(bus_, signal.sent_at, signal.fd_dst, signal.object);
  ev_.call_enter(at(bus), n_->dbus_iterate, 0x5612000a1b20);
  tick(bus);
  recv_msg(bus, signal);
  std::vector<Msg> copies;
  for (uint32_t s : subscribers) copies.push_back(send_msg(bus, s, 220, true, T(s).free_at));
  ev_.call_exit(at(bus), n_->dbus_iterate);
  tick(bus);
  go_home(bus);
  for (size_t i = 0; i < subscribers.size(); ++i) {
    Act s = leave_home(subscribers[i], copies[i].sent_at, copies[i].fd_dst, copies[i].object);
    recv_msg(s, copies[i]);
    ev_.call_enter(at(s), n_->g_main_dispatch, 0x7f3a00112230);
    tick(s);
    work(s, 30 * kUs);
    ev_.call_exit(at(s), n_->g_main_dispatch);
    tick(s);
    go_home(s);
  }
}

}  // namespace cw::bench
