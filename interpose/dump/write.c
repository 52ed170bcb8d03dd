/* write.c - the fbcount/1 dump of the process census (interpose/dump-format.md), written
 * atomically where no other file is lost: a dump lands on a free name or on an earlier
 * state of its own census, never over another process's file or a device. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dump.h"
#include "fields.h"
#include "signals.h"

pthread_mutex_t fbc_dump_lock = PTHREAD_MUTEX_INITIALIZER;
#define BIG_BUF (1 << 20)
static char small_buf[1 << 16];
static char checkpoint_path[2048]; /* where this census's checkpoint went, "" before one */

static void write_counters(fbc_writer *w, bool has, uint64_t native, uint64_t fallback,
                           uint64_t host)
{
    if (!has) {
        fbc_w_str(w, "null");
        return;
    }
    fbc_w_num(w, "{" FBR_KEY(FBR_NATIVE), native);
    fbc_w_num(w, "," FBR_KEY(FBR_FALLBACK), fallback);
    fbc_w_num(w, "," FBR_KEY(FBR_HOSTCOUNT), host);
    fbc_w_raw(w, "}", 1);
}

static const char *source_name(fbr_source s)
{
    return s == FBR_FROM_FILE       ? FBR_SOURCE_FILE
           : s == FBR_FROM_DECLARED ? FBR_SOURCE_DECLARED
                                    : FBR_SOURCE_BUILTIN;
}

/* "backend": the counters summed, as older dumps have them; "backends": each backend seen,
 * with the modules that define its exits, its own counters and what its reader says. */
static void write_backend(fbc_writer *w, const fbc_report *r)
{
    fbc_w_str(w, "," FBR_KEY(FBR_BACKEND));
    write_counters(w, r->has_backend, r->native, r->fallback, r->host);
    fbc_w_str(w, "," FBR_KEY(FBR_BACKENDS) "[");
    size_t n = fbc_bmod_count() < FBC_MAX_BMODS ? fbc_bmod_count() : FBC_MAX_BMODS;
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        const fbc_bmod *b = fbc_bmod_at(i);
        bool first = true;
        for (size_t j = 0; j < i && first; j++)
            first = fbc_bmod_at(j)->row != b->row;
        if (!first)
            continue; /* written with the first module of its row */
        fbc_w_str(w, any ? ",{" FBR_KEY(FBR_NAME) : "{" FBR_KEY(FBR_NAME));
        any = true;
        fbc_w_json(w, b->row->name);
        fbc_w_str(w, "," FBR_KEY(FBR_SOURCE));
        fbc_w_json(w, source_name(b->row->source));
        fbc_w_str(w, "," FBR_KEY(FBR_MODULES) "[");
        fbc_counters sum = {0};
        for (size_t j = i; j < n; j++) {
            const fbc_bmod *o = fbc_bmod_at(j);
            if (o->row != b->row)
                continue;
            if (j != i)
                fbc_w_raw(w, ",", 1);
            fbc_w_json(w, o->path);
            const fbc_counters *c = &r->counters[j];
            sum.has |= c->has;
            sum.native += c->native;
            sum.fallback += c->fallback;
            sum.host += c->host;
        }
        fbc_w_str(w, "]," FBR_KEY(FBR_COUNTERS));
        write_counters(w, sum.has, sum.native, sum.fallback, sum.host);
        if (b->note[0]) {
            fbc_w_str(w, "," FBR_KEY(FBR_READER));
            fbc_w_json(w, b->note);
        }
        if (b->row->source != FBR_FROM_BUILTIN) {
            /* So that the command attributes its stacks again (a crash dump) by its rule. */
            char text[FBR_DESCRIPTOR_MAX];
            fbr_backend_format(b->row, text, sizeof text);
            fbc_w_str(w, "," FBR_KEY(FBR_DESCRIPTOR));
            fbc_w_json(w, text);
        }
        fbc_w_raw(w, "}", 1);
    }
    fbc_w_raw(w, "]", 1);
}

static void write_abort(fbc_writer *w, const fbc_abort *a)
{
    fbc_w_str(w, "," FBR_KEY(FBR_ABORT) "{" FBR_KEY(FBR_OP));
    fbc_w_json(w, a->op);
    fbc_w_str(w, "," FBR_KEY(FBR_SITE));
    fbc_w_json(w, a->site);
    fbc_site_fields(w, a->file, a->line, NULL, false, 0, NULL, NULL);
    if (a->backend) {
        fbc_w_str(w, "," FBR_KEY(FBR_BACKEND_NAME));
        fbc_w_json(w, a->backend);
    }
    fbc_w_str(w, "," FBR_KEY(FBR_MODE));
    fbc_w_json(w, fbc_mode_name(fbc_cfg.mode));
    fbc_w_raw(w, "}", 1);
}

