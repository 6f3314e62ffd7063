#include "ui/session.h"

#include <doctest/doctest.h>

#include <set>
#include <thread>

#include "ui/server.h"

using namespace cw::ui;

TEST_CASE("random_token: 32 hex digits, different each time") {
  std::set<std::string> seen;
  for (int i = 0; i < 20; ++i) {
    const std::string t = random_token();
    CHECK(t.size() == 32);
    CHECK(t.find_first_not_of("0123456789abcdef") == std::string::npos);
    seen.insert(t);
  }
  CHECK(seen.size() == 20);
}

TEST_CASE("token_matches: only the whole token") {
  const std::string token = "0123456789abcdef0123456789abcdef";
  CHECK(token_matches(token, token));
  CHECK_FALSE(token_matches("", token));
  CHECK_FALSE(token_matches(token.substr(0, 31), token));
  CHECK_FALSE(token_matches(token + "0", token));
  CHECK_FALSE(token_matches("1123456789abcdef0123456789abcdef", token));
  CHECK_FALSE(token_matches("0123456789abcdef0123456789abcdee", token));
}

nlohmann::json two_options() {
  return {{"text", "which?"}, {"options", {{{"label", "a"}}, {{"label", "b"}}}}};
}

TEST_CASE("Session: a question waits for the page's answer to it") {
  Session s;
  uint32_t chosen = 99;
  std::thread worker([&] { chosen = s.ask(two_options()); });
  nlohmann::json state;
  for (;;) {
    state = s.wait_snapshot(0, 100);
    if (state.value("phase", "") == "question") break;
  }
  const uint64_t id = state["question"]["id"];
  std::string why;
  CHECK_FALSE(s.answer(id + 1, 0, &why));  // not the question asked
  CHECK_FALSE(s.answer(id, 2, &why));      // no such option
  CHECK(why == "no such option");
  CHECK(s.answer(id, 1, &why));
  worker.join();
  CHECK(chosen == 1);
  CHECK_FALSE(s.answer(id, 0, &why));  // answered already
  const auto after = s.snapshot();
  CHECK(after["phase"] == "diagnosing");
  CHECK_FALSE(after.contains("question"));
  CHECK(after["version"].get<uint64_t>() > state["version"].get<uint64_t>());
}

TEST_CASE("Session: cancel ends a question without an answer") {
  Session s;
  bool cancelled = false;
  std::thread worker([&] {
    try {
      s.ask(two_options());
    } catch (const Cancelled&) {
      cancelled = true;
    }
  });
  while (s.snapshot().value("phase", "") != "question") std::this_thread::yield();
  s.cancel();
  worker.join();
  CHECK(cancelled);
  CHECK_THROWS_AS(s.ask(two_options()), Cancelled);
}

TEST_CASE("Session: merge sets every field in one version") {
  Session s;
  const uint64_t before = s.snapshot()["version"];
  s.merge({{"phase", "done"}, {"report", {{"text", "x"}}}});
  const auto j = s.snapshot();
  CHECK(j["version"].get<uint64_t>() == before + 1);
  CHECK(j["phase"] == "done");
  CHECK(j["report"]["text"] == "x");
}
