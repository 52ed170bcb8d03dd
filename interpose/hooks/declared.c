/* declared.c - exits the shim has no definition of (FBCOUNT_EXIT's, and a descriptor file's
 * exits that no built-in row has), reached by redirection: each gets an entry of entries.S,
 * the calling modules' global offset table entries that reach its definition in the row's
 * library are pointed at it (redirect/), and a call counts (reader none: bytes unknown) and
 * runs the definition and adds the call's time (or, not recording, jumps to it).
 *
 * Modules loaded later are redirected when the program next calls dlopen, dlmopen, dlsym or
 * dlvsym: their imports are redirected too (entries.S), to an entry that first scans the
 * modules loaded since the last scan and then jumps to the real function, so a module
 * dlopen-ed RTLD_LOCAL is redirected before the program can get a pointer out of it. */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <string.h>
#include <sys/utsname.h>

#include "early.h"
#include "entries.h"
#include "hooks.h"

_Static_assert(FBC_DECL_MAX == FBR_BACKENDS_MAX * FBR_EXITS_MAX, "one entry per exit of any row");
_Static_assert(offsetof(fbc_thread, state) == FBC_T_STATE_OFFSET, "entries.S reads fbc_t.state");
_Static_assert(FBC_T_OFF == FBC_T_OFF_VALUE, "entries.S compares with FBC_T_OFF");
_Static_assert(sizeof(fbc_call) <= FBC_DECL_CALL_BYTES, "entries.S keeps an fbc_call");
_Static_assert(FBC_DECL_STACK_BYTES % 16 == 0, "entries.S keeps the stack aligned");

/* One declared exit: its row and exit, and once its library is loaded, its definition. */
typedef struct {
    long row;
    unsigned exit;
    void *handle; /* the library, pinned: its definition must not go away */
    fbc_bmod *bm; /* bound at the first call that records */
} declared;

static declared decls[FBC_DECL_MAX];
static unsigned ndecls;

static int decl_enter(unsigned i, void *call, const void *args);
static void decl_leave(void *call);

static const fbr_exit *exit_of(const declared *d)
{
    return &fbc_row_at((size_t)d->row)->exit[d->exit];
}

/* The table of declared exits, from the rows in force; refused in one line where the entries
 * cannot run. */
static void declare_all(void)
{
    for (size_t r = 0; r < fbc_rows_count(); r++)
        for (int k = 0; k < fbc_row_at(r)->nexits; k++)
            if (!fbc_exit_defined(fbc_row_at(r)->exit[k].symbol) && ndecls < FBC_DECL_MAX)
                decls[ndecls++] = (declared){(long)r, (unsigned)k, NULL, NULL};
    if (!fbc_entries_present()) {
        if (ndecls) {
            struct utsname u;
            fbc_warn("FBCOUNT_EXIT: exits declared by name (%.200s first) need x86-64 and "
                     "its entries in the shim (this is %s); they are not counted",
                     exit_of(&decls[0])->symbol, uname(&u) ? "this machine" : u.machine);
        }
        ndecls = 0;
        return;
    }
    fbc_decl_enter_fn = decl_enter;
    fbc_decl_leave_fn = decl_leave;
}

/* ---- definitions ---------------------------------------------------------------------- */

#define MAX_CANDIDATES 16

typedef struct {
    char path[MAX_CANDIDATES][512];
    unsigned n;
} candidates;

/* The loaded modules that some declared exit without a definition may live in. */
static int candidate(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    candidates *c = data;
    if (!info->dlpi_name || !info->dlpi_name[0] || c->n == MAX_CANDIDATES)
        return 0;
    for (unsigned i = 0; i < ndecls; i++)
        if (!__atomic_load_n(&fbc_decl_defs[i], __ATOMIC_ACQUIRE) &&
            fbr_backend_library(fbc_row_at((size_t)decls[i].row), info->dlpi_name)) {
            snprintf(c->path[c->n++], sizeof c->path[0], "%s", info->dlpi_name);
            break;
        }
    return 0;
}

/* Finds the definitions of declared exits whose library was loaded since: the library's own
 * (dlsym also searches its dependencies). No lock of the shim is held while the loader is
 * asked: a thread inside dlopen holds the loader's lock and may call into an entry. Two
 * threads may search at once; the first to publish a definition keeps its handle. True when
 * one was found. */
static bool find_definitions(void)
{
    candidates c = {.n = 0};
    bool found = false;
    dl_iterate_phdr(candidate, &c);
    for (unsigned m = 0; m < c.n; m++) {
        void *h = dlopen(c.path[m], RTLD_LAZY | RTLD_NOLOAD);
        bool kept = false;
        for (unsigned i = 0; h && i < ndecls; i++) {
            if (__atomic_load_n(&fbc_decl_defs[i], __ATOMIC_ACQUIRE) ||
                !fbr_backend_library(fbc_row_at((size_t)decls[i].row), c.path[m]))
                continue;
            void *f = dlsym(h, exit_of(&decls[i])->symbol), *none = NULL;
            Dl_info di;
            if (!f || !dladdr(f, &di) || !di.dli_fname || strcmp(di.dli_fname, c.path[m]) ||
                !__atomic_compare_exchange_n(&fbc_decl_defs[i], &none, f, false, __ATOMIC_ACQ_REL,
                                             __ATOMIC_ACQUIRE))
                continue;
            __atomic_store_n(&decls[i].handle, h, __ATOMIC_RELAXED);
            kept = found = true;
        }
        if (h && !kept)
            dlclose(h);
    }
    return found;
}

