/* lifecycle.c - start (config, handlers), the exit dump, fork. Recording is on for the whole
 * process when the library is preloaded (FBCOUNT=0 turns it off; FBCOUNT=1 turns it on when
 * linked in); otherwise only in-process scopes record. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int atexit_done;

static bool preloaded(void)
{
    Dl_info di;
    const char *pre = getenv("LD_PRELOAD");
    if (!pre || !dladdr((void *)fbc_init, &di) || !di.dli_fname)
        return false;
    const char *base = strrchr(di.dli_fname, '/');
    base = base ? base + 1 : di.dli_fname;
    /* Entries are separated by spaces or colons; match whole entries by their last part. */
    size_t bl = strlen(base);
    for (const char *p = pre; *p;) {
        size_t n = strcspn(p, " :");
        const char *slash = p + n;
        while (slash > p && slash[-1] != '/')
            slash--;
        if ((size_t)(p + n - slash) == bl && !memcmp(slash, base, bl))
            return true;
        p += n;
        p += strspn(p, " :");
    }
    return false;
}

static void prepare(void)
{
    pthread_mutex_lock(&fbc_dump_lock);
    pthread_mutex_lock(&fbc_sym_lock);
    pthread_mutex_lock(&fbc_global_lock);
    fbc_shards_fork(0);
    fbc_modmap_fork(0);
}

static void parent(void)
{
    fbc_modmap_fork(1);
    fbc_shards_fork(1);
    pthread_mutex_unlock(&fbc_global_lock);
    pthread_mutex_unlock(&fbc_sym_lock);
    pthread_mutex_unlock(&fbc_dump_lock);
}

/* The child starts an empty census with its own file (its pid) and its own dumper thread. */
static void child(void)
{
    fbc_modmap_fork(1);
    fbc_shards_fork(2);
    pthread_mutex_unlock(&fbc_global_lock);
    pthread_mutex_unlock(&fbc_sym_lock);
    pthread_mutex_unlock(&fbc_dump_lock);
    fbc_proc.pid = (int)getpid();
    fbc_proc.ppid = (int)getppid();
    fbc_proc.forked = true;
    __atomic_store_n(&fbc_seq, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&fbc_crash_done, 0, __ATOMIC_RELAXED);
    fbc_modes_after_fork();
    if (__atomic_load_n(&fbc_process_on, __ATOMIC_RELAXED))
        fbc_snapshot_after_fork();
}

static void at_exit(void)
{
    fbc_exit_dump();
}

static void init_once(void)
{
    fbc_process_load();
    fbc_config_load(preloaded());
    snprintf(fbc_output_tmpl, sizeof fbc_output_tmpl, "%s", fbc_cfg.output);
    fbc_capture_init();
    fbc_modmap_refresh();
    fbc_exec_inherit();
    pthread_atfork(prepare, parent, child);
    if (!fbc_cfg.enabled)
        return;
    fbc_crash_install();
    fbc_snapshot_install();
    __atomic_store_n(&fbc_process_on, true, __ATOMIC_RELEASE);
}

void fbc_init(void)
{
    pthread_once(&once, init_once);
    /* Registered from the first event or scope, i.e. once main runs: then it runs before the
     * libraries' destructors, while the backend is still whole. */
    if (!__atomic_load_n(&atexit_done, __ATOMIC_RELAXED) &&
        !__atomic_exchange_n(&atexit_done, 1, __ATOMIC_ACQ_REL))
        atexit(at_exit);
}

__attribute__((constructor)) static void fbc_start(void)
{
    pthread_once(&once, init_once);
}

__attribute__((destructor)) static void fbc_stop(void)
{
    fbc_exit_dump();
}
