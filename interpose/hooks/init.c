/* init.c - start-up and arming. At load the shim only reads what must be read then (the
 * command line before the program can rewrite it, the start time, the configuration and its
 * warnings): a process that never uses a backend is left as it was, with no descriptor,
 * thread, signal or fork handler, kept allocation or pending dlerror of the shim's, and pays
 * only that at every exec. The first use of a backend or of the API initialises the rest
 * (capture, libunwind and its pipe, the module map, the fork handlers); the first event arms
 * the triggers: the dumper thread, the census, termination and crash signals, the exit dump.
 * Recording is on for the whole process when the library is preloaded (FBCOUNT=0 turns it
 * off; FBCOUNT=1 turns it on when linked in); otherwise only in-process scopes record. */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "early.h"
#include "hooks.h"

static pthread_once_t use_once = PTHREAD_ONCE_INIT;
bool fbc_attached;
static pthread_once_t arm_once = PTHREAD_ONCE_INIT;
static bool armed; /* arm_once_ ran: the census is armed (atomic) */

/* This library's first byte (a linker-made symbol): its load address. */
extern const ElfW(Ehdr) __ehdr_start;

/* The shim's own file name, from the loader's list of modules, which load may read: the
 * loader holds its lock while constructors run at a dlopen, and a process starting has one
 * thread. dladdr (code of the loader's a process may never run) where the list lacks it: a
 * shim loaded into another namespace. */
FBC_EARLY static const char *own_path(void)
{
    for (const struct link_map *m = _r_debug.r_map; m; m = m->l_next)
        if (m->l_addr == (ElfW(Addr)) & __ehdr_start)
            return m->l_name;
    Dl_info di;
    return dladdr((void *)fbc_init, &di) ? di.dli_fname : NULL;
}

FBC_EARLY static bool preloaded(void)
{
    static const char ld_preload[] FBC_EARLY_CONST = "LD_PRELOAD";
    const char *pre = fbc_early_getenv(ld_preload), *path = pre ? own_path() : NULL;
    if (!path)
        return false;
    const char *base = path;
    for (const char *p = path; *p; p++)
        if (*p == '/')
            base = p + 1;
    /* Entries are separated by spaces or colons; match whole entries by their last part. */
    size_t bl = fbc_early_strlen(base);
    for (const char *p = pre; *p;) {
        const char *end = p;
        while (*end && *end != ' ' && *end != ':')
            end++;
        const char *slash = end;
        while (slash > p && slash[-1] != '/')
            slash--;
        size_t i = 0;
        while (i < bl && slash + i < end && slash[i] == base[i])
            i++;
        if (i == bl && slash + i == end)
            return true;
        p = end;
        while (*p == ' ' || *p == ':')
            p++;
    }
    return false;
}

FBC_EARLY static void load_once_(void)
{
    fbc_process_load();
    fbc_proc.preloaded = preloaded();
    fbc_config_load(fbc_proc.preloaded);
    if (fbc_cfg.any)
        fbc_process_log();
    if (fbc_cfg.enabled < 0 ? fbc_proc.preloaded : fbc_cfg.enabled)
        __atomic_store_n(&fbc_proc.on, true, __ATOMIC_RELEASE);
}

/* A child of a fork made before this process first used the shim: no fork handler of the
 * shim's ran then, so it still holds its parent's pid and census id. */
FBC_EARLY static void own_census(void)
{
    if (fbc_sys_getpid() != fbc_proc.pid)
        fbc_process_forked();
}

static void use_once_(void)
{
    fbc_load();
    own_census();
    fbc_process_exe();
    fbc_clock_init(fbc_cfg.clock_monotonic);
    if (!fbc_attached) /* attach sets its own */
        snprintf(fbc_output_tmpl, sizeof fbc_output_tmpl, "%s", fbc_cfg.output);
    fbc_capture_init();
    fbc_modmap_refresh();
    fbc_fork_register();
    fbc_modes_register();
    fbc_exits_resolve_end();
    __atomic_store_n(&fbc_proc.used, true, __ATOMIC_RELEASE);
}

static bool rows_defined_elsewhere(void)
{
    const char *names[FBR_BACKENDS_MAX * FBR_EXITS_MAX];
    size_t n = 0;
    for (size_t r = 0; r < fbc_rows_count(); r++)
        for (int k = 0; k < fbc_row_at(r)->nexits; k++)
            names[n++] = fbc_row_at(r)->exit[k].symbol;
    return fbc_defined_elsewhere(names, n, NULL);
}

/* Whether this process can have a census to write: it used the shim, or asked for one in
 * every process, or a module defines an exit of a backend's row (a backend loaded and never
 * called still gets its census of zero). The last is a look into the modules' own hash
 * tables, far cheaper than the dynamic loader's failing lookups. The modules' generation
 * is kept with the answer at load: at exit they are looked into again only if one was
 * loaded or unloaded since (early.h). */
