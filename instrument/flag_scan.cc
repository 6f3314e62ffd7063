#include "instrument/flag_scan.h"

#include <algorithm>

#include "instrument/code_graph.h"

namespace cw::instrument {
namespace {

bool overlaps(uint64_t a, uint64_t a_size, uint64_t b, uint64_t b_size) {
  return a < b + b_size && b < a + std::max<uint64_t>(a_size, 1);
}

struct Scan {
  const ElfImage& image;
  uint64_t data, size;
  std::span<const uint64_t> slots;
  std::vector<FlagAccessSite> sites;

  bool is_slot(uint64_t vaddr) const {
    return std::find(slots.begin(), slots.end(), vaddr) != slots.end();
  }

  // The site `insn` makes when one of its memory operands reaches the flag.
  void check(const Instruction& insn, const RegisterState& state) {
    for (const MemOperand& m : insn.memory) {
      if (m.access == MemAccess::None || m.segment != 0) continue;
      bool hit = false, via_got = false;
      uint64_t slot = 0;
      if (m.rip_relative) {
        hit = overlaps(m.target, m.size, data, size);
      } else if (m.base != 0 && m.index == 0) {
        const KnownValue* v = known(state, full_register(m.base));
        if (v && v->kind == KnownValue::Kind::Address) {
          hit = overlaps(v->value + static_cast<uint64_t>(m.disp), m.size, data, size);
        } else if (v && v->kind == KnownValue::Kind::LoadedFrom && is_slot(v->value)) {
          hit = m.disp >= 0 && overlaps(static_cast<uint64_t>(m.disp), m.size, 0, size);
          via_got = true;
          slot = v->value;
        }
      }
      if (!hit) continue;
      FlagAccessSite site;
      site.vaddr = insn.address;
      site.file_offset = image.file_offset(insn.address).value_or(0);
      site.length = insn.length;
      site.access = m.access;
      site.via_got = via_got;
      site.slot_vaddr = slot;
      if (const ElfSymbol* f = image.symbol_at(insn.address)) site.function = f->name;
      site.text = insn.text;
      sites.push_back(std::move(site));
      return;
    }
  }

  void scan_stretch(const X86Decoder& decoder, uint64_t begin, uint64_t end) {
    auto code = image.bytes(begin, end - begin);
    if (code.empty()) return;
    CodeGraph graph = build_code_graph(decoder, code, begin);
    std::vector<RegisterState> entry = known_at_block_entry(graph);
    for (size_t b = 0; b < graph.blocks.size(); ++b) {
      RegisterState state = entry[b];
      for (const Instruction& insn : graph.block_instructions(b)) {
        check(insn, state);
        step(state, insn);
      }
    }
  }
};

// The code ranges cut at function symbols, so each stretch is one function (or the code
// between functions) with its own control flow.
std::vector<std::pair<uint64_t, uint64_t>> stretches(const ElfImage& image) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (auto [begin, end] : image.code_ranges()) {
    uint64_t at = begin;
    while (at < end) {
      uint64_t next = end;
      const ElfSymbol* f = image.symbol_at(at);
      if (f && f->function && f->size > 0 && f->vaddr + f->size > at)
        next = std::min(end, f->vaddr + f->size);
      else if (auto following = image.next_function(at))
        next = std::min(end, *following);
      if (next <= at) next = end;
      out.emplace_back(at, next);
      at = next;
    }
  }
  return out;
}

}  // namespace

std::vector<FlagAccessSite> scan_flag_accesses(const ElfImage& image, const X86Decoder& decoder,
                                               uint64_t data_vaddr, uint64_t size,
                                               std::span<const uint64_t> got_slots) {
  Scan scan{image, data_vaddr, size, got_slots, {}};
  for (auto [begin, end] : stretches(image)) scan.scan_stretch(decoder, begin, end);
  std::sort(scan.sites.begin(), scan.sites.end(),
            [](const FlagAccessSite& a, const FlagAccessSite& b) { return a.vaddr < b.vaddr; });
  return std::move(scan.sites);
}

}  // namespace cw::instrument
