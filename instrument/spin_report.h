// From a thread's sampled program counters to the flags its spin loop waits on: the
// candidate frames of each sample (the user pc and the return addresses on its stack),
// the files and functions they fall in, the loops there, and the data those loops' exit
// conditions read, named by symbol — what `causeway flags suggest` prints.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "instrument/elf_image.h"
#include "instrument/pc_sampler.h"
#include "instrument/proc_maps.h"
#include "instrument/x86_decoder.h"

namespace cw::instrument {

// A running process's mapped ELF files, each opened once.
class ProcessImages {
 public:
  ProcessImages(pid_t pid, std::vector<ProcMap> maps);

  struct Location {
    const ElfImage* image = nullptr;
    const ProcMap* map = nullptr;
    uint64_t vaddr = 0;  // the address in the file's own terms
    uint64_t bias = 0;   // runtime = vaddr + bias
  };
  // The ELF file mapped at runtime `address` and the address inside it; nullopt for
  // anonymous memory, [stack], [vdso] and files that are not ELF.
  std::optional<Location> locate(uint64_t address);
  // As locate(), and also for the part of a file's .bss the kernel maps anonymously
  // right after the file's own mappings.
  std::optional<Location> locate_data(uint64_t address);
  // The 8 bytes at runtime `address` of the process (/proc/PID/mem), or nullopt.
  std::optional<uint64_t> read_word(uint64_t address) const;
  // True when the code just before runtime `address` is a call ending there: a return
  // address, not a stray number that happens to point into code.
  bool returns_after_call(const X86Decoder& decoder, uint64_t address);
  const std::vector<ProcMap>& maps() const { return maps_; }

 private:
  const ElfImage* image_for(const ProcMap& map);
  std::optional<Location> locate_in(const ProcMap& map, uint64_t address);

  pid_t pid_;
  std::vector<ProcMap> maps_;
  std::map<std::string, std::unique_ptr<ElfImage>> images_;  // by path; null: unreadable
  std::unordered_map<uint64_t, bool> return_addresses_;      // returns_after_call's answers
};

// The sample's user pc, then every stack word that is a return address, in stack order.
std::vector<uint64_t> candidate_frames(const UserSample& sample, ProcessImages& images,
                                       const X86Decoder& decoder);

struct ExitReadReport {
  uint64_t instruction = 0;  // in the loop's file
  std::string text;
  uint8_t size = 0;
  bool resolved = false;                    // the data was named
  std::string binary, binary_path, symbol;  // the data's file name, path and symbol
  uint64_t data_vaddr = 0, symbol_offset = 0, runtime_address = 0;
  std::string unresolved;  // why it was not named
};

struct LoopReport {
  std::string binary, binary_path, function;
  uint64_t function_vaddr = 0, head = 0, end = 0;  // in the file's own terms
  uint64_t samples = 0;
  std::vector<ExitReadReport> reads;
};

struct SpinReport {
  uint64_t samples = 0;           // samples with user registers
  std::vector<LoopReport> loops;  // most-sampled first
  // Where the samples' frames fell ("file:function" or "file+0xADDR"), most first: what
  // was seen when no loop is found.
  std::vector<std::pair<std::string, uint64_t>> hot_frames;
};

SpinReport analyse_spin(const std::vector<UserSample>& samples, ProcessImages& images,
                        const X86Decoder& decoder);

// The file name of a path ("/usr/bin/cw-prog-spin" → "cw-prog-spin").
std::string file_name(const std::string& path);

}  // namespace cw::instrument
