/* entries.h - what the register-preserving entries (entries.S) and their C side (declared.c,
 * loader.c) agree on: constants for the assembler too (declared.c checks each against the C
 * definition it stands for), and the entries' tables and data, which entries.S defines so
 * that it depends on no C file of the shim but loader.c (the declared exits' C side is
 * reached through the two hooks, the loader's work through fbc_dl_on_load's function). */
#ifndef FBC_ENTRIES_H
#define FBC_ENTRIES_H

#define FBC_DECL_MAX 128     /* declared exits: FBR_BACKENDS_MAX rows of FBR_EXITS_MAX */
#define FBC_DL_ENTRIES 4     /* dlopen, dlmopen, dlsym, dlvsym */
#define FBC_T_STATE_OFFSET 0 /* offsetof(fbc_thread, state) */
#define FBC_T_OFF_VALUE 1    /* FBC_T_OFF */
#define FBC_ENTRY_SIZE 16    /* bytes of one entry of a table: entry i = table + 16 * i */
/* A counted declared call: the caller's stack arguments copied for the real function (at most
 * this much: 64 eightbytes, a struct of up to 512 bytes passed by value), and the room in the
 * entry's frame for the call's state (an fbc_call) until it returns. */
#define FBC_DECL_STACK_BYTES 512
#define FBC_DECL_CALL_BYTES 256

#if !defined(__ASSEMBLER__)
#include <stdbool.h>
#include <stdint.h>

/* Weak: a build without entries.S (another architecture, or a test build of the C files
 * alone) links, and fbc_entries_present() says so. */
#define FBC_ENTRY_DATA __attribute__((weak))
extern const char fbc_decl_entries[] FBC_ENTRY_DATA;     /* FBC_DECL_MAX entries: declared exits */
extern const char fbc_dl_entries[] FBC_ENTRY_DATA;       /* dlopen, dlmopen, dlsym, dlvsym */
extern void *fbc_decl_defs[FBC_DECL_MAX] FBC_ENTRY_DATA; /* where declared exit i jumps */
extern bool fbc_decl_forced FBC_ENTRY_DATA; /* every thread takes a declared exit's slow path */
/* The C side, set before any entry is redirected to: a declared exit's slow path (its index,
 * FBC_DECL_CALL_BYTES of the entry's frame for the call's state, where the caller's stack
 * arguments begin), nonzero when the entry is to call the real function and then the end
 * (the call's state) rather than jump to it. */
extern int (*fbc_decl_enter_fn)(unsigned i, void *call, const void *args) FBC_ENTRY_DATA;
extern void (*fbc_decl_leave_fn)(void *call) FBC_ENTRY_DATA;
/* A loader entry's work, called directly (the shim exports the entries, which can run before
 * any constructor), for a call from return address ra: returns the real function loader
 * entry i jumps to. */
void *fbc_dl_enter(unsigned i, uintptr_t ra);
/* The loader functions' names, in the order of the loader entries. */
extern const char *const fbc_dl_names[FBC_DL_ENTRIES];
/* Sets the work a loader entry does, once the shim has started, for a call from outside the
 * shim: what modules loaded since need. Until set, the entries only pass calls through. */
void fbc_dl_on_load(void (*notice)(void));

/* Whether entries.S is linked in. */
static inline bool fbc_entries_present(void)
{
    return (uintptr_t)fbc_decl_entries != 0;
}
#endif

#endif
