/* dump.c - the fbcount/1 dump of the process census (interpose/dump-format.md), written
 * atomically, and the exit dump with its short summary on stderr. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"

pthread_mutex_t fbc_dump_lock = PTHREAD_MUTEX_INITIALIZER;
static char wbuf[1 << 16];
#define BIG_BUF (1 << 20)

#define KEY(w, k) fbc_w_str((w), "\"" k "\":")

static void write_process(fbc_writer *w)
{
    KEY(w, "process");
    fbc_w_str(w, "{\"pid\":");
    fbc_w_u64(w, (uint64_t)fbc_proc.pid);
    fbc_w_str(w, ",\"ppid\":");
    fbc_w_u64(w, (uint64_t)fbc_proc.ppid);
    fbc_w_str(w, ",\"host\":");
    fbc_w_json(w, fbc_proc.host);
    fbc_w_str(w, ",\"exe\":");
    fbc_w_json(w, fbc_proc.exe);
    fbc_w_str(w, ",\"argv\":[");
    for (size_t off = 0; off < fbc_proc.argv_len;) {
        const char *a = fbc_proc.argv + off;
        if (off)
            fbc_w_raw(w, ",", 1);
        fbc_w_json(w, a);
        size_t n = 0;
        while (a[n])
            n++;
        off += n + 1;
    }
    fbc_w_str(w, "]}");
}

/* The parts every dump has before its census: shared with the crash dump. */
void fbc_dump_head(fbc_writer *w, const char *reason, int seq)
{
    char now[21];
    fbc_fmt_time(now);
    fbc_w_str(w, "{\"schema\":\"fbcount/1\",\"reason\":");
    fbc_w_json(w, reason);
    fbc_w_str(w, ",\"seq\":");
    fbc_w_u64(w, (uint64_t)seq);
    fbc_w_str(w, ",\"time\":");
    fbc_w_json(w, now);
    fbc_w_raw(w, ",", 1);
    write_process(w);
    fbc_w_str(w, ",\"config\":{\"mode\":");
    fbc_w_json(w, fbc_mode_name(fbc_cfg.mode));
    fbc_w_str(w, ",\"depth\":");
    fbc_w_u64(w, (uint64_t)fbc_cfg.depth);
    fbc_w_str(w, ",\"op_prefix\":[");
    for (int i = 0; i < fbc_cfg.nprefix; i++) {
        if (i)
            fbc_w_raw(w, ",", 1);
        fbc_w_json(w, fbc_cfg.prefix[i]);
    }
    fbc_w_str(w, "]}");
}

void fbc_dump_modules(fbc_writer *w)
{
    fbc_w_str(w, ",\"modules\":[");
    size_t n = fbc_modmap_count(), any = 0;
    for (size_t i = 0; i < n; i++) {
        const fbc_module *m = fbc_modmap_at(i);
        if (!m->file)
            continue; /* the vdso: nothing to symbolize it from later */
        fbc_w_str(w, any++ ? ",{\"path\":" : "{\"path\":");
        fbc_w_json(w, m->path);
        fbc_w_str(w, ",\"base\":");
        fbc_w_hex(w, m->base);
        if (m->build_id[0]) {
            fbc_w_str(w, ",\"build_id\":");
            fbc_w_json(w, m->build_id);
        }
        fbc_w_str(w, ",\"size\":");
        fbc_w_u64(w, m->end - m->start);
        fbc_w_raw(w, "}", 1);
    }
    fbc_w_raw(w, "]", 1);
}

static const char *dtype_name(int dtype, char *buf, size_t cap)
{
    const char *n = fbc_vkt_get()->dtype_name ? fbc_vkt_get()->dtype_name(dtype) : NULL;
    if (n)
        return n;
    snprintf(buf, cap, "dtype%d", dtype);
    return buf;
}

