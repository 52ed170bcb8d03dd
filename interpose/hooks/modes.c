/* modes.c - FBCOUNT_MODE=warn, abort and error. The first time an (op, site) pair falls back,
 * the op, the user's code that called it (its Python lines where there are any) and a short
 * stack are printed; abort writes the census and aborts unless the op is allowed
 * (FBCOUNT_ALLOW); error refuses a fallback that is not allowed through the backend's own
 * error path (the reader's refuse: libvkt's status, PyTorch's c10::Error), and aborts where
 * the backend has none. A stack's verdict is decided once, when it is first counted, and kept
 * in its entry. Symbolizing needs more stack than a program's thread may have (16-128 KiB
 * threads died of it): the work runs on the dumper thread; warn mode's without the recording
 * thread waiting for it, abort's and error's while it waits for the verdict. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fields.h"
#include "hooks.h"

enum { VERDICT_UNKNOWN = 0, VERDICT_PASS = 1, VERDICT_REFUSE = 2, VERDICT_STOP = 3 };

typedef struct {
    UT_hash_handle hh;
    char key[];
} pair;

/* The refusal message of each refused stack, by entry. */
typedef struct {
    UT_hash_handle hh;
    const fbc_entry *e;
    char why[];
} refusal;

static pair *seen;
static refusal *refusals;
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

/* True the first time (op, site) is offered. */
static bool first_time(const char *op, const char *site)
{
    size_t a = strlen(op), b = strlen(site);
    pair *p;
    char key[1024];
    if (a + b + 2 > sizeof key)
        return true;
    memcpy(key, op, a + 1);
    memcpy(key + a + 1, site, b + 1);
    pthread_mutex_lock(&seen_lock);
    HASH_FIND(hh, seen, key, a + b + 2, p);
    bool fresh = !p;
    if (fresh && (p = malloc(sizeof *p + a + b + 2))) {
        memcpy(p->key, key, a + b + 2);
        HASH_ADD(hh, seen, key[0], a + b + 2, p);
    }
    pthread_mutex_unlock(&seen_lock);
    return fresh;
}

static void keep_refusal(const fbc_entry *e, const char *why)
{
    size_t n = strlen(why) + 1;
    refusal *r = malloc(sizeof *r + n);
    if (!r)
        return;
    r->e = e;
    memcpy(r->why, why, n);
    pthread_mutex_lock(&seen_lock);
    HASH_ADD_PTR(refusals, e, r);
    pthread_mutex_unlock(&seen_lock);
}

typedef struct {
    const fbc_entry *e;
    int verdict;
    fbc_abort abort; /* the record an abort writes into the census */
    char op[256], site[512], file[1024], backend[FBR_NAME_LEN];
} check;

/* The user's frames of a stack (frames: nframes native, then npy Python): its Python frames
 * outside the backend's packages (the lines a Python user reads), else its native frames from
 * the site (from) outward, each name as it was written and at its line. */
static void user_frames(FILE *f, const uintptr_t *frames, uint32_t nframes, uint32_t npy, long from,
                        const fbr_backend *row)
{
    unsigned shown = 0;
    for (uint32_t k = 0; k < npy && shown < 6; k++) {
        const fbc_pyframe *p = (const fbc_pyframe *)(frames[nframes + k] & ~(uintptr_t)1);
        if (row && fbr_backend_python(row, p->file))
            continue;
        fprintf(f, "fbcount:   %s (%s:%d)\n", p->function ? p->function : "?",
                p->file ? p->file : "?", p->line);
        shown++;
    }
    for (uint32_t i = from < 0 ? nframes : (uint32_t)from; !shown && i < nframes && i < from + 8;
         i++) {
        /* Each function inlined there at its own line, but the backend's headers' and the
         * standard library's, which are no line of the user's. */
        fbc_frame_info chain[FBC_MAX_INLINE];
        int n = fbc_symbolize_chain(frames[i], false, chain, FBC_MAX_INLINE);
        for (int k = 0; k < n; k++) {
            const fbc_frame_info *info = &chain[k];
            if (k + 1 < n && info->file &&
                ((row && fbr_backend_source(row, info->file)) || fbr_source_is_system(info->file)))
                continue;
            const char *mod = info->module >= 0 ? fbc_modmap_at((size_t)info->module)->path : "?";
            const char *slash = strrchr(mod, '/');
            const char *name = fbc_demangle(info->symbol);
            if (info->file && info->line > 0)
                fprintf(f, "fbcount:   #%u %s (%s:%d)\n", i - (uint32_t)from, name ? name : "??",
                        info->file, info->line);
            else
                fprintf(f, "fbcount:   #%u %s (%s+0x%lx)\n", i - (uint32_t)from, name ? name : "??",
                        slash ? slash + 1 : mod, (unsigned long)info->offset);
            if (name != info->symbol)
                free((void *)name);
        }
    }
}

