/* entries.S - the register-preserving entries (x86-64 SysV): one per declared exit and one per
 * loader function the shim watches (dlopen, dlmopen, dlsym, dlvsym). Redirected calls land
 * here with the caller's frame as it was; an entry saves every argument register (rdi rsi rdx
 * rcx r8 r9, rax: a variadic call's vector count, xmm0-7) and calls into C (declared.c).
 *
 * A loader entry then puts them back and TAIL-JUMPS to the real function with the caller's
 * return address untouched: dlopen's RUNPATH and $ORIGIN and dlsym's RTLD_NEXT read it.
 * The shim also exports the loader entries under the functions' own names (EXPORT below).
 *
 * A declared exit whose call is counted CALLS the real function, to see it end: the caller's
 * stack arguments (FBC_DECL_STACK_BYTES of them, whatever the signature; declared.c says
 * whether that much lies within the thread's stack) are copied below the entry's own frame,
 * where the callee expects them, the registers are put back, and after the call the return
 * registers (rax rdx xmm0 xmm1) are kept across the C side that adds the time. The caller's
 * return address is never replaced: a longjmp or a C++ exception out of the function passes
 * through the entry's frame as through any frame with unwind information (that call's time
 * is not added; its count is), and unwinders see the caller. A call not counted, or whose
 * stack arguments cannot be copied safely, is a tail jump as for a loader entry.
 *
 * A declared exit's fast path (the thread does not record, no process-wide scope): one
 * thread-local read, one flag, the jump. r10 and r11 are scratch at a call (no argument is
 * passed in them); r11 carries the entry's index. */
#include "entries.h"

        .text

/* Saves the argument registers at off(%rsp) below a standard frame (rbp: the caller's rsp - 8,
 * as the unwinders and the shim's frame-pointer walk expect) of `size` bytes, the stack
 * aligned for the C call. */
        .macro SAVE size=192, off=0
        pushq   %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        movq    %rsp, %rbp
        .cfi_def_cfa_register %rbp
        subq    $\size, %rsp
        andq    $-16, %rsp
        movq    %rdi, \off+0(%rsp)
        movq    %rsi, \off+8(%rsp)
        movq    %rdx, \off+16(%rsp)
        movq    %rcx, \off+24(%rsp)
        movq    %r8, \off+32(%rsp)
        movq    %r9, \off+40(%rsp)
        movq    %rax, \off+48(%rsp)
        movq    %r11, \off+56(%rsp)
        movaps  %xmm0, \off+64(%rsp)
        movaps  %xmm1, \off+80(%rsp)
        movaps  %xmm2, \off+96(%rsp)
        movaps  %xmm3, \off+112(%rsp)
        movaps  %xmm4, \off+128(%rsp)
        movaps  %xmm5, \off+144(%rsp)
        movaps  %xmm6, \off+160(%rsp)
        movaps  %xmm7, \off+176(%rsp)
        .endm

/* Puts the argument registers back from off(%rsp). */
        .macro ARGS off=0
        movq    \off+0(%rsp), %rdi
        movq    \off+8(%rsp), %rsi
        movq    \off+16(%rsp), %rdx
        movq    \off+24(%rsp), %rcx
        movq    \off+32(%rsp), %r8
        movq    \off+40(%rsp), %r9
        movq    \off+48(%rsp), %rax
        movq    \off+56(%rsp), %r11
        movaps  \off+64(%rsp), %xmm0
        movaps  \off+80(%rsp), %xmm1
        movaps  \off+96(%rsp), %xmm2
        movaps  \off+112(%rsp), %xmm3
        movaps  \off+128(%rsp), %xmm4
        movaps  \off+144(%rsp), %xmm5
        movaps  \off+160(%rsp), %xmm6
        movaps  \off+176(%rsp), %xmm7
        .endm

/* Puts the argument registers back and leaves the frame (the code after it is outside it). */
        .macro RESTORE off=0
        ARGS    \off
        movq    %rbp, %rsp
        popq    %rbp
        .cfi_def_cfa %rsp, 8
        .endm

/* A table of n entries of FBC_ENTRY_SIZE bytes, entry i: r11 = i, then to common. */
        .macro TABLE name, n, common
        .globl  \name
        .hidden \name
        .type   \name, @function
        .p2align 4
\name:
        .cfi_startproc
        .set    i, 0
        .rept   \n
        .p2align 4
        endbr64
        movl    $i, %r11d
        jmp     \common
        .set    i, i + 1
        .endr
        .cfi_endproc
        .size   \name, . - \name
        .endm

        TABLE fbc_decl_entries, FBC_DECL_MAX, decl_common
        TABLE fbc_dl_entries, FBC_DL_ENTRIES, dl_common

/* The slow path's frame, from rsp up: the copied stack arguments, the saved registers (the
 * return registers after the call), the fbc_call the C side fills for the call's end. */
