// Fuzzes the binary trace reader twice per input: as given (checksums mostly reject the
// damage) and with every chunk's checksum recomputed, so the chunk decoders see the
// fuzzer's bytes. Only TraceFormatError (an unreadable header) may escape the reader.
#include <xxhash.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "trace/binary_format.h"
#include "trace/text_format.h"

namespace {

namespace bf = cw::binary_format;

std::string with_fixed_checksums(std::string bytes) {
  for (uint64_t pos = bf::kHeaderSize; pos + bf::kChunkHeaderSize <= bytes.size();) {
    uint64_t size;
    std::memcpy(&size, bytes.data() + pos + 8, 8);
    if (size > bytes.size() - pos - bf::kChunkHeaderSize) break;
    uint64_t hash = XXH3_64bits(bytes.data() + pos + bf::kChunkHeaderSize, size);
    std::memcpy(bytes.data() + pos, &bf::kChunkMagic, 4);
    std::memcpy(bytes.data() + pos + 16, &hash, 8);
    pos += bf::kChunkHeaderSize + size;
  }
  return bytes;
}

void read(std::string_view bytes) {
  cw::Trace trace;
  try {
    cw::read_trace_bytes(bytes, trace, "fuzz.cwt");
  } catch (const cw::TraceFormatError&) {
    return;
  }
  // Whatever was read must be usable: every id in range.
  auto check_string = [&](uint64_t id) {
    if (id >= trace.strings.size()) std::abort();
  };
  for (const auto& e : trace.events) {
    const auto& kind = trace.schema.kind(e.kind);
    if (e.kind >= trace.schema.size() || e.stack >= trace.stacks.size() ||
        e.values + kind.fields.size() > trace.values.size())
      std::abort();
    for (size_t f = 0; f < kind.fields.size(); ++f)
      if (kind.fields[f].type == cw::FieldType::Str)
        check_string(trace.value(e, static_cast<int>(f)));
  }
  for (const auto& s : trace.stacks)
    for (cw::StrId id : s.symbols) check_string(id);
  for (const auto& t : trace.threads) check_string(t.comm);
  for (const auto& p : trace.processes) check_string(p.comm), check_string(p.exe);
  (void)cw::write_text_trace(trace);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  read(bytes);
  read(with_fixed_checksums(bytes));
  return 0;
}
