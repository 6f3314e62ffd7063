// Large arrays on transparent huge pages. Building a graph fills hundreds of MB the
// process never touched before; each 4 KiB page of it costs a page fault, and on some
// machines a fault costs far more than the bytes written into it (14 µs on a PVM guest,
// where a KVM guest with EPT takes 1: bench/RESULTS.md, "The rule edit loop on this VM").
// A machine whose THP setting is `madvise` gives huge pages only to memory that asks for
// them; glibc's malloc asks for its mappings when its tunable glibc.malloc.hugetlb is 1
// (glibc 2.35 and later; older ones ignore it), and reads that tunable only as the process
// starts. So a command that builds a graph starts itself again, once, with the tunable set,
// and puts the environment back as it was before anything it runs can see it.
#pragma once

#include <string>
#include <string_view>

namespace cw {

// Whether a machine whose /sys/kernel/mm/transparent_hugepage/enabled reads `setting`
// gives huge pages only to memory that asks for them ("always [madvise] never").
bool huge_pages_on_request(std::string_view setting);

// GLIBC_TUNABLES with malloc's huge pages asked for, from its value `current` (null: not
// set); empty when `current` sets glibc.malloc.hugetlb already (the user's choice stands).
std::string tunables_with_huge_pages(const char* current);

// At the start of main, before any thread: starts this program again (execv of
// /proc/self/exe with the same arguments) with malloc's huge pages asked for, when the
// machine gives huge pages on request, the user did not choose otherwise
// (CAUSEWAY_NO_HUGE_PAGES set to anything but "" or "0", or GLIBC_TUNABLES naming the tunable) and
// this is not the restarted process. The restarted process puts GLIBC_TUNABLES back as it was.
// Returns when nothing is done or the start failed (the command then runs as it is).
void restart_with_huge_pages(char** argv);

// Whether this process is the one restart_with_huge_pages started (and so asks for them).
bool restarted_with_huge_pages();

}  // namespace cw
