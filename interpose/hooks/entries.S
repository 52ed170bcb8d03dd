/* entries.S - the register-preserving entries (x86-64 SysV): one per declared exit and one per
 * loader function the shim watches (dlopen, dlmopen, dlsym, dlvsym). Redirected calls land
 * here with the caller's frame as it was; an entry saves every argument register (rdi rsi rdx
 * rcx r8 r9, rax: a variadic call's vector count, xmm0-7), calls into C (declared.c), puts
 * them back and TAIL-JUMPS to the real function with the caller's return address untouched.
 * The real function therefore sees the call exactly as made: stack arguments, structs
 * returned in registers or memory, variadic calls, and a longjmp or a C++ exception out of it
 * (no frame of the shim is left on the stack), and loader functions that read their caller
 * from the return address (dlopen's RUNPATH and $ORIGIN, dlsym's RTLD_NEXT).
 *
 * A declared exit's fast path (the thread does not record, no process-wide scope): one
 * thread-local read, one flag, the jump. r10 and r11 are scratch at a call (no argument is
 * passed in them); r11 carries the entry's index. */
#include "entries.h"

        .text

/* Saves the argument registers below a standard frame (rbp: the caller's rsp - 8, as the
 * unwinders and the shim's frame-pointer walk expect), the stack aligned for the C call. */
        .macro SAVE
        pushq   %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        movq    %rsp, %rbp
        .cfi_def_cfa_register %rbp
        subq    $192, %rsp
        andq    $-16, %rsp
        movq    %rdi, 0(%rsp)
        movq    %rsi, 8(%rsp)
        movq    %rdx, 16(%rsp)
        movq    %rcx, 24(%rsp)
        movq    %r8, 32(%rsp)
        movq    %r9, 40(%rsp)
        movq    %rax, 48(%rsp)
        movq    %r11, 56(%rsp)
        movaps  %xmm0, 64(%rsp)
        movaps  %xmm1, 80(%rsp)
        movaps  %xmm2, 96(%rsp)
        movaps  %xmm3, 112(%rsp)
        movaps  %xmm4, 128(%rsp)
        movaps  %xmm5, 144(%rsp)
        movaps  %xmm6, 160(%rsp)
        movaps  %xmm7, 176(%rsp)
        .endm

        .macro RESTORE
        movq    0(%rsp), %rdi
        movq    8(%rsp), %rsi
        movq    16(%rsp), %rdx
        movq    24(%rsp), %rcx
        movq    32(%rsp), %r8
        movq    40(%rsp), %r9
        movq    48(%rsp), %rax
        movq    56(%rsp), %r11
        movaps  64(%rsp), %xmm0
        movaps  80(%rsp), %xmm1
        movaps  96(%rsp), %xmm2
        movaps  112(%rsp), %xmm3
        movaps  128(%rsp), %xmm4
        movaps  144(%rsp), %xmm5
        movaps  160(%rsp), %xmm6
        movaps  176(%rsp), %xmm7
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
1:      SAVE
        movl    %r11d, %edi
        call    *fbc_decl_enter_fn(%rip)
        RESTORE
        leaq    fbc_decl_defs(%rip), %r10
        jmp     *(%r10,%r11,8)
        .cfi_endproc
        .size   decl_common, . - decl_common

        .p2align 4
        .type   dl_common, @function
dl_common:
        .cfi_startproc
        SAVE
        call    *fbc_dl_enter_fn(%rip)
        RESTORE
        leaq    fbc_dl_real(%rip), %r10
        jmp     *(%r10,%r11,8)
        .cfi_endproc
        .size   dl_common, . - dl_common

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
        DATA fbc_dl_real, (8*FBC_DL_ENTRIES)
        DATA fbc_decl_enter_fn, 8
        DATA fbc_dl_enter_fn, 8
        DATA fbc_decl_forced, 1

        .section .note.GNU-stack, "", @progbits
