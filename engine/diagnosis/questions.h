// Questions a diagnosis asks at ambiguous points (the Argus paper, §2, Algorithm 1), and who
// answers them: the user at a terminal, an answers file, a pack's `answer` rules, or the
// best-scored option (--auto, or no terminal).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/diagnosis/segment_profile.h"

namespace cw::engine {

enum class QuestionKind : uint8_t {
  Edge,      // several incoming edges, or only weak ones: which one caused this segment?
  Baseline,  // several segments like the hang's: which one is the normal run?
  Recurse,   // a culprit is itself hung: find out why it was, in turn?
};
std::string_view question_kind_name(QuestionKind k);  // "edge", "baseline", "recurse"

struct Option {
  std::string label;     // one line: "cw-server 812 send → recv (message, strong)"
  std::string evidence;  // names, syscalls, stack, times (shown on `?`); empty when the
                         // answerer does not want it (Answerer::wants_evidence)
  double cost = 0;       // lower is better; options are sorted by it
  // What choosing it means. Edge: `edge` (index into Graph::edges) or `stop`.
  // Baseline: `segment`, or `stop` for "none of these". Recurse: `stop` = no.
  uint32_t edge = kNoIndex;
  uint32_t segment = kNoIndex;
  bool stop = false;
};

struct Question {
  QuestionKind kind = QuestionKind::Edge;
  uint32_t subject = kNoIndex;  // the segment asked about
  std::string text;             // "What made cw-client 811 run at 1.203 s? …"
  std::string help;             // what the question means and how options are ranked (`?`)
  std::vector<Option> options;  // best first; never empty
};

enum class AnswerSource : uint8_t { User, Answers, Rule, Auto };
std::string_view answer_source_name(AnswerSource s);  // "user", "answers", "rule", "auto"

struct Answer {
  uint32_t option = 0;  // index into Question::options
  AnswerSource source = AnswerSource::Auto;
  std::string rule;  // Rule: the qualified id of the answer rule that decided it
};

// Answers questions the rules did not. Implementations: the terminal prompt and the
// answers-file replay (cli/), and AutoAnswerer.
class Answerer {
 public:
  virtual ~Answerer() = default;
  virtual Answer ask(const Question& q) = 0;
  // Whether options need their Option::evidence (people read it; the best-scored choice
  // does not): gathering it profiles every option's segment.
  virtual bool wants_evidence() const { return true; }
};

// Takes the best-scored option.
class AutoAnswerer : public Answerer {
 public:
  Answer ask(const Question&) override { return {0, AnswerSource::Auto, {}}; }
  bool wants_evidence() const override { return false; }
};

struct Query {
  Question question;
  Answer answer;
};

}  // namespace cw::engine
