// Questions at the ambiguous points of a diagnosis (the Argus paper, §2): a pack's answer
// rules are tried first, then the answerer; a question asked again about the same segment
// gets the same answer.
#include "engine/diagnosis/diagnoser.h"

namespace cw::engine {

std::string_view question_kind_name(QuestionKind k) {
  switch (k) {
    case QuestionKind::Edge: return "edge";
    case QuestionKind::Baseline: return "baseline";
    case QuestionKind::Recurse: return "recurse";
  }
  return "?";
}

std::string_view answer_source_name(AnswerSource s) {
  switch (s) {
    case AnswerSource::User: return "user";
    case AnswerSource::Answers: return "answers";
    case AnswerSource::Rule: return "rule";
    case AnswerSource::Auto: return "auto";
  }
  return "?";
}

namespace diagnose_detail {

Value Diagnoser::kind_value(const Edge& e) {
  const std::string& k = g_.kind_name(e);
  return {rules::ValueType::Str, static_cast<int64_t>(trace_.strings.find(k)), k.c_str()};
}

// The option an answer rule picks, or kNoIndex.
uint32_t Diagnoser::rule_choice(const Question& q, std::string* rule_id) {
  const uint32_t first = g_.segments[q.subject].first;
  for (auto& a : answer_rules_) {
    if (static_cast<uint8_t>(a.rule->question) != static_cast<uint8_t>(q.kind)) continue;
    if (!eval_.test(a.subject, EvalScope{{first, SpanTree::kRoot}, {}, {}})) continue;
    for (uint32_t k = 0; k < q.options.size(); ++k) {
      const Option& o = q.options[k];
      bool hit = false;
      switch (a.rule->choice) {
        case rules::AnswerRule::Choice::Stop: hit = o.stop; break;
        case rules::AnswerRule::Choice::Recurse: hit = !o.stop; break;
        case rules::AnswerRule::Choice::Option:
          if (o.stop) break;
          if (q.kind == QuestionKind::Edge) {
            const Edge& e = g_.edges[o.edge];
            Value kind = kind_value(e);
            EvalScope scope{{}, {e.from_event, SpanTree::kRoot}, {e.to_event, SpanTree::kRoot}};
            scope.edge_kind = &kind;
            hit = eval_.test(a.choose, scope);
          } else {
            hit = eval_.test(a.choose,
                             EvalScope{{g_.segments[o.segment].first, SpanTree::kRoot}, {}, {}});
          }
          break;
      }
      if (hit) {
        *rule_id = a.rule->origin.id;
        return k;
      }
    }
  }
  return kNoIndex;
}

// Asks (rules first, then the answerer) unless the question was answered already for
// this subject; records it; returns the chosen option.
const Option& Diagnoser::ask(Question q) {
  auto key = std::make_pair(q.kind, q.subject);
  if (auto it = asked_.find(key); it != asked_.end()) {
    // The same question again (a slice reaching the same segment): same answer.
    const Query& prev = d_.queries[it->second];
    for (const Option& o : q.options)
      if (o.label == prev.question.options[prev.answer.option].label) {
        chosen_ = o;
        return chosen_;
      }
  }
  Answer a;
  std::string rule;
  uint32_t k = rule_choice(q, &rule);
  if (k != kNoIndex) {
    a = {k, AnswerSource::Rule, rule};
  } else {
    if (opt_.before_asking) opt_.before_asking(d_, q);
    a = answerer_->ask(q);
    if (a.option >= q.options.size()) a.option = 0;
  }
  asked_[key] = d_.queries.size();
  d_.queries.push_back({std::move(q), a});
  chosen_ = d_.queries.back().question.options[a.option];
  return chosen_;
}

}  // namespace diagnose_detail
}  // namespace cw::engine
