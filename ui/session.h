// What `causeway ui`'s diagnosis and its page share: the state the page shows (the phase,
// the question being asked, the report once done) and the answers the page sends back.
// The diagnosis runs on its own thread and waits in WebAnswerer::ask until the page
// answers; the server's threads read snapshots of the state.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>

#include "engine/diagnosis/questions.h"

namespace cw::ui {

// Thrown out of WebAnswerer::ask when the page or the user ended the session mid-question:
// the diagnosis then unwinds without an answer.
struct Cancelled : std::runtime_error {
  Cancelled() : std::runtime_error("the session ended before the question was answered") {}
};

class Session {
 public:
  // The page's view: {"version", "phase", ...}. Fields set with set() are merged in.
  nlohmann::json snapshot() const;
  // Waits (up to `timeout_ms`) until the version is past `since`, then snapshots.
  nlohmann::json wait_snapshot(uint64_t since, int timeout_ms) const;

  // Sets state[key] = value and wakes the pages waiting for a change.
  void set(const std::string& key, nlohmann::json value);
  // Sets each key of `fields` (an object) at once: the page never sees half of them.
  void merge(const nlohmann::json& fields);

  // Publishes `question` (as JSON, with `context`: what was found so far) and blocks until
  // answer() picks one of its options; throws Cancelled when cancel() comes first.
  uint32_t ask(nlohmann::json question);
  // The page's answer to question `id`; false with `*why` when it is not the one asked
  // or the option is not one of its options (any 64-bit value is checked whole).
  bool answer(uint64_t id, uint64_t option, std::string* why);

  void cancel();
  bool cancelled() const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  nlohmann::json state_ = nlohmann::json::object();
  uint64_t version_ = 1;
  uint64_t next_question_ = 1;
  uint64_t asked_ = 0;  // the id of the question waiting for its answer, 0 for none
  size_t asked_options_ = 0;
  std::optional<uint32_t> answer_;
  bool cancelled_ = false;
};

// Answers the diagnosis's questions through the page. `before` (set by the command, from
// DiagnoseOptions::before_asking) gives the question its context.
class WebAnswerer : public engine::Answerer {
 public:
  explicit WebAnswerer(Session& session) : session_(session) {}
  engine::Answer ask(const engine::Question& q) override;
  // What was found so far, for the next question: set before each question is asked.
  void set_context(nlohmann::json context) { context_ = std::move(context); }

 private:
  Session& session_;
  nlohmann::json context_;
  size_t asked_ = 0;
};

// A question as the page shows it: its kind, text, help and options, each option with
// its label and evidence, best first.
nlohmann::json question_json(const engine::Question& q);

}  // namespace cw::ui
