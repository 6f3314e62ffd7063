// Functions with known bytes for inline_hook_test.cc: one per prologue shape a hook must
// relocate (or refuse). Each has a .size, so the test finds its size in the symbol table.
// System V: int arguments in edi, esi; results in eax/rax (xmm0 for doubles).

#define FUNCTION(name) \
        .globl name; .type name, @function; .p2align 4; name:
#define END(name) .size name, .-name

        .text

// push rbp; mov rbp, rsp: the classic frame. 5 * x.
FUNCTION(shape_frame)
        push    %rbp
        mov     %rsp, %rbp
        push    %rbx
        mov     %edi, %ebx
        lea     (%rbx,%rbx,4), %eax
        pop     %rbx
        pop     %rbp
        ret
END(shape_frame)

// A rip-relative load first (6 bytes), starting 5 bytes into an aligned word so the jump
// straddles two words. x + 1000.
        .p2align 4
        .skip   5, 0x90
        .globl shape_rip_load; .type shape_rip_load, @function
shape_rip_load:
        mov     shape_data(%rip), %eax
        add     %edi, %eax
        ret
END(shape_rip_load)

// lea rip-relative first. x + 2000.
FUNCTION(shape_rip_lea)
        lea     shape_table(%rip), %rax
        mov     4(%rax), %eax
        add     %edi, %eax
        ret
END(shape_rip_lea)

// A rip-relative store first; returns x + 5 and leaves x in shape_last.
FUNCTION(shape_rip_store)
        mov     %edi, shape_last(%rip)
        lea     5(%rdi), %eax
        ret
END(shape_rip_store)

// A short jmp (rel8) over code nothing reaches. x + 7.
FUNCTION(shape_short_jmp)
        jmp     1f
        mov     $99, %eax
        ret
1:      lea     7(%rdi), %eax
        ret
END(shape_short_jmp)

// A call rel32 first. x + 11.
FUNCTION(shape_call)
        call    shape_helper
        add     %edi, %eax
        ret
END(shape_call)

FUNCTION(shape_helper)
        mov     $11, %eax
        ret
END(shape_helper)

// A jcc rel8 in the prologue. x >= 0 ? x + 1 : -1.
FUNCTION(shape_jcc)
        test    %edi, %edi
        js      1f
        lea     1(%rdi), %eax
        ret
1:      mov     $-1, %eax
        ret
END(shape_jcc)

// endbr64 first. 2 * x.
FUNCTION(shape_endbr)
        endbr64
        push    %rbp
        mov     %rsp, %rbp
        lea     (%rdi,%rdi), %eax
        pop     %rbp
        ret
END(shape_endbr)

// sub rsp, imm first. x + 3.
FUNCTION(shape_sub_rsp)
        sub     $24, %rsp
        mov     %rdi, 8(%rsp)
        mov     8(%rsp), %rax
        add     $3, %rax
        add     $24, %rsp
        ret
END(shape_sub_rsp)

// A jmp rel32 first (forced 32-bit). x + 13.
FUNCTION(shape_jmp_rel32)
        {disp32} jmp 1f
1:      lea     13(%rdi), %eax
        ret
END(shape_jmp_rel32)

// Eight arguments, two on the stack: the hook must leave them where they are.
// 10 * a7 + a8.
FUNCTION(shape_stack_args)
        push    %rbp
        mov     %rsp, %rbp
        mov     16(%rbp), %rax
        imul    $10, %rax, %rax
        add     24(%rbp), %rax
        pop     %rbp
        ret
END(shape_stack_args)

// A double argument and result in xmm0: the hook must not touch vector registers. 2 * x.
FUNCTION(shape_double)
        push    %rbp
        mov     %rsp, %rbp
        addsd   %xmm0, %xmm0
        pop     %rbp
        ret
END(shape_double)

// read(fd, buffer, n) with the syscall inside the first 5 bytes: a thread blocked in it is
// parked with its instruction pointer there.
FUNCTION(shape_blocking_read)
        xor     %eax, %eax
        syscall
        nop
        ret
END(shape_blocking_read)

