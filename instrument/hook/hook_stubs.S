// The shared entry and exit code of every inline hook (docs/hooks.md).
//
// A hooked function's first bytes jump to its generated stub, which pushes r11, loads the
// hook's HookDesc into r11 and jumps to cw_hook_enter: the caller's return address is
// just above the saved r11, the arguments untouched. cw_hook_enter records the entry,
// keeps the return address (and the caller's r11) on the thread's shadow stack, drops both
// from the stack and *calls* the trampoline from the instruction just before cw_hook_exit:
// the call writes cw_hook_exit's address into the very slot the return address occupied
// (so stack arguments do not move) and gives the CPU's return predictor a matching entry.
// When the function returns into cw_hook_exit, the exit is recorded, the shadow entry
// popped, and `ret` goes back to the real caller.
//
// Registers: every register the caller can see is preserved, not only the callee-saved
// ones: a compiler that knows the callee (GCC's -fipa-ra, on by default at -O2) keeps values
// in caller-saved registers the callee does not touch. So the exit path saves what it
// uses, and r11, borrowed from the function's entry on, gets the caller's value back at
// exit. At entry the argument registers (rdi rsi rdx rcx r8 r9, rax for varargs, r10 for a
// static chain) are intact. The slow path is C compiled with -mgeneral-regs-only and saves
// around the call what C may clobber, so vector and x87 registers are never touched.
#include "instrument/hook/thread_state.h"


        .text
        .p2align 4
        .globl  cw_hook_enter
        .hidden cw_hook_enter
        .type   cw_hook_enter, @function
cw_hook_enter:
        // r11 = HookDesc; 0(%rsp) = the caller's r11; 8(%rsp) = the return address
        pushq   %rax
        pushq   %rcx
        pushq   %rdx
        pushq   %rsi
        // now 32(%rsp) = the caller's r11, 40(%rsp) = the return address
        movq    cw_hook_thread@GOTTPOFF(%rip), %rcx
        addq    %fs:0, %rcx
        cmpb    $0, CW_TS_BUSY(%rcx)
        jne     .Lpass_through
        movl    CW_TS_DEPTH(%rcx), %eax
        cmpl    $CW_TS_SHADOW_CAPACITY, %eax
        jae     .Lpass_through
        movb    $1, CW_TS_BUSY(%rcx)
        movl    %eax, %edx
        shll    $CW_SHADOW_ENTRY_SHIFT, %edx
        leaq    CW_TS_SHADOW(%rcx,%rdx), %rdx
        movq    40(%rsp), %rsi
        movq    %rsi, 0(%rdx)
        leaq    40(%rsp), %rsi
        movq    %rsi, 8(%rdx)
        movq    %r11, 16(%rdx)
        movq    32(%rsp), %rsi
        movq    %rsi, 24(%rdx)
        incl    %eax
        movl    %eax, CW_TS_DEPTH(%rcx)
        xorl    %esi, %esi
        call    .Lrecord
        movb    $0, CW_TS_BUSY(%rcx)
        popq    %rsi
        popq    %rdx
        popq    %rcx
        popq    %rax
        addq    $16, %rsp
        // Pushes cw_hook_exit over the real return address (now on the shadow stack).
        call    *CW_DESC_TRAMPOLINE(%r11)
        .size   cw_hook_enter, .-cw_hook_enter

        .globl  cw_hook_exit
        .hidden cw_hook_exit
        .type   cw_hook_exit, @function
cw_hook_exit:
        // The function returned: the slot that held the return address is just below rsp.
        subq    $8, %rsp
        pushq   %rax
        pushq   %rdx
        pushq   %rcx
        pushq   %rsi
        pushq   %rdi
        // 40(%rsp): the slot, which will hold the real return address
        movq    cw_hook_thread@GOTTPOFF(%rip), %rcx
        addq    %fs:0, %rcx
        movb    $1, CW_TS_BUSY(%rcx)
        leaq    40(%rsp), %rdi
        movl    CW_TS_DEPTH(%rcx), %eax
        // The entry for this frame is the topmost with this slot; entries above it belong to
        // frames a longjmp skipped, and are dropped.
