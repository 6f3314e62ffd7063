#include "instrument/hook/patcher.h"

#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/mman.h>

#include <cstring>

#include "instrument/hook/branch_scan.h"
#include "instrument/hook/event_log.h"
#include "instrument/hook/log_format.h"
#include "instrument/hook/near_memory.h"
#include "instrument/hook/proc_maps.h"
#include "instrument/hook/raw_syscall.h"
#include "instrument/hook/reason.h"
#include "instrument/hook/relocate.h"
#include "instrument/hook/thread_park.h"
#include "instrument/hook/thread_state.h"

namespace cw::hook {
namespace {

constexpr uint32_t kMaxHooks = log::kHookCapacity;  // ids 1 .. kMaxHooks, in the log's table
constexpr uint64_t kPage = 4096;

struct Record {
  uint64_t address;
  uint64_t slot;
  uint32_t index;
  bool installed;
  uint8_t original[kJumpBytes];
  uint8_t jump[kJumpBytes];
  RelocatedPrologue prologue;
};
Record records[kMaxHooks];
uint32_t record_count = 0;
uint64_t moved = 0;
pthread_mutex_t patching = PTHREAD_MUTEX_INITIALIZER;
int membarrier_pid = 0;  // the process that registered (registration does not survive fork)

class Locked {
 public:
  Locked() { pthread_mutex_lock(&patching); }
  ~Locked() { pthread_mutex_unlock(&patching); }
};

bool ensure_membarrier(char* reason, size_t reason_size) {
  const int pid = sys::getpid();
  if (membarrier_pid == pid) return true;
  long result =
      sys::call(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0);
  if (result != 0)
    return refuse(reason, reason_size,
                  "membarrier(REGISTER_PRIVATE_EXPEDITED_SYNC_CORE) failed (error %ld): other "
                  "cores could run stale code after patching",
                  -result);
  membarrier_pid = pid;
  return true;
}

void serialize_cores() {
  sys::call(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0);
}

// The code pages a patch at `address` touches, with the protection to restore.
struct PatchPages {
  uint64_t page[2];
  int prot[2];
  int count;
};

bool patch_pages(const ProcMaps& maps, uint64_t address, PatchPages* pages, char* reason,
                 size_t reason_size) {
  pages->count = 0;
  for (uint64_t page = address & ~(kPage - 1); page < address + kJumpBytes; page += kPage) {
    const Mapping* mapping = maps.find(page);
    if (!mapping || !(mapping->prot & PROT_EXEC))
      return refuse(reason, reason_size, "0x%lx is not in executable memory", address);
    pages->page[pages->count] = page;
    pages->prot[pages->count++] = mapping->prot;
  }
  return true;
}

// Writes `bytes` over `address` while every other thread is parked: one atomic 8-byte
// store when the 5 bytes share an aligned word, so even an unparked reader (a vfork child)
// sees all or nothing. Raw system calls only. Returns the mprotect error, or 0.
long write_code(uint64_t address, const uint8_t* bytes, const PatchPages& pages) {
  for (int i = 0; i < pages.count; ++i) {
    long error = sys::mprotect(reinterpret_cast<void*>(pages.page[i]), kPage,
                               pages.prot[i] | PROT_WRITE | PROT_EXEC);
    if (error) {
      for (int j = 0; j < i; ++j)
        sys::mprotect(reinterpret_cast<void*>(pages.page[j]), kPage, pages.prot[j]);
      return error;
    }
  }
  if ((address & 7) + kJumpBytes <= 8) {
    auto* word = reinterpret_cast<uint64_t*>(address & ~uint64_t{7});
    uint64_t value = __atomic_load_n(word, __ATOMIC_RELAXED);
    uint8_t* view = reinterpret_cast<uint8_t*>(&value);
    for (size_t i = 0; i < kJumpBytes; ++i) view[(address & 7) + i] = bytes[i];
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
  } else {
    auto* code = reinterpret_cast<volatile uint8_t*>(address);
    for (size_t i = 0; i < kJumpBytes; ++i) code[i] = bytes[i];
  }
  for (int i = 0; i < pages.count; ++i)
    sys::mprotect(reinterpret_cast<void*>(pages.page[i]), kPage, pages.prot[i]);
  return 0;
}

// The descriptor, the entry stub (push r11; lea r11,[desc]; jmp cw_hook_enter) and the
// trampoline.
struct SlotImage {
  uint8_t bytes[kSlotBytes];
};

void build_slot(const Record& record, uint32_t id, SlotImage* image) {
  memset(image->bytes, 0xcc, sizeof image->bytes);
  HookDesc desc{record.slot + kSlotTrampolineOffset, record.address, record.index, id};
  memcpy(image->bytes, &desc, sizeof desc);
  uint8_t* stub = image->bytes + kSlotStubOffset;
  const uint64_t stub_at = record.slot + kSlotStubOffset;
  stub[0] = 0x41, stub[1] = 0x53;                  // push r11
  stub[2] = 0x4c, stub[3] = 0x8d, stub[4] = 0x1d;  // lea r11, [rip + to_desc]
  const int32_t to_desc = static_cast<int32_t>(record.slot - (stub_at + 9));
  memcpy(stub + 5, &to_desc, 4);
  const uint64_t enter = reinterpret_cast<uint64_t>(&cw_hook_enter);
  const int64_t to_enter = static_cast<int64_t>(enter - (stub_at + 9 + 5));
  if (to_enter >= INT32_MIN && to_enter <= INT32_MAX) {
    const int32_t rel = static_cast<int32_t>(to_enter);
    stub[9] = 0xe9;
    memcpy(stub + 10, &rel, 4);
  } else {
    const uint8_t jmp_indirect[] = {0xff, 0x25, 0, 0, 0, 0};  // jmp [rip+0]; .quad enter
    memcpy(stub + 9, jmp_indirect, sizeof jmp_indirect);
    memcpy(stub + 15, &enter, 8);
  }
  memcpy(image->bytes + kSlotTrampolineOffset, record.prologue.code, record.prologue.size);
}

// Fills the slot while threads are parked: its page may hold other hooks' live code.
long write_slot(uint64_t slot, const SlotImage& image) {
  void* page = reinterpret_cast<void*>(slot_page(slot));
  long error = sys::mprotect(page, kPage, PROT_READ | PROT_WRITE);
  if (error) return error;
  memcpy(reinterpret_cast<void*>(slot), image.bytes, kSlotBytes);
  return sys::mprotect(page, kPage, PROT_READ | PROT_EXEC);
}

// Parked threads stopped inside the patched bytes continue at the same instruction in the
// trampoline.
void move_parked_threads(const ThreadPark& park, const Record& record) {
  const RelocatedPrologue& prologue = record.prologue;
  for (size_t i = 0; i < park.size(); ++i) {
    ucontext_t* context = park[i].context;
    if (!context) continue;
    greg_t& rip = context->uc_mcontext.gregs[REG_RIP];
    const uint64_t ip = static_cast<uint64_t>(rip);
    if (ip <= record.address || ip >= record.address + prologue.patched) continue;
    for (size_t k = 0; k < prologue.instructions; ++k)
      if (prologue.original_offset[k] == ip - record.address) {
        rip =
            static_cast<greg_t>(record.slot + kSlotTrampolineOffset + prologue.relocated_offset[k]);
        ++moved;
      }
  }
}

Record* find_record(uint64_t address) {
  // The latest: an address whose bytes changed after a removal gets a record of its own.
  for (uint32_t i = record_count; i-- > 0;)
    if (records[i].address == address) return &records[i];
  return nullptr;
}

// An installed hook whose patched bytes share a byte with [address, address + 5).
const Record* overlapping_hook(uint64_t address) {
  for (uint32_t i = 0; i < record_count; ++i) {
    const Record& r = records[i];
    if (r.installed && r.address != address && address < r.address + r.prologue.patched &&
        r.address < address + kJumpBytes)
      return &r;
  }
  return nullptr;
}

}  // namespace

uint32_t install(uint64_t address, size_t size_hint, uint32_t index, char* reason,
                 size_t reason_size) {
  Locked locked;
  if (!ensure_membarrier(reason, reason_size)) return 0;
  Record* record = find_record(address);
  if (record && record->installed) {
    refuse(reason, reason_size, "0x%lx is already hooked (function index %u)", address,
           record->index);
    return 0;
  }
  if (const Record* other = overlapping_hook(address)) {
    refuse(reason, reason_size, "0x%lx is inside the bytes the hook at 0x%lx replaced", address,
           other->address);
    return 0;
  }
  ProcMaps maps;
  if (!maps.load()) {
    refuse(reason, reason_size, "cannot read /proc/self/maps");
    return 0;
  }
  PatchPages pages;
  if (!patch_pages(maps, address, &pages, reason, reason_size)) return 0;
  const Mapping* mapping = maps.find(address);
  if (!(mapping->prot & PROT_READ)) {
    refuse(reason, reason_size, "0x%lx is not readable", address);
    return 0;
  }
  const auto* code = reinterpret_cast<const uint8_t*>(address);
  const size_t available = mapping->end - address;
  // A removed hook whose bytes are unchanged gets its slot back: same trampoline.
  const bool reuse = record && memcmp(code, record->original, kJumpBytes) == 0;
  Record fresh{};
  Record& target = reuse ? *record : fresh;
  if (!reuse) {
    if (record_count == kMaxHooks) {
      refuse(reason, reason_size, "too many hooks (%u)", kMaxHooks);
      return 0;
    }
    target.address = address;
    memcpy(target.original, code, kJumpBytes);
    target.slot = allocate_slot(address, maps, reason, reason_size);
    if (!target.slot) return 0;
    if (!relocate_prologue(code, available, address, size_hint, target.slot + kSlotTrampolineOffset,
                           &target.prologue, reason, reason_size) ||
        find_branch_into_patch(code, available, address, size_hint, target.prologue.patched, reason,
                               reason_size)) {
      release_slot(target.slot);
      return 0;
    }
    const int32_t rel =
        static_cast<int32_t>(target.slot + kSlotStubOffset - (address + kJumpBytes));
    target.jump[0] = 0xe9;
    memcpy(target.jump + 1, &rel, 4);
  }
  target.index = index;
  const uint32_t id = static_cast<uint32_t>((reuse ? record - records : record_count) + 1);
  SlotImage image;
  build_slot(target, id, &image);
  // Before the first event: the log's readers find the address of the hook's events there.
  set_hook_address(id, address);

  ThreadPark park;
  if (!park.stop_all(reason, reason_size)) return 0;
  long error = write_slot(target.slot, image);
  if (!error) error = write_code(address, target.jump, pages);
  if (!error) {
    serialize_cores();
    move_parked_threads(park, target);
  }
  park.release();
  if (error) {
    refuse(reason, reason_size, "mprotect failed at 0x%lx (error %ld)", address, -error);
    return 0;
  }
  serialize_cores();
  target.installed = true;
  if (!reuse) records[record_count++] = target;
  return id;
}

bool remove(uint32_t id, char* reason, size_t reason_size) {
  Locked locked;
  if (id == 0 || id > record_count || !records[id - 1].installed)
    return refuse(reason, reason_size, "hook %u is not installed", id);
  Record& record = records[id - 1];
  if (memcmp(reinterpret_cast<const void*>(record.address), record.jump, kJumpBytes) != 0)
    return refuse(reason, reason_size,
                  "the jump at 0x%lx was overwritten by someone else; left as it is",
                  record.address);
  ProcMaps maps;
  if (!maps.load()) return refuse(reason, reason_size, "cannot read /proc/self/maps");
  PatchPages pages;
  if (!patch_pages(maps, record.address, &pages, reason, reason_size)) return false;
  ThreadPark park;
  if (!park.stop_all(reason, reason_size)) return false;
  // A thread parked in the trampoline stays there: it jumps back to the original code.
  long error = write_code(record.address, record.original, pages);
  if (!error) serialize_cores();
  park.release();
  if (error)
    return refuse(reason, reason_size, "mprotect failed at 0x%lx (error %ld)", record.address,
                  -error);
  serialize_cores();
  record.installed = false;
  return true;
}

uint64_t threads_moved() {
  return __atomic_load_n(&moved, __ATOMIC_RELAXED);
}

void lock_patching() {
  pthread_mutex_lock(&patching);
}
void unlock_patching() {
  pthread_mutex_unlock(&patching);
}

}  // namespace cw::hook
