// On real files: the fixtures built by instrument/CMakeLists.txt and the system's libc.
#include "instrument/elf_image.h"

#include <dlfcn.h>
#include <doctest/doctest.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

#include "base/temp_dir.h"
#include "instrument/proc_maps.h"
#include "instrument/x86_decoder.h"

namespace cw::instrument {
namespace {

constexpr const char* kLibc = "/usr/lib/x86_64-linux-gnu/libc.so.6";

std::unique_ptr<ElfImage> must_open(const std::string& path) {
  std::string error;
  auto image = ElfImage::open(path, &error);
  REQUIRE_MESSAGE(image != nullptr, error);
  return image;
}

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_CASE("files that are not x86-64 ELF are refused with a reason") {
  std::string error;
  CHECK(ElfImage::open("/nonexistent/cw", &error) == nullptr);
  CHECK(error == "/nonexistent/cw: cannot open: No such file or directory");
  TempDir dir;
  dir.write("text", "not an ELF file at all\n");
  CHECK(ElfImage::open(dir.file("text"), &error) == nullptr);
  CHECK(error == dir.file("text") + ": not an ELF file");
}

TEST_CASE("symbols, file bytes and code of a PIE and a fixed-address executable") {
  for (const char* path : {CW_FLAG_PIE, CW_FLAG_NOPIE}) {
    CAPTURE(path);
    auto image = must_open(path);
    CHECK(image->path() == path);
    CHECK(image->position_independent() == (std::string(path) == CW_FLAG_PIE));

    auto flag = image->find_symbol("shared_flag");
    REQUIRE(flag.has_value());
    CHECK(flag->object);
    CHECK(flag->size == 4);
    auto set_flag = image->find_symbol("set_flag");
    REQUIRE(set_flag.has_value());
    CHECK(set_flag->function);
    CHECK_FALSE(image->find_symbol("no_such_symbol").has_value());
    CHECK_FALSE(image->find_symbol("sched_yield").has_value());  // undefined here

    const ElfSymbol* covering = image->symbol_at(flag->vaddr + 3);
    REQUIRE(covering != nullptr);
    CHECK(covering->name == "shared_flag");
    CHECK(image->symbol_at(set_flag->vaddr + 1)->name == "set_flag");

    // The code is in the file: the bytes are the file's at file_offset.
    auto code = image->bytes(set_flag->vaddr, set_flag->size);
    REQUIRE(code.size() == set_flag->size);
    auto offset = image->file_offset(set_flag->vaddr);
    REQUIRE(offset.has_value());
    auto whole = file_bytes(path);
    CHECK(std::equal(code.begin(), code.end(), whole.begin() + static_cast<long>(*offset)));
    bool in_code = false;
    for (auto [begin, end] : image->code_ranges())
      in_code |= set_flag->vaddr >= begin && set_flag->vaddr < end;
    CHECK(in_code);

    // .bss is memory, not file.
    CHECK(image->bytes(flag->vaddr, 4).empty());
    CHECK(image->contains(flag->vaddr));
    CHECK_FALSE(image->contains(0x7fff00000000));
  }
}

TEST_CASE("a fixed-address executable loads with no bias") {
  auto image = must_open(CW_FLAG_NOPIE);
  CHECK(image->load_bias(0x400000, 0) == 0u);
}

TEST_CASE("GOT slots of PIC code: GLOB_DAT for an extern and for a preemptible global") {
  auto image = must_open(CW_FLAG_LIB);
  auto slots = image->got_slots("extern_flag");
  REQUIRE(slots.size() == 1);
  CHECK(image->got_slots("lib_flag").size() == 1);
  CHECK(image->got_slots("no_such_symbol").empty());

  // lib_set begins by loading the flag's address from that slot.
  auto lib_set = image->find_symbol("lib_set");
  REQUIRE(lib_set.has_value());
  X86Decoder decoder;
  auto first = decoder.decode(image->bytes(lib_set->vaddr, lib_set->size), lib_set->vaddr);
  REQUIRE(first.has_value());
  REQUIRE(first->accessed_memory() != nullptr);
  CHECK(first->accessed_memory()->target == slots[0]);
}

TEST_CASE("libc: names, and the bias of each of its mappings in this process") {
  // Read before opening the image, which maps the whole file once more.
  std::string error;
  auto maps = read_proc_maps(getpid(), &error);
  REQUIRE_MESSAGE(maps.has_value(), error);
  auto image = must_open(kLibc);
  CHECK(image->position_independent());
  auto malloc_symbol = image->find_symbol("malloc");
  REQUIRE(malloc_symbol.has_value());
  CHECK(malloc_symbol->function);
  const ElfSymbol* at = image->symbol_at(malloc_symbol->vaddr);
  REQUIRE(at != nullptr);
  CHECK(at->vaddr == malloc_symbol->vaddr);
  CHECK(at->global);

  void* runtime = dlsym(RTLD_DEFAULT, "malloc");
  REQUIRE(runtime != nullptr);
  const ProcMap* code_map = map_at(*maps, reinterpret_cast<uint64_t>(runtime));
  REQUIRE(code_map != nullptr);
  int libc_maps = 0;
  for (const ProcMap& m : *maps) {
    if (m.path != code_map->path) continue;
    ++libc_maps;
    CAPTURE(m.offset);
    auto bias = image->load_bias(m.start, m.offset);
    REQUIRE(bias.has_value());
    CHECK(*bias + malloc_symbol->vaddr == reinterpret_cast<uint64_t>(runtime));
  }
  CHECK(libc_maps >= 2);  // code and data at least: every one agrees on the bias
}

}  // namespace
}  // namespace cw::instrument