.Lfind_frame:
        testl   %eax, %eax
        jz      .Llost_return
        decl    %eax
        movl    %eax, %edx
        shll    $CW_SHADOW_ENTRY_SHIFT, %edx
        leaq    CW_TS_SHADOW(%rcx,%rdx), %rdx
        cmpq    %rdi, 8(%rdx)
        jne     .Lfind_frame
        movl    %eax, CW_TS_DEPTH(%rcx)
        movq    0(%rdx), %rsi
        movq    %rsi, 40(%rsp)
        movq    16(%rdx), %r11
        pushq   24(%rdx)
        movabsq $0x8000000000000000, %rsi  // log::kExitBit, in the event's second word
        call    .Lrecord
        movb    $0, CW_TS_BUSY(%rcx)
        popq    %r11
        popq    %rdi
        popq    %rsi
        popq    %rcx
        popq    %rdx
        popq    %rax
        ret
.Llost_return:
        andq    $-16, %rsp
        call    cw_hook_lost_return
        ud2
        .size   cw_hook_exit, .-cw_hook_exit

.Lpass_through:
        // A call made while this thread is inside hook code (a signal handler), or with a
        // full shadow stack: run the function without recording it, every register as the
        // caller left it. `ret $8` jumps to the trampoline and drops the saved r11; it
        // costs a mispredicted return, on this rare path only.
        popq    %rsi
        popq    %rdx
        popq    %rcx
        popq    %rax
        pushq   CW_DESC_TRAMPOLINE(%r11)
        movq    8(%rsp), %r11
        ret     $8

// Appends one event. In: rcx = thread state, r11 = HookDesc, rsi = 0 (entry) or the exit
// bit of the event's second word (exit).
// Clobbers rax, rdx, rsi; keeps every other register (the slow path saves what C may use).
.Lrecord:
        rdtsc
        shlq    $32, %rdx
        orq     %rdx, %rax
        cmpq    cw_hook_recalibrate_at(%rip), %rax
        jae     .Lrecord_slow
        movq    cw_hook_log_generation(%rip), %rdx
        cmpq    %rdx, CW_TS_GENERATION(%rcx)
        jne     .Lrecord_slow
        movl    CW_TS_USED(%rcx), %edx
        cmpl    CW_TS_CAPACITY(%rcx), %edx
        jae     .Lrecord_slow
        shlq    $4, %rdx
        addq    CW_TS_EVENTS(%rcx), %rdx
        movq    %rax, 0(%rdx)
        // fn_index and hook id, adjacent in HookDesc as in log::Event.
        movq    CW_DESC_INDEX(%r11), %rax
        orq     %rsi, %rax
        movq    %rax, 8(%rdx)
        movl    CW_TS_USED(%rcx), %eax
        incl    %eax
        movl    %eax, CW_TS_USED(%rcx)
        // Publish: x86 stores are not reordered with older stores, so this is a release.
        movq    CW_TS_PUBLISHED(%rcx), %rdx
        movl    %eax, (%rdx)
        ret
.Lrecord_slow:
        pushq   %rbp
        movq    %rsp, %rbp
        pushq   %rdi
        pushq   %r8
        pushq   %r9
        pushq   %r10
        pushq   %r11
        pushq   %rcx
        andq    $-16, %rsp
        movq    %rsi, %rcx
        movq    %rax, %rdx
        movq    %r11, %rsi
        movq    -48(%rbp), %rdi
        call    cw_hook_record_slow
        leaq    -48(%rbp), %rsp
        popq    %rcx
        popq    %r11
        popq    %r10
        popq    %r9
        popq    %r8
        popq    %rdi
        popq    %rbp
        ret

        .section .note.GNU-stack,"",@progbits