/* One stack's frame indices, innermost first: native frames, with the Python frames merged
 * in where the interpreter evaluated them (each group of Python frames up to its entry frame
 * stands in place of one _PyEval_EvalFrameDefault frame), leftover Python frames last. */
static void write_frames(fbc_writer *w, fbc_framecache *fc, const fbc_entry *e)
{
    uint32_t py = 0;
    bool first = true;
    for (uint32_t f = 0; f < e->nframes; f++) {
        uint32_t count = 0;
        long idx = fbc_fc_index(fc, e, e->frames[f], f == 0, &count);
        if (idx < 0)
            continue;
        if (py < e->npy && fbc_fc_is_eval(fc, idx)) {
            /* This evaluation ran the Python frames up to the next entry frame. */
            while (py < e->npy) {
                uintptr_t word = e->frames[e->nframes + py++];
                long p = fbc_fc_python(fc, (const fbc_pyframe *)(word & ~(uintptr_t)1));
                if (p >= 0) {
                    if (!first)
                        fbc_w_raw(w, ",", 1);
                    fbc_w_u64(w, (uint64_t)p);
                    first = false;
                }
                if (word & 1)
                    break;
            }
            continue;
        }
        for (uint32_t k = 0; k < count; k++) {
            if (!first)
                fbc_w_raw(w, ",", 1);
            fbc_w_u64(w, (uint64_t)idx + k);
            first = false;
        }
    }
    while (py < e->npy) {
        long p =
            fbc_fc_python(fc, (const fbc_pyframe *)(e->frames[e->nframes + py++] & ~(uintptr_t)1));
        if (p >= 0) {
            if (!first)
                fbc_w_raw(w, ",", 1);
            fbc_w_u64(w, (uint64_t)p);
            first = false;
        }
    }
}

/* The stacks, then the frame table they index. false when the table ran out of memory. */
static bool write_stacks(fbc_writer *w, const fbc_report *r)
{
    fbc_framecache *fc = fbc_fc_new();
    if (!fc)
        return false;
    fbc_w_str(w, "," FBR_KEY(FBR_STACKS) "[");
    for (size_t i = 0; i < r->nstacks; i++) {
        const fbc_rstack *s = &r->stacks[i];
        fbc_w_str(w, i ? ",{" FBR_KEY(FBR_KIND) : "{" FBR_KEY(FBR_KIND));
        fbc_w_json(w, fbc_kind_name((fbc_kind)s->e->kind));
        fbc_w_str(w, "," FBR_KEY(FBR_OP));
        fbc_w_json(w, s->a.op);
        fbc_w_str(w, "," FBR_KEY(FBR_SITE));
        fbc_w_json(w, s->a.site);
        fbc_w_num(w, "," FBR_KEY(FBR_COUNT), s->count);
        fbc_w_num(w, "," FBR_KEY(FBR_BYTES), s->bytes);
        fbc_w_num(w, "," FBR_KEY(FBR_MAX_BYTES), s->max_bytes);
        fbc_w_num(w, "," FBR_KEY(FBR_NS), s->ns);
        fbc_w_num(w, "," FBR_KEY(FBR_MAX_NS), s->max_ns);
        /* The site whole, as the ops' sites have it: a reader need not find it again. */
        fbc_site_fields(w, s->a.site_file, s->a.site_line, s->a.site_inlined_in, s->a.site_python,
                        s->a.origin, s->a.node, s->a.forward);
        fbc_w_str(w, "," FBR_KEY(FBR_BACKEND_NAME));
        fbc_w_json(w, s->a.backend ? s->a.backend->row->name : FBR_BACKEND_DEFAULT);
        if (!fbc_report_sizes(s->a.backend))
            fbc_w_str(w, "," FBR_KEY(FBR_BYTES_KNOWN) "false");
        fbc_w_str(w, "," FBR_KEY(FBR_FRAMES) "[");
        write_frames(w, fc, s->e);
        fbc_w_str(w, "]}");
    }
    fbc_w_raw(w, "]", 1);
    size_t len;
    const char *table = fbc_fc_text(fc, &len);
    if (table) {
        fbc_w_str(w, "," FBR_KEY(FBR_FRAME_TABLE));
        fbc_w_raw(w, table, len);
    }
    fbc_fc_free(fc);
    return table != NULL;
}

