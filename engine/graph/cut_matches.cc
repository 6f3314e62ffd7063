#include "engine/graph/cut_matches.h"

#include <stdexcept>

#include "base/varint.h"

namespace cw::engine {

namespace {

constexpr uint32_t kNone = 0xffffffffu;  // kNoEvent (expr_eval.h)

void put(std::string& out, uint64_t v) {
  put_varint(out, v);
}

[[noreturn]] void bad(const char* what) {
  throw std::invalid_argument(what);
}

}  // namespace

MatchWriter::MatchWriter(CutMatches& out) : out_(out) {
  if (out.count != 0) bad("a writer appends to a list it starts");
}

void MatchWriter::event(uint32_t e) {
  if (e == kNone) bad("a match at no event");
  if (out_.count && e <= last_) bad("matches out of order");
  put(out_.bytes, out_.count ? e - last_ - 1 : e);
  last_ = e;
  ++out_.count;
}

void MatchWriter::add(const SplitMatch& m) {
  event(m.event);
  put(out_.bytes, m.at == kNone ? 0 : zigzag(int64_t{m.at} - int64_t{m.event}) + 1);
}

void MatchWriter::add(const BatchMatch& m) {
  if (m.at > m.event) bad("an item that starts after its match");
  if (m.loop > uint64_t{m.event} + 1) bad("an item's loop opened after it");
  event(m.event);
  put(out_.bytes, m.event - m.at);
  put(out_.bytes, m.loop == 0 ? 0 : uint64_t{m.event} + 1 - m.loop + 1);
  put(out_.bytes, zigzag(m.key));
}

CutMatches CutMatches::of(const std::vector<SplitMatch>& list) {
  CutMatches out;
  out.known = true;
  MatchWriter w(out);
  for (const SplitMatch& m : list) w.add(m);
  return out;
}

CutMatches CutMatches::of(const std::vector<BatchMatch>& list) {
  CutMatches out;
  out.known = true;
  out.batch = true;
  MatchWriter w(out);
  for (const BatchMatch& m : list) w.add(m);
  return out;
}

std::vector<SplitMatch> CutMatches::split_list() const {
  std::vector<SplitMatch> out;
  for (MatchReader r(*this); !r.done();) out.push_back(r.split());
  return out;
}

std::vector<BatchMatch> CutMatches::batch_list() const {
  std::vector<BatchMatch> out;
  for (MatchReader r(*this); !r.done();) out.push_back(r.batch());
  return out;
}

MatchReader::MatchReader(const CutMatches& list)
    : p_(reinterpret_cast<const unsigned char*>(list.bytes.data())),
      end_(p_ + list.bytes.size()),
      left_(list.count) {
  // Every match takes at least two bytes (a split's two varints; a batch's four).
  if (left_ > list.bytes.size() / 2) bad("more matches than the list holds");
  if (left_ == 0 && p_ != end_) bad("bytes after the last match");
}

uint64_t MatchReader::varint() {
  uint64_t v = 0;
  switch (read_varint(p_, end_, v)) {
    case VarintRead::Ok: return v;
    case VarintRead::CutShort: bad("a match cut short");
    case VarintRead::TooLong: bad("a number over 64 bits");
  }
  bad("a number over 64 bits");
}

uint32_t MatchReader::next_event() {
  const uint64_t step = varint();
  const uint64_t e = first_ ? step : last_ + 1 + step;
  if (step >= kNone || e >= kNone) bad("a match past 2^32 events");
  first_ = false;
  last_ = e;
  return static_cast<uint32_t>(e);
}

SplitMatch MatchReader::split() {
  if (left_ == 0) bad("no match left");
  SplitMatch m;
  m.event = next_event();
  const uint64_t place = varint();
  if (place == 0) {
    m.at = kNone;
  } else {
    const int64_t d = unzigzag(place - 1);
    const auto e = static_cast<int64_t>(m.event);
    if (d < -e || d >= int64_t{kNone} - e) bad("a cut place that is no event");
    m.at = static_cast<uint32_t>(e + d);
  }
  if (--left_ == 0 && p_ != end_) bad("bytes after the last match");
  return m;
}

BatchMatch MatchReader::batch() {
  if (left_ == 0) bad("no match left");
  BatchMatch m;
  m.event = next_event();
  const uint64_t back = varint();
  if (back > m.event) bad("an item that starts before the trace");
  m.at = static_cast<uint32_t>(m.event - back);
  const uint64_t loop = varint();
  if (loop > uint64_t{m.event} + 1) bad("an item's loop opened before the trace");
  m.loop = loop == 0 ? 0 : static_cast<uint32_t>(uint64_t{m.event} + 2 - loop);
  m.key = unzigzag(varint());
  if (--left_ == 0 && p_ != end_) bad("bytes after the last match");
  return m;
}

}  // namespace cw::engine
