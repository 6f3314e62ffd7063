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
// in caller-saved registers the callee does not touch. So each path saves what it uses
// (rax, rcx, rdx), and r11, borrowed from the function's entry on, gets the caller's value
// back at exit. At entry the argument registers (rdi rsi rdx rcx r8 r9, rax for varargs, r10
// for a static chain) are intact. The slow path is C compiled with -mgeneral-regs-only and
// saves around the call what C may clobber, so vector and x87 registers are never touched.
//
// The thread's state is reached %fs-relative: rcx holds cw_hook_thread's offset from the
// thread pointer (one load from the GOT), and every access is %fs:FIELD(%rcx).
#include "instrument/hook/thread_state.h"

// Around a call into C from RECORD: saves what C may clobber but rax and rdx (which RECORD's
// caller saves) and aligns the stack; RESTORE_FOR_C undoes it.
.macro SAVE_FOR_C
        pushq   %rbp
        movq    %rsp, %rbp
        pushq   %rsi
        pushq   %rdi
        pushq   %r8
        pushq   %r9
        pushq   %r10
        pushq   %r11
        pushq   %rcx
        andq    $-16, %rsp
.endm
.macro RESTORE_FOR_C
        leaq    -56(%rbp), %rsp
        popq    %rcx
        popq    %r11
        popq    %r10
        popq    %r9
        popq    %r8
        popq    %rdi
        popq    %rsi
        popq    %rbp
.endm

// Appends one event: the TSC (or, where the TSC is not on the kernel's clock,
// CLOCK_MONOTONIC nanoseconds from cw_hook_clock_now: cw_hook_clock_ns set), then the hook's function index and id (adjacent in HookDesc,
// as in log::Event), with the exit bit for an exit. In: rcx = the thread state's offset,
// r11 = HookDesc. Clobbers rax and rdx. Whatever the fast path cannot do (no chunk or a
// full one, the log changed, time to refresh the clock calibration) goes to the slow path
// out of line, which comes back to the end.
.macro RECORD exit
        cmpb    $0, cw_hook_clock_ns(%rip)
        jne     .Lns\@
        rdtsc
        shlq    $32, %rdx
        orq     %rdx, %rax
.Lstamped\@:
        cmpq    cw_hook_recalibrate_at(%rip), %rax
        jae     .Lslow\@
        movq    cw_hook_log_generation(%rip), %rdx
        cmpq    %rdx, %fs:CW_TS_GENERATION(%rcx)
        jne     .Lslow\@
        movl    %fs:CW_TS_USED(%rcx), %edx
        cmpl    %fs:CW_TS_CAPACITY(%rcx), %edx
        jae     .Lslow\@
        shlq    $4, %rdx
        addq    %fs:CW_TS_EVENTS(%rcx), %rdx
        movq    %rax, 0(%rdx)
        movq    CW_DESC_INDEX(%r11), %rax
.if \exit
        btsq    $63, %rax
.endif
        movq    %rax, 8(%rdx)
        // Publish: x86 stores are not reordered with older stores, so this is a release.
        movl    %fs:CW_TS_USED(%rcx), %eax
        incl    %eax
        movl    %eax, %fs:CW_TS_USED(%rcx)
        movq    %fs:CW_TS_PUBLISHED(%rcx), %rdx
        movl    %eax, (%rdx)
.Ldone\@:
        .pushsection .text.unlikely.cw_hook, "ax", @progbits
.Lns\@:
        // rax = cw_hook_clock_now(), with what C may clobber saved but rax and rdx.
        SAVE_FOR_C
        call    cw_hook_clock_now
        RESTORE_FOR_C
        jmp     .Lstamped\@
.Lslow\@:
        // rax = the TSC. cw_hook_record_slow(thread, desc, tsc, exit bit), with what C may
        // clobber saved (rax, rcx, rdx are saved by the caller of this macro; r11 is kept
        // for it).
        SAVE_FOR_C
        movq    %fs:0, %rdi
        addq    %rcx, %rdi
        movq    %r11, %rsi
        movq    %rax, %rdx
.if \exit
        movabsq $0x8000000000000000, %rcx  // log::kExitBit, in the event's second word
.else
        xorl    %ecx, %ecx