#define DECL_REGS FBC_DECL_STACK_BYTES
#define DECL_CALL (DECL_REGS + 192)
#define DECL_FRAME (DECL_CALL + FBC_DECL_CALL_BYTES)

        .p2align 4
        .type   decl_common, @function
decl_common:
        .cfi_startproc
        movq    fbc_t@gottpoff(%rip), %r10
        cmpl    $FBC_T_OFF_VALUE, %fs:FBC_T_STATE_OFFSET(%r10)
        jne     1f
        cmpb    $0, fbc_decl_forced(%rip)
        jne     1f
        leaq    fbc_decl_defs(%rip), %r10
        jmp     *(%r10,%r11,8)
1:      SAVE    DECL_FRAME, DECL_REGS
        movl    %r11d, %edi
        leaq    DECL_CALL(%rsp), %rsi
        leaq    16(%rbp), %rdx
        call    *fbc_decl_enter_fn(%rip)
        testl   %eax, %eax
        jz      2f
        /* Counted: the stack arguments below (unrolled 16-byte moves: a string move's start-up
         * costs more than the copy), the registers back, the call. */
        .set    off, 0
        .rept   FBC_DECL_STACK_BYTES / 64
        movdqu  16+off(%rbp), %xmm8
        movdqu  32+off(%rbp), %xmm9
        movdqu  48+off(%rbp), %xmm10
        movdqu  64+off(%rbp), %xmm11
        movdqa  %xmm8, off(%rsp)
        movdqa  %xmm9, 16+off(%rsp)
        movdqa  %xmm10, 32+off(%rsp)
        movdqa  %xmm11, 48+off(%rsp)
        .set    off, off + 64
        .endr
        ARGS    DECL_REGS
        leaq    fbc_decl_defs(%rip), %r10
        call    *(%r10,%r11,8)
        movq    %rax, DECL_REGS+0(%rsp)
        movq    %rdx, DECL_REGS+8(%rsp)
        movaps  %xmm0, DECL_REGS+16(%rsp)
        movaps  %xmm1, DECL_REGS+32(%rsp)
        leaq    DECL_CALL(%rsp), %rdi
        call    *fbc_decl_leave_fn(%rip)
        movq    DECL_REGS+0(%rsp), %rax
        movq    DECL_REGS+8(%rsp), %rdx
        movaps  DECL_REGS+16(%rsp), %xmm0
        movaps  DECL_REGS+32(%rsp), %xmm1
        .cfi_remember_state
        movq    %rbp, %rsp
        popq    %rbp
        .cfi_def_cfa %rsp, 8
        ret
        .cfi_restore_state
        /* Not counted: the tail jump. */
2:      RESTORE DECL_REGS
        leaq    fbc_decl_defs(%rip), %r10
        jmp     *(%r10,%r11,8)
        .cfi_endproc
        .size   decl_common, . - decl_common

/* The C side (declared.c) returns where loader entry i (in edi), called from the return
 * address in rsi, jumps: the real function. */
        .p2align 4
        .type   dl_common, @function
dl_common:
        .cfi_startproc
        SAVE
        movl    %r11d, %edi
        movq    8(%rbp), %rsi
        call    fbc_dl_enter
        movq    %rax, %r10
        RESTORE
        jmp     *%r10
        .cfi_endproc
        .size   dl_common, . - dl_common

/* The same entries under the loader functions' own names, exported: a preloaded shim sees
 * every dlopen and dlsym of the program, so that a backend dlopen-ed later (a Python
 * extension, node's addon) arms the census as one linked at start does. In the order of
 * FBC_DL_ENTRIES (declared.c's dl_names). */
        .macro EXPORT name, i
        .globl  \name
        .type   \name, @function
        .p2align 4
\name:
        .cfi_startproc
        endbr64
        movl    $\i, %r11d
        jmp     dl_common
        .cfi_endproc
        .size   \name, . - \name
        .endm

/* Not in a sanitized shim: a sanitizer's runtime asks the loader (dlsym) before it has
 * started, and the shim's instrumented C side must not run then. */
#ifndef FBC_NO_LOADER_EXPORTS
        EXPORT  dlopen, 0
        EXPORT  dlmopen, 1
        EXPORT  dlsym, 2
        EXPORT  dlvsym, 3
#endif

/* The data the entries read (entries.h), zero until declared.c fills it. */
        .macro DATA name, bytes
        .globl  \name
        .hidden \name
        .type   \name, @object
        .p2align 3
\name:
        .zero   \bytes
        .size   \name, \bytes
        .endm

        .bss
        DATA fbc_decl_defs, (8*FBC_DECL_MAX)
        DATA fbc_decl_enter_fn, 8
        DATA fbc_decl_leave_fn, 8
        DATA fbc_decl_forced, 1

        .section .note.GNU-stack, "", @progbits
