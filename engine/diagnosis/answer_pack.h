// Answers are rules (DESIGN §5): a diagnosis's questions and the options chosen, written
// as a pack of `answer` rules (docs/rules.md) with a test that replays the diagnosis, so
// that re-running with `--rules PACK` asks nothing and reaches the same root cause.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/diagnosis/diagnose.h"
#include "engine/graph/graph.h"
#include "trace/trace.h"

namespace cw::engine {

// The first line of every pack.cw written here: only such a file is ever overwritten.
inline constexpr std::string_view kAnswerPackMarker =
    "# Written by `causeway debug --save-answers`: the answers of one diagnosis as rules.";

struct AnswerPackSpec {
  std::string pack_id;     // "answers.NAME"
  std::string trace_file;  // as the pack test's `trace file` names it
  std::string hang;        // "auto" or "TID@SECONDS", as given on the command line
  // The packs the diagnosis ran with: the pack requires them, so that its test (run with
  // the pack and what it requires, nothing else) builds the same graph.
  std::vector<std::string> requires_;
};

// "answers." + the folder's last name with everything but [A-Za-z0-9_] made `_` (and a
// leading `_` before a digit): `--save-answers out/my-app` gives "answers.my_app".
std::string answer_pack_id(const std::string& dir);

// The text of PACK/pack.cw: the header, one `answer qN` rule per query that a rule did not
// already answer (each after a comment with the question and the chosen option), and a
// test that replays the diagnosis and expects its hang, its first root cause and no
// question. A rule names places in the program (names, event kind, frame), which a new
// recording of it shares, unless a place cannot tell the question or the option apart:
// then this recording's tid and time.
std::string answer_pack_text(const Trace& trace, const Graph& graph, const Diagnosis& diagnosis,
                             const AnswerPackSpec& spec);

// Writes DIR/pack.cw (making DIR when needed) for the trace at `trace_path`, requiring
// `packs` (its own id, when DIR held an earlier answer pack, is left out); the test names
// the trace relative to DIR when the two share a folder other than `/`, else by its
// absolute path. Returns the file's path.
// Throws std::invalid_argument, naming the file, when DIR/pack.cw exists and was not
// written by causeway debug (the marker line), and std::runtime_error when it cannot be
// written.
std::string save_answer_pack(const std::string& dir, const std::string& trace_path,
                             const std::string& hang, const std::vector<std::string>& packs,
                             const Trace& trace, const Graph& graph, const Diagnosis& diagnosis);

// How many `answer` rules answer_pack_text writes for `diagnosis`.
size_t saved_answer_count(const Diagnosis& diagnosis);

}  // namespace cw::engine