.endif
        call    cw_hook_record_slow
        RESTORE_FOR_C
        jmp     .Ldone\@
        .popsection
.endm

        .text
        // 32-byte aligned, and assembled with -mbranches-within-32B-boundaries
        // (CMakeLists.txt): on CPUs with the JCC erratum fix a branch that crosses or ends
        // on a 32-byte boundary is not kept in the uop cache, which costs 1-2 ns per call.
        .p2align 5
        .globl  cw_hook_enter
        .hidden cw_hook_enter
        .type   cw_hook_enter, @function
cw_hook_enter:
        // r11 = HookDesc; 0(%rsp) = the caller's r11; 8(%rsp) = the return address
        pushq   %rax
        pushq   %rcx
        pushq   %rdx
        // now 24(%rsp) = the caller's r11, 32(%rsp) = the return address
        movq    cw_hook_thread@GOTTPOFF(%rip), %rcx
        cmpb    $0, %fs:CW_TS_BUSY(%rcx)
        jne     .Lpass_through
        movl    %fs:CW_TS_DEPTH(%rcx), %eax
        cmpl    $CW_TS_SHADOW_CAPACITY, %eax
        jae     .Lpass_through
        movb    $1, %fs:CW_TS_BUSY(%rcx)
        leal    1(%rax), %edx
        movl    %edx, %fs:CW_TS_DEPTH(%rcx)
        shll    $CW_SHADOW_ENTRY_SHIFT, %eax
        movq    32(%rsp), %rdx
        movq    %rdx, %fs:CW_TS_SHADOW+0(%rcx,%rax)
        leaq    32(%rsp), %rdx
        movq    %rdx, %fs:CW_TS_SHADOW+8(%rcx,%rax)
        movq    %r11, %fs:CW_TS_SHADOW+16(%rcx,%rax)
        movq    24(%rsp), %rdx
        movq    %rdx, %fs:CW_TS_SHADOW+24(%rcx,%rax)
        RECORD  0
        movb    $0, %fs:CW_TS_BUSY(%rcx)
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
        // r11 is free until it gets the caller's value back.
        subq    $8, %rsp
        pushq   %rax
        pushq   %rdx
        pushq   %rcx
        // 24(%rsp): the slot, which will hold the real return address
        movq    cw_hook_thread@GOTTPOFF(%rip), %rcx
        movb    $1, %fs:CW_TS_BUSY(%rcx)
        leaq    24(%rsp), %r11
        movl    %fs:CW_TS_DEPTH(%rcx), %eax
        // The entry for this frame is the topmost with this slot; entries above it belong to
        // frames a longjmp skipped, and are dropped.
.Lfind_frame:
        testl   %eax, %eax
        jz      .Llost_return
        decl    %eax
        movl    %eax, %edx
        shll    $CW_SHADOW_ENTRY_SHIFT, %edx
        cmpq    %r11, %fs:CW_TS_SHADOW+8(%rcx,%rdx)
        jne     .Lfind_frame
        movl    %eax, %fs:CW_TS_DEPTH(%rcx)
        movq    %fs:CW_TS_SHADOW+0(%rcx,%rdx), %rax
        movq    %rax, 24(%rsp)
        movq    %fs:CW_TS_SHADOW+16(%rcx,%rdx), %r11
        pushq   %fs:CW_TS_SHADOW+24(%rcx,%rdx)
        RECORD  1
        movb    $0, %fs:CW_TS_BUSY(%rcx)
        popq    %r11
        popq    %rcx
        popq    %rdx
        popq    %rax
        ret
.Llost_return:
        movq    %r11, %rdi
        andq    $-16, %rsp
        call    cw_hook_lost_return
        ud2
        .size   cw_hook_exit, .-cw_hook_exit

.Lpass_through:
        // A call made while this thread is inside hook code (a signal handler), or with a
        // full shadow stack: run the function without recording it, every register as the
        // caller left it. `ret $8` jumps to the trampoline and drops the saved r11; it
        // costs a mispredicted return, on this rare path only.
        popq    %rdx
        popq    %rcx
        popq    %rax
        pushq   CW_DESC_TRAMPOLINE(%r11)
        movq    8(%rsp), %r11
        ret     $8

        .section .note.GNU-stack,"",@progbits