FBC_EARLY static bool may_have_census(bool at_load)
{
    if (__atomic_load_n(&fbc_proc.used, __ATOMIC_ACQUIRE) || fbc_cfg.all_processes)
        return true;
    if (fbc_config_declares() && fbc_backends_read())
        return rows_defined_elsewhere();
    /* No row but the built-in ones (none declared, or no row read yet): their exits, known
     * without parsing them. */
    if (!at_load && fbc_proc.modules_at_load &&
        fbc_modules_generation() == fbc_proc.modules_at_load)
        return fbc_proc.backend_at_load;
    size_t n = 0;
    while (fbr_backend_builtin_exits[n])
        n++;
    if (!at_load)
        return fbc_defined_elsewhere(fbr_backend_builtin_exits, n, NULL);
    fbc_proc.backend_at_load =
        fbc_defined_elsewhere(fbr_backend_builtin_exits, n, &fbc_proc.modules_at_load);
    return fbc_proc.backend_at_load;
}

/* glibc keeps the error of a failed dlsym (the exits a process lacks) for the next dlerror()
 * call, allocated: the program must not find the shim's there. Read once, then released. */
static void drop_dlerror(void)
{
    int saved = errno;
    if (dlerror())
        (void)dlerror();
    errno = saved;
}

/* A backend linked into the program is armed for at start, so that a run that never falls
 * back still answers a snapshot, Ctrl-C or SIGTERM with its census (of zero). */
static void arm_if_linked(void)
{
    bool linked = false;
    for (size_t r = 0; r < fbc_rows_count(); r++) {
        const fbr_backend *row = fbc_row_at(r);
        for (int k = 0; k < row->nexits; k++) {
            void *f = dlsym(RTLD_NEXT, row->exit[k].symbol);
            Dl_info di;
            unsigned e;
            if (f && dladdr(f, &di) &&
                fbc_bmod_bind(fbc_row_for(row->exit[k].symbol, di.dli_fname, &e), f))
                linked = true;
        }
    }
    if (linked || fbc_cfg.all_processes) /* FBCOUNT_ALL_PROCESSES: every process, as asked */
        fbc_arm();
}

FBC_EARLY void fbc_load(void)
{
    fbc_early_once(&fbc_proc.load_state, load_once_);
}

void fbc_init(void)
{
    pthread_once(&use_once, use_once_);
}

static void at_exit(void)
{
    fbc_final_dump(NULL);
}

static void arm_once_(void)
{
    fbc_snapshot_install();
    if (fbc_attached)
        fbc_terminate_install_chained(); /* no sigaction of the program's went through us */
    else
        fbc_terminate_install();
    fbc_crash_install();
    /* Registered now, once main runs: it runs before the libraries' destructors, while the
     * backend is still whole; the destructor below catches anything recorded later. */
    atexit(at_exit);
    __atomic_store_n(&armed, true, __ATOMIC_RELEASE);
}

void fbc_arm(void)
{
    if (!__atomic_load_n(&fbc_proc.on, __ATOMIC_ACQUIRE))
        return;
    fbc_init();
    pthread_once(&arm_once, arm_once_);
    if (!fbc_dumper_running())
        fbc_dumper_start(NULL); /* also in a fork child, whose parent's thread did not follow it */
}

bool fbc_armed(void)
{
    return __atomic_load_n(&armed, __ATOMIC_ACQUIRE);
}

void fbc_notice_modules(void)
{
    static uint64_t seen;
    if (__atomic_load_n(&armed, __ATOMIC_ACQUIRE) ||
        !__atomic_load_n(&fbc_proc.on, __ATOMIC_ACQUIRE))
        return;
    uint64_t gen = fbc_modules_generation();
    if (gen == __atomic_load_n(&seen, __ATOMIC_RELAXED))
        return;
    __atomic_store_n(&seen, gen, __ATOMIC_RELAXED);
    /* Found by the modules' own tables, the arming left to the dumper: this runs inside the
     * program's loader call, maybe in a library's constructor before the backend's own
     * dependencies are initialized, where nothing may ask the loader for more. */
    if (may_have_census(false) && fbc_backend_loaded())
        fbc_dumper_start(fbc_arm);
}

void fbc_thread_decide(void)
{
    fbc_init();
    bool on = __atomic_load_n(&fbc_proc.on, __ATOMIC_ACQUIRE);
    fbc_t.state = on || fbc_t.scope ? FBC_T_ON : FBC_T_OFF;
    if (on)
        fbc_crash_altstack();
}

FBC_EARLY __attribute__((constructor)) static void fbc_start(void)
{
    fbc_load();
    if (may_have_census(true)) {
        arm_if_linked();
        drop_dlerror();
    }
}

int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);

/* The loader's DT_FINI call (interpose/meson.build): nothing to do, on a page already in. */
FBC_EARLY void fbc_fini(void);
FBC_EARLY void fbc_fini(void)
{
}

/* The census's last state, where the process may have one: the shim is made ready first
 * (a backend loaded and never called, or armed by a thread the exit overtook). */
FBC_EARLY static void final_census(void)
{
    own_census();
    if (may_have_census(false)) {
        fbc_init();
        fbc_final_dump(NULL);
    }
}

FBC_EARLY static void at_last(void *arg)
{
    (void)arg;
    final_census();
}

/* Library destructors run in the reverse order of their constructors, and this one may run
 * before a library that still falls back in its own. An exit handler registered while the
 * destructors run, and tied to no library (atexit() would tie it to this one, and run it
 * with this library's destructors), is run by exit() after all of them: the census's very
 * last state. */
FBC_EARLY __attribute__((destructor)) static void fbc_stop(void)
{
    final_census();
    __cxa_atexit(at_last, NULL, NULL);
}
