// The derived cache beside a trace (docs/cache.md): what a run computed from a trace and
// a set of packs, kept so that the next run with the same inputs loads it instead of
// computing it again (the aim: a re-run after a rule edit in under a second).
//
// An entry is one file: a header (magic, format version, the entry's kind, its key, the
// payload's size and checksum: BlockHasher) and the payload. A file whose header, key, size or
// checksum does not match is a miss, never trusted: the caller builds afresh and overwrites it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/cache/cache_dir.h"
#include "engine/cache/checked_entries.h"
#include "engine/diagnosis/segment_profile.h"
#include "engine/diagnosis/symptom.h"
#include "engine/graph/builder.h"
#include "rules/ruleset.h"
#include "trace/binary_format.h"
#include "trace/trace.h"

namespace cw::cache {

// What an entry was derived from. Every part must be equal for a hit.
struct Key {
  uint64_t trace = 0;    // the trace file's content (trace_key)
  uint64_t packs = 0;    // the packs loaded, in load order (packs_key)
  uint64_t options = 0;  // what else changes the result (options_key)
  uint64_t engine = 0;   // this causeway's build (engine_key)
  bool operator==(const Key&) const = default;
  std::string hex() const;  // a file name part: 16 hex digits over all four
};

// The trace file's content, cheaply: its size, the file header and every chunk header (each
// carries the XXH3-64 of its payload, so a payload written differently has another header).
// A file that is not the binary form (text, perf script) or whose chunks stop parsing is
// hashed whole from there on. nullopt when the file cannot be read.
std::optional<uint64_t> trace_key(const std::string& path);

// The packs' content in load order: each pack's id and the text of each of its files as
// loaded (Lua hooks are written inside them). Not their paths: a copied pack is the same.
uint64_t packs_key(const rules::RuleSet& rules);

// The rules whose work a rebuild of the cuts reuses (engine::BuildOptions::reuse): the
// links, the edge and flag rules and the `peers` splits, as compiled (not where they are
// written: a rule added above them moves them in their file). Graphs of packs whose
// links_key is equal differ at most in their cut rules. The Lua hooks' code counts (an edge
// rule may call one). nullopt when a cut rule calls a hook (always built whole).
std::optional<uint64_t> links_key(const rules::RuleSet& rules);

// Everything else a graph depends on: the Lua limits, the trace's form as asked (--format),
// and the names symbolisation gave the stack frames this run (they come from the files on
// this machine, not from the trace: a rebuilt library names its frames differently).
uint64_t options_key(const engine::BuildOptions& options, std::string_view format,
                     const Trace& trace);

// This executable: the GNU build-id of /proc/self/exe, else its size, modification time and
// inode (they change with every link). Computed once.
uint64_t engine_key();

// Entry kinds, stored in the header: a file of one kind is never read as another.
enum class EntryKind : uint32_t {
  Graph = 1,
  TraceArrays = 2,
  ThreadIndex = 3,
  Hang = 4,
  Base = 5,
  CutMatches = 6,
  EventNames = 7,
  Checked = 8  // checked_entries.h
};

inline constexpr char kMagic[8] = {'C', 'W', 'C', 'A', 'C', 'H', 'E', '\0'};
// Bump when any entry's payload layout changes (or Segment, Edge, BuildStats change shape).
// 2: graphs keep their peers cuts; 3: a hang's profile keeps its uninterruptible time;
// 4: a segment's or edge's rule kind is the table's (dsl/rule_kinds.h), no rule 255;
// 5: a peers cut keeps the link end before it (PeerCut::since); 6: cut matches as varints;
// 7: a hang entry keeps its candidate threads' ranks; 8: checksums of blocks
// (BlockHasher); 9: a graph keeps its neighbour edges as one byte per segment; 10: a hang's
// profile keeps when the last block of its longest wait began; 11: the trace arrays keep
// their markers.
inline constexpr uint32_t kFormatVersion = 11;
inline constexpr size_t kHeaderSize = 64;
// Graph entries kept per trace (least recently used evicted): the cold run's entry is still
// there when the rule added since is removed again.
inline constexpr size_t kGraphEntries = 4;

// Hang entries kept per trace (least recently used evicted): one per request (`--hang`,
// `--min-hang`, a thread name) and graph.
inline constexpr size_t kHangEntries = 16;

// Where a trace's entries are: cache_dir() (engine/cache/cache_dir.h). Every function
// below takes that folder, opened once, and works relative to it.

// False when CAUSEWAY_CACHE is "off", "0", "no" or "false".
bool enabled_by_environment();

// Writes `payload` as the entry `name` of `dir` atomically (Folder::write_file). False
// with `why` set when it cannot. In the user's cache folder, least recently used entries
// then go until the folder is under its cap (size_cap()).
bool write_entry(const Folder& dir, std::string_view name, EntryKind kind, const Key& key,
                 std::string_view payload, std::string* why = nullptr);
// The same with the payload in parts, written one after the other (no copy of large arrays).
bool write_entry_parts(const Folder& dir, std::string_view name, EntryKind kind, const Key& key,
                       const std::vector<std::string_view>& parts, std::string* why = nullptr);
// The payload of the entry `name` of `dir` (marked used), or nullopt with `why` set:
// missing (""), a link or not this user's file, too short, not a cache file, another
// format version or kind, another key, truncated, checksum mismatch.
std::optional<std::string> read_entry(const Folder& dir, std::string_view name, EntryKind kind,
                                      const Key& key, std::string* why = nullptr);

// A payload that does not decode, or names what its tables do not have: a checksum says
// that the bytes are those written, not that they are sane (a layout changed without a
// version bump, a checksum that collides, an entry crafted with its checksum recomputed).
// Decoders check every index an entry holds against the table it indexes (the trace's
// events, strings and stacks, the graph's segments, the packs' rules), so that what uses a
// decoded entry never reads out of range: a bad entry is a miss, and the caller rebuilds.
struct CorruptEntry : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string encode_graph(const engine::BuildResult& result);
// Throws CorruptEntry. The csr is rebuilt from the edges (a counting sort: cheap).
// `trace` and `rules` are those the graph is for (its key's): its events, segments and
// rules are checked against them. `for_reuse`: for engine::BuildOptions::reuse, which
// reads the edges, segments, counts and peers cuts: without the csr, and with only the
// bounds of its segments' events checked (not their threads); its cut rules may then
// differ from `rules`.
engine::BuildResult decode_graph(std::string_view payload, const Trace& trace,
                                 const rules::RuleSet& rules, bool for_reuse = false);

// The file name of the graph entry for `key`.
std::string graph_entry_name(const Key& key);

// Loads the graph entry of `key` from `dir`; marks it used (for eviction). nullopt with
// `why` on a miss ("" when there is simply no entry yet).
// `trace` and `rules` as for decode_graph.
std::optional<engine::BuildResult> load_graph(const Folder& dir, const Key& key, const Trace& trace,
                                              const rules::RuleSet& rules,
                                              std::string* why = nullptr, bool for_reuse = false);
// Saves it and evicts the least recently used graph entries beyond kGraphEntries (their
// hang entries with them). Its over-connections must be counted (engine::
// fill_over_connections; std::logic_error otherwise): a graph loaded has them.
bool save_graph(const Folder& dir, const Key& key, const engine::BuildResult& result,
                std::string* why = nullptr);

// ---- the trace's decoded arrays ----

// A trace's events and field values as the reader decoded them, mapped from the cache, and
// the reader's report; the small chunks (strings, stacks, threads, …) are read from the
// trace itself (read_trace_without_events), which must then give `strings` strings and
// `stacks` stacks, as the read that saved them did.
struct TraceArrays {
  Column<Event> events;  // views of the mapped entry (copy-on-write)
  Column<uint64_t> values;
  ReadReport report;
  uint64_t strings = 0, stacks = 0;
  std::vector<uint32_t> markers;  // the events of kind "marker", in order (Trace::markers_found)
  CheckedOnce once;  // whether an earlier run checked the file in full (checked_entries.h)
};

// The one trace arrays entry of a cache folder (a new trace content overwrites it).
inline constexpr std::string_view kTraceArraysName = "trace.cwa";

// The arrays are kept as they are in memory, so that a run maps them: an entry 4.5 to 6.6
// times the size of the (zstd) trace. Kept compressed, it would be about the trace's size
// and take about as long to load as decoding the trace (bench/RESULTS.md), so it is kept
// uncompressed or not at all: not for a trace whose events and values take less than
// this (about 1.4 M events), whose warm runs take a few tenths of a second longer without
// it (docs/cache.md, "Size"). The thread index, derived from the same events, goes with
// them.
inline constexpr uint64_t kDefaultEventsMin = uint64_t{64} << 20;
// CAUSEWAY_CACHE_EVENTS_MIN (a size as CAUSEWAY_CACHE_MAX takes it; 0: always), else
// kDefaultEventsMin.
uint64_t events_min();
// Whether the arrays of a trace of `events` events and `values` field values (their bytes
// in memory: what the entry would weigh) are kept, with the trace's thread index.
bool keeps_trace_arrays(uint64_t events, uint64_t values);
// Saves `trace`'s arrays, page aligned, with `report`. Only for a clean read (nothing
// skipped): a damaged file's events depend on the strings lost with it.
bool save_trace_arrays(const Folder& dir, const Key& key, const Trace& trace,
                       const ReadReport& report, std::string* why = nullptr);
// The same from the arrays and the counts of strings and stacks as read (the caller may
// save in the background while symbolisation adds strings).
// `markers`: the events of kind "marker" (marker_events()).
bool save_trace_arrays(const Folder& dir, const Key& key, const Column<Event>& events,
                       const Column<uint64_t>& values, uint64_t strings, uint64_t stacks,
                       const std::vector<uint32_t>& markers, const ReadReport& report,
                       std::string* why = nullptr);
// Reads everything of the binary trace at `path` but its events chunks (events and values
// stay empty): the chunks are walked by their headers and the others handed to the reader.
// nullopt when a chunk header does not parse (a damaged file: read it whole instead).
std::optional<ReadReport> read_trace_without_events(const std::string& path, Trace& out);
// Maps the entry (MAP_PRIVATE: writes through the columns never reach the file) after
// checking its header, key and checksum; nullopt with `why` as load_graph. Its events are
// not checked yet: check_trace_arrays does, once the rest of the trace is read. An entry
// an earlier run checked in full, unchanged since (`once.before`), is not hashed: its
// caller skips check_trace_arrays, and records a check it made (record_checked).
std::optional<TraceArrays> load_trace_arrays(const Folder& dir, const Key& key,
                                             std::string* why = nullptr);
// The arrays of the trace arrays entry whose whole file (header and payload, page aligned)
// is the `size` bytes at `entry`, which `keep` keeps; throws CorruptEntry when they do not
// lie inside it.
TraceArrays decode_trace_arrays(const std::shared_ptr<const void>& keep, char* entry,
                                uint64_t size);
// Throws CorruptEntry unless every event of `arrays` is one a read of the trace could have
// made, against `tables` (the trace read without its events, read_trace_without_events):
// its kind in the schema, its field values inside the values, its stack and string fields
// naming stacks and strings the trace has, in time order. `strings` and `stacks` must be
// the trace's counts. Its markers must be the events of kind "marker", in order.
void check_trace_arrays(const TraceArrays& arrays, const Trace& tables);
// The same against a schema and counts of strings and stacks.
void check_trace_arrays(const TraceArrays& arrays, const Schema& schema, uint64_t strings,
                        uint64_t stacks);
// After save_trace_arrays: the entry loaded and checked as the next run would (from the
// page cache, in the copy that saved it, once the kernel's clock is past its change time),
// and recorded as checked in full (checked_entries.h), so that the next run does not check
// it. Nothing is recorded when the check fails.
void check_saved_trace_arrays(const Folder& dir, const Key& key, const Schema& schema,
                              uint64_t strings, uint64_t stacks);

// ---- the per-thread event index of diagnosis ----

// The one thread index entry of a cache folder, keyed like the trace arrays (the index
// depends on the events only): each thread's events, switches and system calls
// (engine::ThreadEvents), page aligned, mapped back instead of made by a pass over every
// event.
inline constexpr std::string_view kThreadIndexName = "threads.cwa";
bool save_thread_index(const Folder& dir, const Key& key, const engine::ThreadEvents& index,
                       std::string* why = nullptr);
// nullopt with `why` as load_graph; an index whose offsets do not hold together, or whose
// lists name events past the trace's `events` or out of order, is a miss.
std::optional<engine::ThreadEvents> load_thread_index(const Folder& dir, const Key& key,
                                                      uint64_t events, std::string* why = nullptr);
// The index in the thread index entry whose whole file (header and payload, page aligned)
// is the `size` bytes at `entry`, which `keep` keeps, checked against a trace of `events`
// events; throws CorruptEntry. `lists_checked`: as ThreadEvents's.
engine::ThreadEvents decode_thread_index(const std::shared_ptr<const void>& keep, char* entry,
                                         uint64_t size, uint64_t events,
                                         bool lists_checked = false);

// ---- the symptom found on a graph ----

// A hang entry belongs to the graph entry of `graph` (it goes when that one is evicted) and
// to one request: its key is the graph's with the request folded into `options`.
Key hang_key(const Key& graph, const engine::SymptomRequest& request);
std::string hang_entry_name(const Key& graph, const Key& hang);
std::string encode_found_hang(const engine::FoundHang& found);
// Throws CorruptEntry, also when the hang names segments `graph` does not have (or not of
// its thread) or events and strings `trace` does not have.
engine::FoundHang decode_found_hang(std::string_view payload, const Trace& trace,
                                    const engine::Graph& graph);
// Saves it and evicts the least recently used hang entries beyond kHangEntries.
bool save_hang(const Folder& dir, const Key& graph, const engine::SymptomRequest& request,
               const engine::FoundHang& found, std::string* why = nullptr);
// `trace` and `graph` (the graph of the key `graph_key`) as for decode_found_hang.
std::optional<engine::FoundHang> load_hang(const Folder& dir, const Key& graph_key,
                                           const engine::SymptomRequest& request,
                                           const Trace& trace, const engine::Graph& graph,
                                           std::string* why = nullptr);
// The ranks of the candidate threads (engine::ThreadRank) kept in the hang entry of the graph
// of `graph_key` for `request`: for a search of another graph with the same edges. Checked
// against `trace`; their segments are checked where they are reused.
std::optional<std::vector<engine::ThreadRank>> load_thread_ranks(
    const Folder& dir, const Key& graph_key, const engine::SymptomRequest& request,
    const Trace& trace, std::string* why = nullptr);

// ---- graphs to rebuild the cuts of ----

// A base entry: under the key {trace, links_key, options, engine} (a "base"), the key of
// the last graph saved whose packs had that links_key. A run whose packs miss the graph
// cache but hit a base rebuilds only the cuts, reusing that graph's edges.
std::string base_entry_name(const Key& base);
bool save_base(const Folder& dir, const Key& base, const Key& graph, std::string* why = nullptr);
// The key a base entry's payload names; throws CorruptEntry.
Key decode_base(std::string_view payload);
// The graph the base entry names, loaded for reuse (its key in `graph`) and checked against
// `trace` and `rules` as decode_graph does; nullopt with `why` when there is none, or it
// names a graph of other inputs, or that graph's entry is gone or damaged.
std::optional<engine::BuildResult> load_base(const Folder& dir, const Key& base, const Trace& trace,
                                             const rules::RuleSet& rules, Key* graph,
                                             std::string* why = nullptr);

// ---- the events by kind and name ----

// The one event names entry of a cache folder, keyed like the thread index (it depends on
// the events only): every event listed under its kind and name (engine/graph/event_names.h),
// so that a rule added is evaluated at the events it can match. Made by the run that builds
// a trace's graph, in its copy that saves the graph.
inline constexpr std::string_view kEventNamesName = "names.cwa";
std::string encode_event_names(const engine::EventNames& names);
// Throws CorruptEntry unless the lists lie inside the payload, no kind and name is listed
// twice, and they hold `events` events in all (a list's own events are checked when read).
engine::EventNames decode_event_names(std::string_view payload, uint64_t events);
bool save_event_names(const Folder& dir, const Key& key, const engine::EventNames& names,
                      std::string* why = nullptr);
// nullopt with `why` as load_graph.
std::optional<engine::EventNames> load_event_names(const Folder& dir, const Key& key,
                                                   uint64_t events, std::string* why = nullptr);
// Whether the folder holds an event names entry of `key` (its header alone read).
bool has_event_names(const Folder& dir, const Key& key);

// ---- where cut rules matched ----

// The one cut matches entry of a cache folder (engine/graph/cut_matches.h): per cut rule
// seen on this trace, by its cut_rule_key, where it matched. Keyed {trace, 0, options,
// engine}: a rule's matches depend on the trace as read and the rule alone.
inline constexpr std::string_view kCutMatchesName = "matches.cwm";

// A cut rule's matches depend on what of it: for a split, its kind, `where` and cut place;
// for a batch, its loop (`within`), item, `per` and cut place. Not its name, neighbour,
// `loop` or priority (they act in the replay, not in the matching).
uint64_t cut_rule_key(const rules::SplitRule& rule);
uint64_t cut_rule_key(const rules::BatchRule& rule);

// Rules' matches by their cut_rule_key.
struct StoredMatches {
  std::vector<uint64_t> keys;
  std::vector<engine::CutMatches> lists;  // each known
  // The matches of `rules`'s cut rules among them (null where none).
  engine::KnownCutMatches for_rules(const rules::RuleSet& rules) const;
};

// The lists `found` holds for `rules` (a build's BuildResult::matches) and then those of
// `before` for rules not among them, while the whole stays under twice the size of the
// current rules' lists (a rule removed again is found there; rules edited long ago go).
StoredMatches merge_matches(const rules::RuleSet& rules, engine::CutMatchSet&& found,
                            StoredMatches&& before);
std::string encode_cut_matches(const StoredMatches& stored);
// Throws CorruptEntry unless every list is in event order and names events of `trace`
// (a cut place on the same thread as its match, a loop at an opener before it).
StoredMatches decode_cut_matches(std::string_view payload, const Trace& trace);
bool save_cut_matches(const Folder& dir, const Key& key, const StoredMatches& stored,
                      std::string* why = nullptr);
std::optional<StoredMatches> load_cut_matches(const Folder& dir, const Key& key, const Trace& trace,
                                              std::string* why = nullptr);

}  // namespace cw::cache
