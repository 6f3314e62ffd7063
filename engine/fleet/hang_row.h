// One hang of one trace as a fleet's store keeps it: where and when it was recorded,
// what the diagnosis found, the signature, and the packs that found it (docs/fleet.md,
// "The schema"). The same columns in SQLite and ClickHouse.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "engine/diagnosis/diagnose.h"
#include "engine/fleet/signature.h"
#include "engine/graph/graph.h"
#include "rules/ruleset.h"
#include "trace/trace.h"

namespace cw::fleet {

struct HangRow {
  std::string host;         // where the trace was recorded
  std::string trace;        // its path as given
  int64_t recorded_at = 0;  // Unix seconds the trace was last written (its end)
  double hang_start = 0;    // seconds since the recording started
  double hang_seconds = 0;  // the hang's length
  HangSummary summary;      // program, version, the wait, the root cause, the path's shape
  std::string root_what;    // the report's words for the root cause (with times)
  std::string path;         // the path with each thread's pid and tid
  uint32_t questions = 0;   // questions the diagnosis answered itself (--auto)
  std::string queries;      // every question and its answer, as debug --json's "queries"
  std::string packs;        // "id@version" of every pack loaded, comma-separated
  std::string signature;    // signature_id(signature_text)
  std::string signature_text;
  int64_t diagnosed_at = 0;  // Unix seconds
  std::string causeway;      // the causeway version that diagnosed it
};

// A column of the store: its name, its type in SQLite and in ClickHouse, what it holds.
struct Column {
  std::string_view name, sqlite_type, clickhouse_type, doc;
};
// The columns in their order (the tables' and the rows' order).
const std::vector<Column>& columns();

// The row for diagnosis `d`; host, trace, recorded_at and diagnosed_at are the caller's.
HangRow make_row(const Trace& trace, const engine::Graph& graph, const engine::ThreadEvents& events,
                 const rules::RuleSet& rules, const engine::Diagnosis& d);

// The row as one JSON object keyed by column name (ClickHouse's JSONEachRow, `--json`).
nlohmann::json row_json(const HangRow& row);
// The row read back from row_json's form; throws std::invalid_argument naming the first
// missing or mistyped column.
HangRow row_from_json(const nlohmann::json& j);

}  // namespace cw::fleet
