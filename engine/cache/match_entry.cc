// The cut matches entry (cache.h): where each cut rule seen on a trace matched it, so that
// a rebuild after a rule edit evaluates only the rules it has not seen and replays every
// thread's cuts from the matches (engine/graph/cut_matches.h).
#include <fmt/format.h>

#include <exception>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "base/parallel.h"
#include "engine/cache/cache.h"
#include "engine/cache/encoding.h"
#include "engine/graph/expr_eval.h"

namespace cw::cache {

namespace {

constexpr uint8_t kSplitList = 0, kBatchList = 1;

uint64_t bytes_of(const engine::CutMatches& m) {
  return m.bytes.size();
}

// Reads a list whole, checking that each match and its cut place are events of the trace
// (the reader checks the form). That a place is on its match's thread the replay checks,
// where it reads both events anyway (here it was a tenth of a rebuild at 19 M events).
void check_list(const engine::CutMatches& list, const Trace& trace) {
  const uint64_t n = trace.events.size();
  auto check = [&](uint32_t event, uint32_t at) {
    if (event >= n) throw CorruptEntry("a match past the trace's events");
    if (at != engine::kNoEvent && at >= n)
      throw CorruptEntry("a cut place past the trace's events");
  };
  try {
    for (engine::MatchReader r(list); !r.done();) {
      if (list.batch) {
        const engine::BatchMatch m = r.batch();
        check(m.event, m.at);
      } else {
        const engine::SplitMatch m = r.split();
        check(m.event, m.at);
      }
    }
  } catch (const std::invalid_argument& e) {
    throw CorruptEntry(e.what());
  }
}

}  // namespace

engine::KnownCutMatches StoredMatches::for_rules(const rules::RuleSet& rules) const {
  std::unordered_map<uint64_t, size_t> at;
  for (size_t k = 0; k < keys.size(); ++k) at.emplace(keys[k], k);
  engine::KnownCutMatches known;
  auto find = [&](uint64_t key, bool batch) -> const engine::CutMatches* {
    auto it = at.find(key);
    if (it == at.end()) return nullptr;
    const engine::CutMatches& m = lists[it->second];
    // A key of the other kind of rule (a collision): not these matches.
    if (m.batch != batch) return nullptr;
    return &m;
  };
  for (const rules::SplitRule& s : rules.splits)
    known.splits.push_back(find(cut_rule_key(s), false));
  for (const rules::BatchRule& b : rules.batches)
    known.batches.push_back(find(cut_rule_key(b), true));
  return known;
}

StoredMatches merge_matches(const rules::RuleSet& rules, engine::CutMatchSet&& found,
                            StoredMatches&& before) {
  StoredMatches out;
  std::unordered_set<uint64_t> kept;
  uint64_t current_bytes = 0;
  auto add = [&](uint64_t key, engine::CutMatches&& m) {
    if (!m.known || !kept.insert(key).second) return;
    out.keys.push_back(key);
    out.lists.push_back(std::move(m));
  };
  // The current rules' lists: found by this build, else as stored.
  std::unordered_map<uint64_t, size_t> stored;
  for (size_t k = 0; k < before.keys.size(); ++k) stored.emplace(before.keys[k], k);
  auto current = [&](uint64_t key, engine::CutMatches* fresh) {
    if (fresh && fresh->known) {
      current_bytes += bytes_of(*fresh);
      add(key, std::move(*fresh));
      return;
    }
    auto it = stored.find(key);
    if (it == stored.end() || kept.count(key)) return;
    current_bytes += bytes_of(before.lists[it->second]);
    add(key, std::move(before.lists[it->second]));
  };
  for (size_t s = 0; s < rules.splits.size(); ++s)
    current(cut_rule_key(rules.splits[s]), s < found.splits.size() ? &found.splits[s] : nullptr);
  for (size_t b = 0; b < rules.batches.size(); ++b)
    current(cut_rule_key(rules.batches[b]), b < found.batches.size() ? &found.batches[b] : nullptr);
  // Then the lists of rules not loaded now, most recently stored first, while they take
  // no more room than the current rules' lists.
  uint64_t other_bytes = 0;
  for (size_t k = 0; k < before.keys.size(); ++k) {
    if (kept.count(before.keys[k]) || !before.lists[k].known) continue;
    const uint64_t size = bytes_of(before.lists[k]);
    if (other_bytes + size > current_bytes + (uint64_t{1} << 20)) continue;
    other_bytes += size;
    add(before.keys[k], std::move(before.lists[k]));
  }
  return out;
}

std::string encode_cut_matches(const StoredMatches& stored) {
  Writer w;
  w.value(static_cast<uint64_t>(stored.lists.size()));
  for (size_t k = 0; k < stored.lists.size(); ++k) {
    const engine::CutMatches& m = stored.lists[k];
    w.value(stored.keys[k]);
    w.value(m.batch ? kBatchList : kSplitList);
    w.value(m.count);
    w.text(m.bytes);
  }
  return w.take();
}

StoredMatches decode_cut_matches(std::string_view payload, const Trace& trace) {
  Reader rd(payload);
  StoredMatches out;
  const auto lists = rd.value<uint64_t>();
  // Each list takes at least its key, its kind, its count and its size.
  if (lists > payload.size() / 25) throw CorruptEntry("more lists than the entry holds");
  for (uint64_t k = 0; k < lists; ++k) {
    out.keys.push_back(rd.value<uint64_t>());
    engine::CutMatches m;
    m.known = true;
    const auto kind = rd.value<uint8_t>();
    if (kind != kSplitList && kind != kBatchList)
      throw CorruptEntry(fmt::format("list {} is of no kind of rule", k));
    m.batch = kind == kBatchList;
    m.count = rd.value<uint64_t>();
    m.bytes = rd.text();
    out.lists.push_back(std::move(m));
  }
  if (!rd.done()) throw CorruptEntry("bytes after the last list");
  // The lists read whole on every CPU; the first list's error is the one thrown, as one
  // pass in order would meet it.
  std::vector<std::exception_ptr> errors(out.lists.size());
  parallel_for(out.lists.size(), [&](size_t k) {
    try {
      check_list(out.lists[k], trace);
    } catch (...) {
      errors[k] = std::current_exception();
    }
  });
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

bool save_cut_matches(const Folder& dir, const Key& key, const StoredMatches& stored,
                      std::string* why) {
  return write_entry(dir, kCutMatchesName, EntryKind::CutMatches, key, encode_cut_matches(stored),
                     why);
}

std::optional<StoredMatches> load_cut_matches(const Folder& dir, const Key& key, const Trace& trace,
                                              std::string* why) {
  auto payload = read_entry(dir, kCutMatchesName, EntryKind::CutMatches, key, why);
  if (!payload) return std::nullopt;
  try {
    return decode_cut_matches(*payload, trace);
  } catch (const CorruptEntry& e) {
    if (why) *why = e.what();
    return std::nullopt;
  }
}

}  // namespace cw::cache