static void write_ops(fbc_writer *w, const fbc_report *r, fbc_kind k)
{
    fbc_w_str(w, k == FBC_HOST ? ",\"host_ops\":[" : ",\"ops\":[");
    for (size_t i = 0; i < r->nops[k]; i++) {
        const fbc_rop *o = r->ops[k][i];
        fbc_w_str(w, i ? ",{\"op\":" : "{\"op\":");
        fbc_w_json(w, o->op);
        fbc_w_str(w, ",\"count\":");
        fbc_w_u64(w, o->count);
        fbc_w_str(w, ",\"bytes\":");
        fbc_w_u64(w, o->bytes);
        fbc_w_str(w, ",\"max_bytes\":");
        fbc_w_u64(w, o->max_bytes);
        fbc_w_str(w, ",\"shapes\":[");
        for (size_t j = 0; j < o->nshapes; j++) {
            char buf[32];
            fbc_w_str(w, j ? ",{\"dtype\":" : "{\"dtype\":");
            fbc_w_json(w, dtype_name(o->shapes[j].dtype, buf, sizeof buf));
            fbc_w_str(w, ",\"shape\":[");
            for (int d = 0; d < o->shapes[j].rank; d++) {
                if (d)
                    fbc_w_raw(w, ",", 1);
                fbc_w_i64(w, o->shapes[j].dims[d]);
            }
            fbc_w_str(w, "],\"count\":");
            fbc_w_u64(w, o->shapes[j].count);
            fbc_w_raw(w, "}", 1);
        }
        fbc_w_str(w, "],\"sites\":[");
        for (size_t j = 0; j < o->nsites; j++) {
            const fbc_rsite *s = &o->sites[j];
            fbc_w_str(w, j ? ",{\"site\":" : "{\"site\":");
            fbc_w_json(w, s->site);
            if (s->file) {
                fbc_w_str(w, ",\"file\":");
                fbc_w_json(w, s->file);
                if (s->line > 0) {
                    fbc_w_str(w, ",\"line\":");
                    fbc_w_u64(w, (uint64_t)s->line);
                }
            }
            if (s->module) {
                fbc_w_str(w, ",\"module\":");
                fbc_w_json(w, s->module);
            }
            fbc_w_str(w, ",\"count\":");
            fbc_w_u64(w, s->count);
            fbc_w_str(w, ",\"bytes\":");
            fbc_w_u64(w, s->bytes);
            fbc_w_raw(w, "}", 1);
        }
        fbc_w_str(w, "]}");
    }
    fbc_w_raw(w, "]", 1);
}

static void write_stacks(fbc_writer *w, const fbc_report *r)
{
    fbc_framecache *fc = fbc_fc_new(); /* NULL: every frame is formatted where it stands */
    fbc_w_str(w, ",\"stacks\":[");
    for (size_t i = 0; i < r->nstacks; i++) {
        const fbc_rstack *s = &r->stacks[i];
        fbc_w_str(w, i ? ",{\"kind\":" : "{\"kind\":");
        fbc_w_str(w, s->e->kind == FBC_HOST ? "\"host_op\"" : "\"fallback\"");
        fbc_w_str(w, ",\"op\":");
        fbc_w_json(w, s->a.op ? s->a.op : "(unknown)");
        fbc_w_str(w, ",\"site\":");
        fbc_w_json(w, s->a.site ? s->a.site : "(unknown)");
        fbc_w_str(w, ",\"count\":");
        fbc_w_u64(w, s->count);
        fbc_w_str(w, ",\"bytes\":");
        fbc_w_u64(w, s->bytes);
        fbc_w_str(w, ",\"max_bytes\":");
        fbc_w_u64(w, s->max_bytes);
        fbc_w_str(w, ",\"frames\":[");
        for (uint32_t f = 0; f < s->e->nframes; f++) {
            if (f)
                fbc_w_raw(w, ",", 1);
            fbc_fc_write(fc, w, s->e->frames[f], f == 0);
        }
        fbc_w_str(w, "]}");
    }
    fbc_w_raw(w, "]", 1);
    fbc_fc_free(fc);
}

static void write_body(fbc_writer *w, const fbc_report *r, const char *extra)
{
    fbc_w_str(w, ",\"symbolized\":true,\"total\":{\"fallbacks\":");
    fbc_w_u64(w, r->total[FBC_FALLBACK]);
    fbc_w_str(w, ",\"bytes\":");
    fbc_w_u64(w, r->bytes[FBC_FALLBACK]);
    fbc_w_str(w, ",\"max_bytes\":");
    fbc_w_u64(w, r->max[FBC_FALLBACK]);
    fbc_w_str(w, ",\"host_ops\":");
    fbc_w_u64(w, r->total[FBC_HOST]);
    fbc_w_str(w, ",\"host_bytes\":");
    fbc_w_u64(w, r->bytes[FBC_HOST]);
    fbc_w_str(w, ",\"stacks\":");
    fbc_w_u64(w, r->nstacks);
    fbc_w_str(w, "},\"backend\":");
    if (r->has_backend) {
        fbc_w_str(w, "{\"native\":");
        fbc_w_u64(w, r->native);
        fbc_w_str(w, ",\"fallback\":");
        fbc_w_u64(w, r->fallback);
        fbc_w_str(w, ",\"host\":");
        fbc_w_u64(w, r->host);
        fbc_w_raw(w, "}", 1);
    } else {
        fbc_w_str(w, "null");
    }
    if (extra)
        fbc_w_str(w, extra);
    write_ops(w, r, FBC_FALLBACK);
    write_ops(w, r, FBC_HOST);
    write_stacks(w, r);
    fbc_dump_modules(w);
    fbc_w_str(w, "}\n");
}

/* Opens the file for dump seq: the template in use, else the default in the working
 * directory, else /tmp; each fallback is announced once. */