/* How long the raw census took to land, for the named dump that replaces it (0: none). */
static uint64_t raw_ns;

static void write_body(fbc_writer *w, const fbc_report *r, const fbc_dump_req *req)
{
    if (req->raw_first && raw_ns)
        fbc_w_num(w, "," FBR_KEY(FBR_RAW_CENSUS_NS), raw_ns);
    fbc_w_str(w, "," FBR_KEY(FBR_SYMBOLIZED) "true," FBR_KEY(FBR_DEBUGINFO));
    fbc_w_json(w, fbr_debuginfo_name(fbc_debuginfo));
    fbc_w_str(w, ",");
    fbc_report_json(w, r, true);
    write_backend(w, r);
    if (req->extra_json)
        fbc_w_str(w, req->extra_json);
    if (req->signal) {
        fbc_w_num(w, "," FBR_KEY(FBR_SIGNAL), (uint64_t)req->signal);
        fbc_w_str(w, "," FBR_KEY(FBR_SIGNAL_NAME));
        fbc_w_json(w, fbr_signal_name(req->signal));
    }
    if (req->abort)
        write_abort(w, req->abort);
    if (!write_stacks(w, r))
        w->failed = true;
    fbc_dump_modules(w);
    fbc_w_str(w, "}\n");
}

/* "dir/name.json" -> "dir/name.<id8>.json": the name another census took, made this one's. */
static bool alternative(const char *path, char *out, size_t cap)
{
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    size_t stem = dot && (!slash || dot > slash + 1) ? (size_t)(dot - path) : strlen(path);
    int n = snprintf(out, cap, "%.*s.%.8s%s", (int)stem, path, fbc_proc.id, path + stem);
    return n > 0 && (size_t)n < cap;
}

/* Writes the dump into path's directory and moves it into place: over an earlier state of
 * this census when replace, else only where no file is (or at the alternative name). r NULL:
 * the raw census. */
static int write_file(const char *path, bool replace, const fbc_report *r, const fbc_dump_req *req,
                      int seq, char *landed, size_t cap)
{
    char tmp[2200];
    int fd = fbc_output_open(path, tmp, sizeof tmp);
    if (fd < 0)
        return -1;
    char *big = malloc(BIG_BUF);
    fbc_writer w;
    if (big)
        fbc_w_init(&w, fd, big, BIG_BUF);
    else
        fbc_w_init(&w, fd, small_buf, sizeof small_buf);
    if (r) {
        fbc_dump_head(&w, req->reason, seq);
        write_body(&w, r, req);
    } else {
        fbc_dump_raw(&w, req->reason, req->signal, seq);
    }
    fbc_w_flush(&w);
    free(big);
    int saved = w.failed ? EIO : 0;
    if (fbc_output_commit(fd, tmp, path, !w.failed, replace) == 0) {
        snprintf(landed, cap, "%s", path);
        return 0;
    }
    if (saved)
        errno = saved;
    if (errno != EEXIST || replace)
        return -1;
    /* The name is taken by another census: the same bytes again, at this census's own name. */
    char alt[2100];
    if (!alternative(path, alt, sizeof alt))
        return -1;
    return write_file(alt, false, r, req, seq, landed, cap);
}

/* The dump number seq's file under the template in use, falling back (with one warning
 * each) to the default name in the working directory, then in /tmp. */
static int write_templated(const fbc_dump_req *req, const fbc_report *r, int seq, char *landed,
                           size_t cap)
{
    static const char *const fallbacks[] = {FBR_DEFAULT_OUTPUT, "/tmp/" FBR_DEFAULT_OUTPUT};
    for (int attempt = 0; attempt < 3; attempt++) {
        char path[2048];
        bool toolong = false, named;
        bool replace = false;
        if (req->checkpoint && checkpoint_path[0]) {
            snprintf(path, sizeof path, "%s", checkpoint_path);
            named = true;
            replace = true;
        } else if (req->checkpoint) {
            named = fbc_output_checkpoint_path(fbc_output_tmpl, path, sizeof path);
        } else {
            named = fbc_output_path(fbc_output_tmpl, seq, path, sizeof path, &toolong);
        }
        if (!named && !toolong)
            return -2; /* FBCOUNT_OUTPUT=none */
        char why[256] = "the name is longer than 2 KiB";
        if (named) {
            if (write_file(path, replace, r, req, seq, landed, cap) == 0) {
                if (req->checkpoint)
                    snprintf(checkpoint_path, sizeof checkpoint_path, "%s", landed);
                return 0;
            }
            snprintf(why, sizeof why, "%s",
                     errno == EEXIST ? "it is not a regular file" : strerror(errno));
        }
        if (attempt == 2 || (req->checkpoint && checkpoint_path[0]))
            break;
        const char *next = fallbacks[attempt];
        if (!strcmp(fbc_output_tmpl, next))
            continue;
        fbc_warn("FBCOUNT_OUTPUT: cannot write %.600s (%s); writing to %s instead",
                 named ? path : fbc_output_tmpl, why, next);
        snprintf(fbc_output_tmpl, sizeof fbc_output_tmpl, "%s", next);
        checkpoint_path[0] = '\0';
    }
    fbc_warn("cannot write the %s dump (%s)", req->reason, strerror(errno));
    return -1;
}

