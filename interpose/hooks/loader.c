/* loader.c - the loader entries' C side (entries.S exports dlopen, dlmopen, dlsym and dlvsym
 * under their own names and reaches here before jumping to the real function). The entries
 * sit below every other file of the shim, so this file calls up only through the one
 * function the shim's start registers: the work a loaded module needs (redirection, arming
 * the census), which declared.c and init.c own. */
#include <errno.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>

#include "entries.h"
#include "hooks.h"

const char *const fbc_dl_names[FBC_DL_ENTRIES] = {"dlopen", "dlmopen", "dlsym", "dlvsym"};

static void (*notice_fn)(void);

void fbc_dl_on_load(void (*notice)(void))
{
    __atomic_store_n(&notice_fn, notice, __ATOMIC_RELEASE);
}

/* Where loader entry i jumps: the function the loader gives next after the shim. Not the
 * shim's own reference to it, which the shim's export of the same name takes over. Found
 * once by the modules' hash tables, by any thread (all find the same). */
static void *dl_real(unsigned i)
{
    static void *real[FBC_DL_ENTRIES];
    void *f = __atomic_load_n(&real[i], __ATOMIC_ACQUIRE);
    if (!f) {
        f = fbc_next_definition(fbc_dl_names[i]);
        __atomic_store_n(&real[i], f, __ATOMIC_RELEASE);
    }
    return f;
}

/* What a loader entry returns without a loader function to jump to (a process has one: this
 * only keeps a jump off address 0): the failure each of them returns. */
static void *no_loader(void)
{
    return NULL;
}

/* Whether ra lies in the shim's own image: from its ELF header (a linker-made symbol) to the
 * end of its last loaded segment. */
static bool from_shim(uintptr_t ra)
{
    extern const ElfW(Ehdr) __ehdr_start;
    static uintptr_t end;
    uintptr_t base = (uintptr_t)&__ehdr_start, e = __atomic_load_n(&end, __ATOMIC_RELAXED);
    if (!e) {
        const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(base + __ehdr_start.e_phoff);
        for (unsigned k = 0; k < __ehdr_start.e_phnum; k++)
            if (ph[k].p_type == PT_LOAD && base + ph[k].p_vaddr + ph[k].p_memsz > e)
                e = base + ph[k].p_vaddr + ph[k].p_memsz;
        __atomic_store_n(&end, e, __ATOMIC_RELAXED);
    }
    return ra >= base && ra < e;
}

/* A loader entry, before the real function: the registered work for the modules loaded
 * since. The shim's own calls of the loader, and calls made inside that work (a constructor
 * the loader runs), go straight through. */
void *fbc_dl_enter(unsigned i, uintptr_t ra)
{
    int e = errno;
    void *real = i < FBC_DL_ENTRIES ? dl_real(i) : NULL;
    /* Not before the shim's own start (a sanitizer's runtime or another library's
     * constructor asking the loader first): nothing is configured yet. */
    bool started = __atomic_load_n(&fbc_proc.load_state, __ATOMIC_ACQUIRE) == 2;
    void (*notice)(void) = __atomic_load_n(&notice_fn, __ATOMIC_ACQUIRE);
    if (started && notice && !fbc_t.in_loader && !from_shim(ra)) {
        fbc_t.in_loader = 1;
        notice();
        fbc_t.in_loader = 0;
    }
    errno = e;
    return real ? real : (void *)no_loader;
}
