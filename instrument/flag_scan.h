// The instructions of an ELF image that touch a data flag, for probing each one (uprobes
// or inline hooks) instead of watching the flag with a debug register.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "instrument/elf_image.h"
#include "instrument/x86_decoder.h"

namespace cw::instrument {

struct FlagAccessSite {
  uint64_t vaddr = 0, file_offset = 0;
  uint8_t length = 0;
  MemAccess access = MemAccess::None;
  bool via_got = false;
  uint64_t slot_vaddr = 0;  // via_got: the GOT slot holding the flag's address
  std::string function, text;
};

// Every instruction in the image's code that accesses [data_vaddr, data_vaddr+size)
// rip-relatively (or through a register set by lea of an address in it), or — PIC code —
// through a register loaded from one of `got_slots`, each of which holds the address
// data_vaddr stands for (so an access at [reg + d] is the flag's when d < size). A
// register's content is followed through each function's control flow, calls keeping the
// callee-saved ones, so a GOT load hoisted out of a loop still counts. By address.
std::vector<FlagAccessSite> scan_flag_accesses(const ElfImage& image, const X86Decoder& decoder,
                                               uint64_t data_vaddr, uint64_t size,
                                               std::span<const uint64_t> got_slots);

}  // namespace cw::instrument