/* Writing a dump past RLIMIT_FSIZE raises SIGXFSZ, whose default ends the program: the
 * write fails instead (EFBIG), and a SIGXFSZ it raised is taken back. */
static void xfsz_block(sigset_t *old, bool *was_pending)
{
    sigset_t one, pend;
    sigemptyset(&one);
    sigaddset(&one, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &one, old);
    *was_pending = sigpending(&pend) == 0 && sigismember(&pend, SIGXFSZ);
}

static void xfsz_restore(const sigset_t *old, bool was_pending)
{
    sigset_t one, pend;
    sigemptyset(&one);
    sigaddset(&one, SIGXFSZ);
    if (!was_pending && sigpending(&pend) == 0 && sigismember(&pend, SIGXFSZ))
        sigtimedwait(&one, NULL, &(struct timespec){0, 0});
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

int fbc_dump_write(const fbc_dump_req *req, fbc_report **keep, char *written, size_t cap)
{
    if (written && cap)
        written[0] = '\0';
    if (keep)
        *keep = NULL;
    fbc_process_exe();
    /* A process that never used a backend has no census to speak of: no file, no noise. */
    if (!req->always && !fbc_cfg.all_processes && !fbc_backend_loaded())
        return 0;
    int rc = 0;
    char landed[2200] = "";
    sigset_t old;
    bool was_pending;
    xfsz_block(&old, &was_pending);
    pthread_mutex_lock(&fbc_dump_lock);
    /* Checkpoints take a number too (their file keeps one name): seq orders every state. */
    int seq = __atomic_add_fetch(&fbc_seq, 1, __ATOMIC_RELAXED);
    fbc_modmap_refresh();
    char raw[2200] = "";
    raw_ns = 0;
    if (req->raw_first && !req->checkpoint) {
        /* On disk within a millisecond, before any frame is named; the named census replaces
         * it below, at the same name. */
        if (req->path)
            write_file(req->path, true, NULL, req, seq, raw, sizeof raw);
        else
            write_templated(req, NULL, seq, raw, sizeof raw);
        if (raw[0] && req->started_ns)
            raw_ns = fbc_now_ns() - req->started_ns;
    }
    if (req->after_raw)
        req->after_raw();
    fbc_report *r = fbc_report_build_process(req->patient);
    if (!r) {
        rc = -1;
    } else if (raw[0]) {
        if (write_file(raw, true, r, req, seq, landed, sizeof landed) != 0) {
            fbc_warn("cannot write the %s dump %.600s (%s); its raw census stays", req->reason, raw,
                     strerror(errno));
            snprintf(landed, sizeof landed, "%s", raw);
            rc = -1;
        }
    } else if (req->path) {
        if (write_file(req->path, true, r, req, seq, landed, sizeof landed) != 0) {
            fbc_warn("cannot write the %s dump %.600s (%s)", req->reason, req->path,
                     errno == EEXIST ? "it is not a regular file" : strerror(errno));
            rc = -1;
        }
    } else {
        rc = write_templated(req, r, seq, landed, sizeof landed) == -1 ? -1 : 0;
    }
    fbc_metrics_write(r);
    pthread_mutex_unlock(&fbc_dump_lock);
    xfsz_restore(&old, was_pending);
    if (written && cap)
        snprintf(written, cap, "%s", landed);
    if (keep)
        *keep = r;
    else
        fbc_report_free(r);
    return rc;
}

void fbc_dump_drop_checkpoint(void)
{
    pthread_mutex_lock(&fbc_dump_lock);
    if (checkpoint_path[0])
        unlink(checkpoint_path);
    checkpoint_path[0] = '\0';
    pthread_mutex_unlock(&fbc_dump_lock);
}