// Calls fn(arg) and returns 77: a hooked frame that something may longjmp out of.
FUNCTION(shape_call_through)
        push    %rbp
        mov     %rsp, %rbp
        mov     %rdi, %rax
        mov     %rsi, %rdi
        call    *%rax
        mov     $77, %eax
        pop     %rbp
        ret
END(shape_call_through)

// Returns 42 and touches nothing else.
FUNCTION(shape_leaf)
        mov     $42, %eax
        ret
END(shape_leaf)

// Calls shape_leaf with every other register set to a known value, and returns 1 if all
// of them survive the call, as a compiler that knows shape_leaf's code (GCC's -fipa-ra)
// assumes; else 0.
#define SET(value, reg) mov $value, reg
#define KEPT(value, reg) cmp $value, reg; jne 1f
FUNCTION(shape_register_keeper)
        push    %rbx
        push    %rbp
        push    %r12
        push    %r13
        push    %r14
        push    %r15
        sub     $8, %rsp
        SET(0x1001, %rcx); SET(0x1002, %rdx); SET(0x1003, %rsi); SET(0x1004, %rdi)
        SET(0x1005, %r8); SET(0x1006, %r9); SET(0x1007, %r10); SET(0x1008, %r11)
        SET(0x1009, %rbx); SET(0x100a, %rbp); SET(0x100b, %r12); SET(0x100c, %r13)
        SET(0x100d, %r14); SET(0x100e, %r15)
        SET(0x100f, %rax); movq %rax, %xmm2
        SET(0x1010, %rax); movq %rax, %xmm15
        call    shape_leaf
        cmp     $42, %eax
        jne     1f
        KEPT(0x1001, %rcx); KEPT(0x1002, %rdx); KEPT(0x1003, %rsi); KEPT(0x1004, %rdi)
        KEPT(0x1005, %r8); KEPT(0x1006, %r9); KEPT(0x1007, %r10); KEPT(0x1008, %r11)
        KEPT(0x1009, %rbx); KEPT(0x100a, %rbp); KEPT(0x100b, %r12); KEPT(0x100c, %r13)
        KEPT(0x100d, %r14); KEPT(0x100e, %r15)
        movq    %xmm2, %rax
        KEPT(0x100f, %rax)
        movq    %xmm15, %rax
        KEPT(0x1010, %rax)
        mov     $1, %eax
        jmp     2f
1:      xor     %eax, %eax
2:      add     $8, %rsp
        pop     %r15
        pop     %r14
        pop     %r13
        pop     %r12
        pop     %rbp
        pop     %rbx
        ret
END(shape_register_keeper)

// shape_frame(x + 1) through a tail call.
FUNCTION(shape_tail_call)
        add     $1, %edi
        nop
        nop
        jmp     shape_frame
END(shape_tail_call)

// Counts x down to 0 by jumping back to its own first byte; returns 7.
FUNCTION(shape_loop_to_entry)
        dec     %edi
        jnz     shape_loop_to_entry
        mov     $7, %eax
        ret
END(shape_loop_to_entry)

// Refused shapes.

FUNCTION(shape_ret)
        ret
END(shape_ret)

FUNCTION(shape_xor_ret)
        xor     %eax, %eax
        ret
END(shape_xor_ret)

// A loop whose head is inside the first 5 bytes. x * n (n > 0).
FUNCTION(shape_loop)
        xor     %eax, %eax
1:      add     %edi, %eax
        dec     %esi
        jnz     1b
        ret
END(shape_loop)

FUNCTION(shape_int3)
        int3
        mov     $1, %eax
        ret
END(shape_int3)

// jrcxz has no rel32 form.
FUNCTION(shape_jrcxz)
        jrcxz   1f
        mov     $1, %eax
        ret
1:      xor     %eax, %eax
        ret
END(shape_jrcxz)

        .data
        .p2align 3
        .globl shape_data, shape_table, shape_last
shape_data:
        .long   1000
shape_table:
        .long   0, 2000
shape_last:
        .long   0

        .section .note.GNU-stack,"",@progbits
