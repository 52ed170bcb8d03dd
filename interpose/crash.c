/* crash.c - the emergency dump on a fatal signal: the recorded stacks as raw frames (module +
 * offset) and the module map, written with write(2) from a preallocated buffer. Nothing here
 * allocates, locks or uses stdio; `fbcount symbolize` names the frames afterwards. Then the
 * disposition the application had is restored and the signal raised again, so the process
 * dies (or its own handler runs) exactly as without the shim. */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

int fbc_crash_done;
static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define NFATAL (sizeof fatal / sizeof *fatal)
static struct sigaction previous[NFATAL];
static char cbuf[1 << 16];
extern int (*fbc_real_sigaction)(int, const struct sigaction *, struct sigaction *);

static void write_unknown_op(fbc_writer *w, const char *key, uint64_t n, uint64_t b, uint64_t m)
{
    fbc_w_str(w, key);
    if (n) {
        fbc_w_str(w, "{\"op\":\"(unknown)\",\"count\":");
        fbc_w_u64(w, n);
        fbc_w_str(w, ",\"bytes\":");
        fbc_w_u64(w, b);
        fbc_w_str(w, ",\"max_bytes\":");
        fbc_w_u64(w, m);
        fbc_w_str(w, ",\"shapes\":[],\"sites\":[]}");
    }
    fbc_w_raw(w, "]", 1);
}

/* Every recorded stack, shard by shard, without a lock: lists only grow at one end and
 * entries never move. A stack recorded by two threads is listed twice; readers merge it. */
#define FOR_EACH_ENTRY(e)                                                                      \
    for (fbc_shard *sh_ = fbc_shards_first(); sh_; sh_ = sh_->next)                           \
        for (fbc_entry *e = __atomic_load_n(&sh_->table.head, __ATOMIC_ACQUIRE); e;            \
             e = __atomic_load_n(&e->next, __ATOMIC_ACQUIRE))

static void emergency_dump(int sig)
{
    int seq = __atomic_add_fetch(&fbc_seq, 1, __ATOMIC_RELAXED);
    char path[2048], tmp[2100];
    if (!fbc_output_path(fbc_output_tmpl, seq, path, sizeof path))
        return;
    int fd = fbc_output_open(path, tmp, sizeof tmp);
    if (fd < 0)
        return;
    uint64_t n[2] = {0}, b[2] = {0}, m[2] = {0}, stacks = 0;
    FOR_EACH_ENTRY(e) {
        int k = e->kind == FBC_HOST;
        uint64_t mb = __atomic_load_n(&e->max_bytes, __ATOMIC_RELAXED);
        n[k] += __atomic_load_n(&e->count, __ATOMIC_RELAXED);
        b[k] += __atomic_load_n(&e->bytes, __ATOMIC_RELAXED);
        m[k] = mb > m[k] ? mb : m[k];
        stacks++;
    }
    fbc_writer w;
    fbc_w_init(&w, fd, cbuf, sizeof cbuf);
    fbc_dump_head(&w, "crash", seq);
    fbc_w_str(&w, ",\"signal\":");
    fbc_w_u64(&w, (uint64_t)sig);
    fbc_w_str(&w, ",\"symbolized\":false,\"total\":{\"fallbacks\":");
    fbc_w_u64(&w, n[0]);
    fbc_w_str(&w, ",\"bytes\":");
    fbc_w_u64(&w, b[0]);
    fbc_w_str(&w, ",\"max_bytes\":");
    fbc_w_u64(&w, m[0]);
    fbc_w_str(&w, ",\"host_ops\":");
    fbc_w_u64(&w, n[1]);
    fbc_w_str(&w, ",\"host_bytes\":");
    fbc_w_u64(&w, b[1]);
    fbc_w_str(&w, ",\"stacks\":");
    fbc_w_u64(&w, stacks);
    fbc_w_str(&w, "},\"backend\":null");
    write_unknown_op(&w, ",\"ops\":[", n[0], b[0], m[0]);
    write_unknown_op(&w, ",\"host_ops\":[", n[1], b[1], m[1]);
    fbc_w_str(&w, ",\"stacks\":[");
    bool first = true;
    FOR_EACH_ENTRY(e) {
        fbc_w_str(&w, first ? "{\"kind\":" : ",{\"kind\":");
        first = false;
        fbc_w_str(&w, e->kind == FBC_HOST ? "\"host_op\"" : "\"fallback\"");
        fbc_w_str(&w, ",\"op\":\"(unknown)\",\"site\":\"(unknown)\",\"count\":");
        fbc_w_u64(&w, __atomic_load_n(&e->count, __ATOMIC_RELAXED));
        fbc_w_str(&w, ",\"bytes\":");
        fbc_w_u64(&w, __atomic_load_n(&e->bytes, __ATOMIC_RELAXED));
        fbc_w_str(&w, ",\"max_bytes\":");
        fbc_w_u64(&w, __atomic_load_n(&e->max_bytes, __ATOMIC_RELAXED));
        fbc_w_str(&w, ",\"frames\":[");
        for (uint32_t f = 0; f < e->nframes; f++) {
            fbc_w_str(&w, f ? ",{\"ip\":" : "{\"ip\":");
            fbc_w_hex(&w, e->frames[f]);
            long mi = fbc_modmap_find(e->frames[f]);
            if (mi >= 0) {
                const fbc_module *mod = fbc_modmap_at((size_t)mi);
                fbc_w_str(&w, ",\"module\":");
                fbc_w_json(&w, mod->path);
                fbc_w_str(&w, ",\"offset\":");
                fbc_w_hex(&w, e->frames[f] - mod->base);
            }
            fbc_w_raw(&w, "}", 1);
        }
        fbc_w_str(&w, "]}");
    }
    fbc_w_raw(&w, "]", 1);
    fbc_dump_modules(&w);
    fbc_w_str(&w, "}\n");
    fbc_w_flush(&w);
    fbc_output_commit(fd, tmp, path, !w.failed);
    static const char msg1[] = "fbcount: fatal signal; census written to ";
    if (write(2, msg1, sizeof msg1 - 1) > 0 && write(2, path, strlen(path)) > 0)
        (void)!write(2, "\n", 1);
}

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
    (void)si;
    (void)uc;
    size_t i = 0;
    while (i < NFATAL && fatal[i] != sig)
        i++;
    if (!__atomic_exchange_n(&fbc_crash_done, 1, __ATOMIC_ACQ_REL))
        emergency_dump(sig);
    if (i < NFATAL)
        fbc_real_sigaction(sig, &previous[i], NULL);
    /* Pending until this handler returns; a faulting instruction would also fault again. */
    raise(sig);
}

void fbc_crash_install(void)
{
    if (fbc_sigaction_resolve() != 0)
        return;
    for (size_t i = 0; i < NFATAL; i++) {
        struct sigaction old;
        if (fbc_real_sigaction(fatal[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN)
            continue; /* an ignored signal stays ignored */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_fatal;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        previous[i] = old;
        fbc_real_sigaction(fatal[i], &sa, NULL);
    }
}
