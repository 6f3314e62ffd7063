// Decoding the payloads of a binary trace's chunks (docs/trace-format.md) into the
// reader's Trace, once the reader has found them whole and decompressed them.
//
// A file's ids are its writer's: kinds and fields are mapped to the reader's schema by
// name, strings and stacks to the reader's ids through tables. When a chunk was lost, what
// it held reads as a stand-in (?str#ID, no stack), counted for the report's notes.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "trace/binary_format_internal.h"
#include "trace/trace.h"

namespace cw::binary_format {

class ChunkDecoder {
 public:
  // Clears `out` but for its schema, the reader's own, onto which the file's kinds are
  // mapped. `id_bound` is the file's size: ids past what it can hold are damage.
  ChunkDecoder(Trace& out, ReadNotes& notes, uint64_t id_bound);

  // A chunk decompressed to `bytes` more: a file holds that many more ids.
  void count_decompressed(uint64_t bytes) { id_bound_ += bytes; }

  // Each throws Malformed when its payload does not decode.
  void read_schema(Cursor& c);
  void read_strings(Cursor& c);
  void read_stacks(Cursor& c);
  void read_processes(Cursor& c);
  // `chunk` (the chunk's byte offset) and `compressed` name a thread's record if it turns
  // out to contradict an earlier one.
  void read_threads(Cursor& c, uint64_t chunk, bool compressed);
  void read_lost(Cursor& c);
  void read_losses(Cursor& c);
  void read_maps(Cursor& c);
  void read_jit_symbols(Cursor& c);
  // Returns how many events were read. A chunk that does not decode adds none.
  uint64_t read_events(const uint8_t* payload, uint64_t size);

  // After the last chunk: notes what was lost, refuses a file that puts a thread in two
  // processes (TraceFormatError, prefixed with `name`), and indexes and sorts the trace.
  void finish(const std::string& name);

 private:
  // A kind of the file's schema and how its events become the reader's.
  struct FileKind {
    KindId reader = kNoKind;
    std::vector<FieldType> types;      // the file's field types
    std::vector<int> reader_field;     // per file field: index in the reader's kind, or -1
    std::vector<uint32_t> str_fields;  // file field indices holding string ids
    bool identity = false;             // same id, same fields: events copy as they are
  };

  void apply_schema(const std::vector<KindDef>& kinds);
  void ensure_schema();
  StrId map_string(uint64_t file_id);
  StrId map_string_cached(uint64_t file_id);
  StackId map_stack(uint32_t file_id);
  bool copy_events(const uint8_t* events, uint64_t count, const uint8_t* values, uint64_t nvalues);
  void remap_events(const uint8_t* events, uint64_t count, const uint8_t* values, uint64_t nvalues);

  Trace& out_;
  ReadNotes& notes_;
  // The file's bytes plus those decompressed so far: what bounds the ids a file can hold.
  uint64_t id_bound_;
  std::unordered_map<std::string, KindId> reader_kinds_;
  std::vector<FileKind> file_kinds_;
  bool have_schema_ = false, all_identity_ = false;
  // Where each entry of out_.threads was read, to name a contradicting one.
  struct ThreadRecord {
    uint64_t chunk = 0;  // byte offset of its chunk
    uint32_t index = 0;  // in the chunk, from 0
    bool compressed = false;
  };
  std::vector<ThreadRecord> thread_records_;
  std::vector<StrId> str_map_;
  std::unordered_map<uint64_t, StrId> lost_strings_;
  std::vector<StackId> stack_map_;
  bool strings_identity_ = true, stacks_identity_ = true;
  uint64_t substituted_strings_ = 0, events_without_stack_ = 0;
};

}  // namespace cw::binary_format
