// A shared library for recorder/maps_symbolize_test.cc, built with -g -O2 (see CMakeLists.txt):
// an always-inlined function calls a leaf, so the leaf's return address lies in inlined
// code, which symbolisation must name as the inlined function and the one it was inlined
// into, with their lines. A stripped copy and its separate debug file are made from it.
// The functions are hidden (not in .dynsym), so the stripped copy alone names nothing.
// Line numbers are checked by the test: keep CW_FIXTURE_*_LINE in step.

#define HIDDEN __attribute__((visibility("hidden")))

void* volatile cw_fixture_sink;

HIDDEN __attribute__((noinline)) void* cw_fixture_leaf(void) {
  return __builtin_return_address(0);
}

static inline __attribute__((always_inline)) void* cw_fixture_inlined(void) {
  void* r = cw_fixture_leaf();  // CW_FIXTURE_LEAF_CALL_LINE 17
  cw_fixture_sink = r;
  return r;
}

HIDDEN __attribute__((noinline)) void* cw_fixture_outer(void) {
  void* r = cw_fixture_inlined();  // CW_FIXTURE_INLINED_CALL_LINE 23
  __asm__ volatile("" ::: "memory");
  return r;
}

// Returns the address the leaf returns to (inside the inlined code in cw_fixture_outer)
// and the leaf's own address.
void cw_fixture_run(void** return_address, void** leaf) {
  *return_address = cw_fixture_outer();
  // Through an integer: ISO C has no cast from a function pointer to void*.
  *leaf = (void*)(__UINTPTR_TYPE__)&cw_fixture_leaf;
}
