// Helpers of the kernel tests: the records a Probes has written, copied out of the ring
// buffer, and those of one type as their structs.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "kernel/probes.h"
#include "kernel/records.h"

namespace cw::kernel::testing {

using Record = std::vector<uint8_t>;

// Detaches the programs first, as a recording's end does: what the CPUs still hold staged
// is read only then (kernel/bpf/output.bpf.h).
inline std::vector<Record> drain_all(Probes& probes) {
  probes.detach();
  std::vector<Record> records;
  auto keep = [&](const void* data, size_t size) {
    auto* bytes = static_cast<const uint8_t*>(data);
    records.emplace_back(bytes, bytes + size);
  };
  while (probes.drain(keep) > 0) {
  }
  return records;
}

template <typename T>
std::vector<T> of_type(const std::vector<Record>& records, uint32_t type) {
  std::vector<T> out;
  for (const auto& record : records) {
    cw_rec_header header;
    std::memcpy(&header, record.data(), sizeof(header));
    if (header.type != type) continue;
    REQUIRE(record.size() >= sizeof(T));
    T value;
    std::memcpy(&value, record.data(), sizeof(T));
    out.push_back(value);
  }
  return out;
}

}  // namespace cw::kernel::testing