static int open_dump(const char *explicit_path, int seq, char *path, size_t cap, char *tmp,
                     size_t tcap)
{
    if (explicit_path) {
        snprintf(path, cap, "%s", explicit_path);
        return fbc_output_open(path, tmp, tcap);
    }
    static const char *fallbacks[] = {"fbcount.%e.%p.json", "/tmp/fbcount.%e.%p.json"};
    for (int attempt = 0; attempt < 3; attempt++) {
        if (!fbc_output_path(fbc_output_tmpl, seq, path, cap))
            return -2; /* FBCOUNT_OUTPUT=none */
        int fd = fbc_output_open(path, tmp, tcap);
        if (fd >= 0 || attempt == 2)
            return fd;
        const char *next = fallbacks[attempt];
        if (!strcmp(fbc_output_tmpl, next))
            continue;
        char msg[1200];
        snprintf(msg, sizeof msg, "%.900s (%s)", path, strerror(errno));
        fbc_warn("FBCOUNT_OUTPUT: cannot write %.600s; writing to %s instead", msg, next);
        snprintf(fbc_output_tmpl, sizeof fbc_output_tmpl, "%s", next);
    }
    return -1;
}

static int write_dump(const char *reason, const char *explicit_path, const char *extra,
                      fbc_report **keep, char *written, size_t wcap)
{
    int rc = 0;
    pthread_mutex_lock(&fbc_dump_lock);
    int seq = __atomic_add_fetch(&fbc_seq, 1, __ATOMIC_RELAXED);
    fbc_modmap_refresh();
    fbc_report *r = fbc_report_build_process();
    char path[2048], tmp[2100];
    if (written)
        written[0] = '\0';
    if (!r) {
        rc = -1;
    } else {
        int fd = open_dump(explicit_path, seq, path, sizeof path, tmp, sizeof tmp);
        if (fd == -1) {
            fbc_warn("cannot write the %s dump %.600s (%s)", reason, path, strerror(errno));
            rc = -1;
        } else if (fd >= 0) {
            /* A large buffer: 10,000 stacks are tens of MB of JSON, written in few calls. */
            char *big = malloc(BIG_BUF);
            fbc_writer w;
            if (big)
                fbc_w_init(&w, fd, big, BIG_BUF);
            else
                fbc_w_init(&w, fd, wbuf, sizeof wbuf);
            fbc_dump_head(&w, reason, seq);
            write_body(&w, r, extra);
            fbc_w_flush(&w);
            free(big);
            if (fbc_output_commit(fd, tmp, path, !w.failed) != 0) {
                fbc_warn("cannot write the %s dump %.600s (%s)", reason, path, strerror(errno));
                rc = -1;
            } else if (written) {
                snprintf(written, wcap, "%s", path);
            }
        }
    }
    pthread_mutex_unlock(&fbc_dump_lock);
    if (keep)
        *keep = r;
    else
        fbc_report_free(r);
    return rc;
}

int fbc_dump_process(const char *reason, const char *path, const char *extra_json)
{
    return write_dump(reason, path, extra_json, NULL, NULL, 0);
}

static void summary(const fbc_report *r, const char *path)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return;
    char where[2100] = "";
    if (path && *path)
        snprintf(where, sizeof where, " (census: %s)", path);
    uint64_t n = r->total[FBC_FALLBACK];
    if (n == 0 && r->total[FBC_HOST] == 0) {
        fprintf(f, "fbcount: 0 fallbacks%s\n", where);
    } else {
        char b[32], m[32];
        fbc_fmt_bytes(r->bytes[FBC_FALLBACK], b, sizeof b);
        fbc_fmt_bytes(r->max[FBC_FALLBACK], m, sizeof m);
        fprintf(f, "fbcount: %" PRIu64 " fallback%s, %s left the GPU (largest %s); %" PRIu64
                   " host-resident op%s",
                n, n == 1 ? "" : "s", b, m, r->total[FBC_HOST], r->total[FBC_HOST] == 1 ? "" : "s");
        uint64_t all = r->native + r->fallback + r->host;
        if (r->has_backend && all)
            fprintf(f, "; %.1f%% of %" PRIu64 " ops stayed native", 100.0 * (double)r->native / (double)all,
                    all);
        fprintf(f, "%s\n", where);
        fbc_report_text(r, f, "fbcount: ", 5);
    }
    fclose(f);
    for (size_t off = 0; off < len;) {
        ssize_t k = write(2, text + off, len - off);
        if (k <= 0)
            break;
        off += (size_t)k;
    }
    free(text);
}

void fbc_exit_dump(void)
{
    static int done;
    if (!__atomic_load_n(&fbc_process_on, __ATOMIC_ACQUIRE) ||
        __atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
        return;
    if (__atomic_load_n(&fbc_crash_done, __ATOMIC_ACQUIRE))
        return; /* abort mode already wrote the final dump */
    fbc_snapshot_drain();
    fbc_report *r = NULL;
    char path[2048];
    write_dump("exit", NULL, NULL, &r, path, sizeof path);
    if (r && !fbc_cfg.quiet)
        summary(r, path);
    fbc_report_free(r);
}
