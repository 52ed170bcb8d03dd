/* redirect.h - call redirection by name: the entries of loaded modules' global offset tables
 * (PLT jump slots, GLOB_DAT and absolute pointers) that hold an imported function are pointed
 * at the shim's entry for it, the original values kept to restore them. It is how the shim
 * reaches calls that its LD_PRELOAD definitions cannot: when it is loaded after a backend
 * (imported or linked by a Python package, attached to a running process), and for exits it
 * has no definition of (declared by name). Modules' code pages are never touched; an entry is
 * one aligned pointer store, and RELRO pages are made writable only for the store.
 *
 * x86-64 ELF only. Uses base/ only. */
#ifndef FBC_REDIRECT_H
#define FBC_REDIRECT_H

#include "base.h"

/* One symbol to redirect: calls to it (in modules other than the shim) go to `to`. A module
 * matching `only` (a base-name glob; NULL: any) is the only one whose imports change. With
 * `def` set, only the entries that reach that definition change: those bound to it, and
 * those not bound yet (a lazy PLT entry, taken to resolve to it: the loader is not asked). */
typedef struct {
    const char *symbol;
    void *to;
    const char *only;
    const void *def;
} fbc_redirection;

/* Redirects, in every loaded module not scanned before (the shim itself and the vdso apart),
 * the entries that import one of the n symbols. Returns the entries written by this call, or
 * -1 where the machine is not x86-64. Serialised: safe from any thread, against calls in
 * flight on others. */
int fbc_redirect_scan(const fbc_redirection *r, size_t n);
/* Whether a module was loaded since the last scan (cheap: the loader's counters). */
bool fbc_redirect_stale(void);
/* Makes the next scan visit every loaded module again (a redirection was added that modules
 * scanned before may need); entries already redirected stay. */
void fbc_redirect_forget(void);
/* Puts every redirected entry that still holds the value written back to its original value
 * (entries of modules unloaded since, or rewritten by someone else, are left alone) and
 * forgets the modules scanned. */
void fbc_redirect_undo(void);
/* Its lock around fork (base.h's fbc_mutex_fork phases). */
void fbc_redirect_fork(int phase);
/* Entries redirected now. */
size_t fbc_redirect_count(void);
/* The original value of the entry that module `base` used for symbol: where its calls went
 * before the redirection (NULL when none of its entries was redirected). A lazily bound
 * entry's original is its PLT stub, which resolves through the loader when called. */
void *fbc_redirect_original(uintptr_t base, const char *symbol);

#endif