/* ---- redirection ---------------------------------------------------------------------- */

static pthread_once_t declared_once = PTHREAD_ONCE_INIT;

/* A fork while another thread redirects must not leave the child's lock taken: the child's
 * next dlopen or dlsym goes through an entry. */
static void fork_prepare(void)
{
    fbc_redirect_fork(0);
}

static void fork_after(void)
{
    fbc_redirect_fork(1);
}

static void fork_handlers(void)
{
    pthread_atfork(fork_prepare, fork_after, fork_after);
}

void fbc_exits_redirect(void)
{
    /* Preloaded, with no row but the built-in ones (whose exits the shim defines,
     * tests/shim/check_exits.py): nothing to declare, and the rows are not read at load. */
    if (fbc_proc.preloaded && !fbc_config_declares())
        return;
    pthread_once(&declared_once, declare_all);
    /* Preloaded with nothing declared: LD_PRELOAD reaches every exit, nothing to redirect. */
    if ((fbc_proc.preloaded && !ndecls) || !fbc_redirect_stale())
        return;
    /* Only a process that redirects has them: one that never uses a backend is left as it
     * was (tests/shim/test_bare.c). */
    static pthread_once_t forks_once = PTHREAD_ONCE_INIT;
    pthread_once(&forks_once, fork_handlers);
    if (ndecls && find_definitions())
        fbc_redirect_forget(); /* modules scanned before may import the new definition */
    fbc_redirection r[FBC_DECL_MAX + FBC_DL_ENTRIES + FBC_BUILTIN_MAX];
    size_t n = fbc_exits_builtin(r);
    for (unsigned i = 0; i < ndecls; i++) {
        void *def = __atomic_load_n(&fbc_decl_defs[i], __ATOMIC_ACQUIRE);
        if (def)
            r[n++] = (fbc_redirection){exit_of(&decls[i])->symbol,
                                       (void *)(fbc_decl_entries + FBC_ENTRY_SIZE * i), NULL, def};
    }
    for (unsigned i = 0; fbc_entries_present() && i < FBC_DL_ENTRIES; i++)
        r[n++] = (fbc_redirection){fbc_dl_names[i], (void *)(fbc_dl_entries + FBC_ENTRY_SIZE * i),
                                   NULL, NULL};
    fbc_redirect_scan(r, n);
}

void fbc_exits_undo(void)
{
    fbc_redirect_undo();
}

bool fbc_exits_declare_again(void)
{
    pthread_once(&declared_once, declare_all);
    if (ndecls) /* no entry was ever reached otherwise: declaring again is safe */
        return false;
    fbc_backends_load();
    declare_all();
    return true;
}

/* What a loader call from the program needs, before the real function runs: the modules
 * loaded since are redirected, and a backend loaded since arms the census. */
static void loaded_since(void)
{
    fbc_exits_redirect();
    fbc_notice_modules();
}

/* At load, after the shim's configuration (a shim loaded after the backend, or exits
 * declared): the modules already loaded. */
FBC_EARLY __attribute__((constructor)) static void redirect_at_load(void)
{
    fbc_load();
    fbc_dl_on_load(loaded_since);
    /* Preloaded with nothing declared: the shortcut below, without a page of this file. */
    if (!fbc_proc.preloaded || fbc_config_declares())
        fbc_exits_redirect();
}

/* ---- the entries' C side -------------------------------------------------------------- */

/* A declared exit's slow path: counts the call when the thread records, and has the entry run
 * it and come back to decl_leave when its stack arguments can be copied (the copy must not
 * read past the top of the thread's stack; on another stack the call is a jump, uncounted
 * time). The backend is bound with no lock of this file held (binding asks the loader, see
 * find_definitions); binding twice gives the same one. */
static int decl_enter(unsigned i, void *call, const void *args)
{
    int e = errno;
    fbc_init();
    declared *d = &decls[i];
    void *def = __atomic_load_n(&fbc_decl_defs[i], __ATOMIC_ACQUIRE);
    fbc_bmod *bm = __atomic_load_n(&d->bm, __ATOMIC_ACQUIRE);
    if (!bm && (bm = fbc_bmod_bind(d->row, def)) != NULL) {
        if (!__atomic_exchange_n(&bm->bound, true, __ATOMIC_ACQ_REL))
            fbc_reader(FBR_READ_NONE)->bind(bm);
        __atomic_store_n(&d->bm, bm, __ATOMIC_RELEASE);
    }
    int timed = 0;
    if (bm) {
        fbc_call *c = memset(call, 0, sizeof *c);
        c->bm = bm;
        c->exit = d->exit;
        c->fn = def;
        uintptr_t a = (uintptr_t)args;
        timed = fbc_exit_begin(c, fbc_record_on_stack(a, a + FBC_DECL_STACK_BYTES));
    }
    errno = e;
    return timed;
}

/* The end of a call decl_enter timed (the return registers are kept by the entry). */
static void decl_leave(void *call)
{
    int e = errno;
    fbc_exit_end(call);
    errno = e;
}