static void run_check(void *arg)
{
    check *c = arg;
    const fbc_entry *e = c->e;
    fbc_frame_info infos[FBC_MAX_DEPTH];
    fbc_attrib a;
    char *text = NULL;
    size_t len = 0;
    pthread_mutex_lock(&fbc_sym_lock);
    fbc_attribute(e, infos, &a);
    bool allowed = fbc_allowed(a.op);
    c->verdict = allowed || fbc_cfg.mode == FBC_MODE_WARN ? VERDICT_PASS
                 : fbc_cfg.mode == FBC_MODE_ERROR         ? VERDICT_REFUSE
                                                          : VERDICT_STOP;
    bool fresh = first_time(a.op, a.site);
    fbc_rsite site = {.site = a.site,
                      .file = a.site_file,
                      .line = a.site_line,
                      .origin = a.origin,
                      .inlined_in = a.site_inlined_in,
                      .node = a.node,
                      .forward = a.forward};
    char where[1024];
    fbc_site_text(&site, where, sizeof where);
    const fbr_backend *row = a.backend ? a.backend->row : NULL;
    FILE *f = fresh || c->verdict == VERDICT_STOP ? open_memstream(&text, &len) : NULL;
    if (f) {
        /* "from backward() at ..." says where of itself. */
        fprintf(f, "fbcount: fallback: %s %s%s [%s]\n", a.op, a.origin ? "" : "at ", where,
                row ? row->name : "?");
        const fbc_origin *o = a.origin ? (const fbc_origin *)e->origin : NULL;
        if (o)
            user_frames(f, o->frames, o->nframes, o->npy, a.site_frame, row);
        else
            user_frames(f, e->frames, e->nframes, e->npy, a.site_frame, row);
        if (c->verdict == VERDICT_STOP)
            fprintf(f, "fbcount: FBCOUNT_MODE=%s: %s is not allowed (FBCOUNT_ALLOW); aborting\n",
                    fbc_mode_name(fbc_cfg.mode), a.op);
        else if (c->verdict == VERDICT_REFUSE)
            fprintf(f,
                    "fbcount: FBCOUNT_MODE=error: %s is not allowed (FBCOUNT_ALLOW); the call "
                    "fails\n",
                    a.op);
        fclose(f);
    }
    if (c->verdict == VERDICT_REFUSE) {
        char why[1200];
        snprintf(why, sizeof why,
                 "fbcount: %s fell back to the host at %s, which FBCOUNT_MODE=error "
                 "refuses (not in FBCOUNT_ALLOW)",
                 a.op, where);
        keep_refusal(e, why);
    }
    snprintf(c->op, sizeof c->op, "%s", a.op);
    snprintf(c->site, sizeof c->site, "%s", a.site);
    snprintf(c->file, sizeof c->file, "%s", a.site_file ? a.site_file : "");
    snprintf(c->backend, sizeof c->backend, "%s", row ? row->name : "");
    c->abort = (fbc_abort){c->op, c->site, c->file[0] ? c->file : NULL, a.site_line,
                           c->backend[0] ? c->backend : NULL};
    pthread_mutex_unlock(&fbc_sym_lock);
    for (size_t off = 0; text && off < len;) {
        ssize_t k = write(2, text + off, len - off);
        if (k <= 0)
            break;
        off += (size_t)k;
    }
    free(text);
    if (c->verdict == VERDICT_STOP) {
        fbc_bmod_unrun(a.backend); /* stopped before it ran: the backend never counts it */
        fbc_dump_req req = {
            .reason = FBR_REASON_EXIT, .abort = &c->abort, .patient = true, .raw_first = true};
        fbc_dump_write(&req, NULL, NULL, 0);
        fbc_final_mark(); /* no second dump on SIGABRT, nor at exit */
    }
}

/* Warn mode's message, formed on the dumper thread. */
static void warn_job(void *arg)
{
    run_check(arg);
    free(arg);
}

bool fbc_mode_check(fbc_entry *e, bool fresh)
{
    int v = __atomic_load_n(&e->verdict, __ATOMIC_ACQUIRE);
    if (fbc_cfg.mode == FBC_MODE_WARN) {
        /* Warn never refuses: the message is formed off the calling thread, which goes on. */
        if (v == VERDICT_UNKNOWN || fresh) {
            __atomic_store_n(&e->verdict, VERDICT_PASS, __ATOMIC_RELEASE);
            check *c = calloc(1, sizeof *c);
            if (c) {
                c->e = e;
                if (!fbc_dumper_post(warn_job, c))
                    fbc_run_big(warn_job, c);
            }
        }
        return false;
    }
    if (v == VERDICT_UNKNOWN || fresh) {
        check c = {.e = e};
        fbc_run_big(run_check, &c);
        v = c.verdict;
        __atomic_store_n(&e->verdict, v, __ATOMIC_RELEASE);
        if (v == VERDICT_STOP)
            abort();
    }
    return v == VERDICT_REFUSE;
}

void fbc_mode_refusal(const fbc_entry *e, char *why, size_t cap)
{
    refusal *r = NULL;
    pthread_mutex_lock(&seen_lock);
    if (e)
        HASH_FIND_PTR(refusals, &e, r);
    snprintf(why, cap, "%s", r ? r->why : "fbcount: FBCOUNT_MODE=error refuses this fallback");
    pthread_mutex_unlock(&seen_lock);
}

void fbc_mode_abort(const fbc_entry *e)
{
    /* The backend has no error path: the census is written as abort mode writes it. */
    check c = {.e = e};
    if (e) {
        fbc_run_big(run_check, &c);
        fbc_dump_req req = {
            .reason = FBR_REASON_EXIT, .abort = &c.abort, .patient = true, .raw_first = true};
        fbc_dump_write(&req, NULL, NULL, 0);
        fbc_final_mark();
    }
    fbc_warn("FBCOUNT_MODE=error: this backend has no error path for a refused fallback; aborting");
    abort();
}

static void prepare(void)
{
    pthread_mutex_lock(&seen_lock);
}

static void parent(void)
{
    pthread_mutex_unlock(&seen_lock);
}

/* The child warns anew: its census starts empty. */
static void child(void)
{
    pair *p, *t;
    HASH_ITER(hh, seen, p, t)
    {
        HASH_DEL(seen, p);
        free(p);
    }
    refusal *r, *u;
    HASH_ITER(hh, refusals, r, u)
    {
        HASH_DEL(refusals, r);
        free(r);
    }
    pthread_mutex_unlock(&seen_lock);
}

void fbc_modes_register(void)
{
    pthread_atfork(prepare, parent, child);
}
