// How the pipeline fails: the text for the user, and whose failure it is (the input's or
// the environment's), which the command line turns into its exit status.
#pragma once

#include <stdexcept>
#include <string>

namespace cw::session {

class SessionError : public std::runtime_error {
 public:
  enum class Kind {
    BadInput,     // the trace, a pack, --hang or an answers file is wrong; the text says where
    Environment,  // the machine cannot do it (no standard packs, a file that cannot be written)
  };
  // `text`: whole lines, possibly several (a rule's error with its caret, then a hint);
  // empty when it was already said through the Reporter (a pack's diagnostics).
  SessionError(Kind kind, const std::string& text) : std::runtime_error(text), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

}  // namespace cw::session
