// On the fixtures built by instrument/CMakeLists.txt (testdata/flag_user.c as a PIE and a
// fixed-address executable, testdata/flag_lib.c as a shared object), compiled at -O2.
#include "instrument/flag_scan.h"

#include <doctest/doctest.h>

#include <map>

namespace cw::instrument {
namespace {

std::unique_ptr<ElfImage> must_open(const std::string& path) {
  std::string error;
  auto image = ElfImage::open(path, &error);
  REQUIRE_MESSAGE(image != nullptr, error);
  return image;
}

// "function access" → how many sites, e.g. {"wait_flag read", 2}.
std::map<std::string, int> summary(const std::vector<FlagAccessSite>& sites) {
  std::map<std::string, int> out;
  for (const auto& s : sites) out[s.function + " " + mem_access_name(s.access)]++;
  return out;
}

// Each site's bytes, read again at its file offset, decode to the same instruction.
void check_sites_decode(const ElfImage& image, const X86Decoder& decoder,
                        const std::vector<FlagAccessSite>& sites) {
  for (const auto& s : sites) {
    CAPTURE(s.text);
    auto again = decoder.decode(image.bytes(s.vaddr, s.length), s.vaddr);
    REQUIRE(again.has_value());
    CHECK(again->text == s.text);
    CHECK(image.file_offset(s.vaddr) == s.file_offset);
  }
}

TEST_CASE("rip-relative reads and writes of a global, in a PIE and a fixed-address build") {
  X86Decoder decoder;
  for (const char* path : {CW_FLAG_PIE, CW_FLAG_NOPIE}) {
    CAPTURE(path);
    auto image = must_open(path);
    auto flag = image->find_symbol("shared_flag");
    REQUIRE(flag.has_value());
    auto slots = image->got_slots("shared_flag");
    auto sites = scan_flag_accesses(*image, decoder, flag->vaddr, flag->size, slots);
    std::map<std::string, int> expected = {
        {"set_flag write", 1}, {"read_flag read", 1}, {"wait_flag read", 2}};
    CHECK(summary(sites) == expected);
    for (const auto& s : sites) CHECK_FALSE(s.via_got);
    check_sites_decode(*image, decoder, sites);

    // The 8-byte neighbour just before it has its own accesses, and none of the flag's.
    auto neighbour = image->find_symbol("neighbour");
    REQUIRE(neighbour.has_value());
    auto near = scan_flag_accesses(*image, decoder, neighbour->vaddr, neighbour->size, {});
    std::map<std::string, int> neighbour_expected = {{"bump_neighbour read", 1},
                                                     {"bump_neighbour write", 1}};
    CHECK(summary(near) == neighbour_expected);
  }
}

TEST_CASE("PIC code reaches an extern flag through its GOT slot, also from a hoisted load") {
  X86Decoder decoder;
  auto image = must_open(CW_FLAG_LIB);
  auto slots = image->got_slots("extern_flag");
  REQUIRE(slots.size() == 1);
  // Not defined here: only the slot leads to it.
  auto sites = scan_flag_accesses(*image, decoder, 0, 4, slots);
  std::map<std::string, int> expected = {
      {"lib_set write", 1}, {"lib_read read", 1}, {"lib_wait read", 2}};
  CHECK(summary(sites) == expected);
  for (const auto& s : sites) {
    CHECK(s.via_got);
    CHECK(s.slot_vaddr == slots[0]);
  }
  check_sites_decode(*image, decoder, sites);

  // The library's own preemptible global goes through its own slot, not extern_flag's.
  auto own = image->find_symbol("lib_flag");
  REQUIRE(own.has_value());
  auto own_slots = image->got_slots("lib_flag");
  auto own_sites = scan_flag_accesses(*image, decoder, own->vaddr, own->size, own_slots);
  std::map<std::string, int> own_expected = {{"lib_set_own write", 1}};
  CHECK(summary(own_sites) == own_expected);
}

TEST_CASE("no slots and an address nothing touches: no sites") {
  X86Decoder decoder;
  auto image = must_open(CW_FLAG_LIB);
  CHECK(scan_flag_accesses(*image, decoder, 0, 4, {}).empty());
}

}  // namespace
}  // namespace cw::instrument
