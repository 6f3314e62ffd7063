#include "ui/session.h"

#include <chrono>

namespace cw::ui {

nlohmann::json Session::snapshot() const {
  std::lock_guard lock(mu_);
  nlohmann::json j = state_;
  j["version"] = version_;
  return j;
}

nlohmann::json Session::wait_snapshot(uint64_t since, int timeout_ms) const {
  std::unique_lock lock(mu_);
  changed_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                    [&] { return version_ > since || cancelled_; });
  nlohmann::json j = state_;
  j["version"] = version_;
  return j;
}

void Session::set(const std::string& key, nlohmann::json value) {
  {
    std::lock_guard lock(mu_);
    state_[key] = std::move(value);
    ++version_;
  }
  changed_.notify_all();
}

void Session::merge(const nlohmann::json& fields) {
  {
    std::lock_guard lock(mu_);
    for (const auto& [key, value] : fields.items()) state_[key] = value;
    ++version_;
  }
  changed_.notify_all();
}

uint32_t Session::ask(nlohmann::json question) {
  std::unique_lock lock(mu_);
  if (cancelled_) throw Cancelled();
  const uint64_t id = next_question_++;
  question["id"] = id;
  asked_ = id;
  asked_options_ = question["options"].size();
  answer_.reset();
  state_["question"] = std::move(question);
  state_["phase"] = "question";
  ++version_;
  changed_.notify_all();
  changed_.wait(lock, [&] { return answer_.has_value() || cancelled_; });
  if (!answer_) throw Cancelled();
  const uint32_t chosen = *answer_;
  asked_ = 0;
  answer_.reset();
  state_.erase("question");
  state_["phase"] = "diagnosing";
  ++version_;
  lock.unlock();
  changed_.notify_all();
  return chosen;
}

bool Session::answer(uint64_t id, uint64_t option, std::string* why) {
  {
    std::lock_guard lock(mu_);
    if (asked_ == 0 || id != asked_ || answer_) {
      *why = "that question is not waiting for an answer";
      return false;
    }
    if (option >= asked_options_) {
      *why = "no such option";
      return false;
    }
    answer_ = static_cast<uint32_t>(option);  // below the option count: it fits
  }
  changed_.notify_all();
  return true;
}

void Session::cancel() {
  {
    std::lock_guard lock(mu_);
    cancelled_ = true;
    ++version_;
  }
  changed_.notify_all();
}

bool Session::cancelled() const {
  std::lock_guard lock(mu_);
  return cancelled_;
}

nlohmann::json question_json(const engine::Question& q) {
  nlohmann::json options = nlohmann::json::array();
  for (const auto& o : q.options)
    options.push_back({{"label", o.label}, {"evidence", o.evidence}, {"stop", o.stop}});
  return {{"kind", engine::question_kind_name(q.kind)},
          {"text", q.text},
          {"help", q.help},
          {"options", std::move(options)}};
}

engine::Answer WebAnswerer::ask(const engine::Question& q) {
  nlohmann::json j = question_json(q);
  j["number"] = ++asked_;
  j["context"] = context_;
  return {session_.ask(std::move(j)), engine::AnswerSource::User, {}};
}

}  // namespace cw::ui
