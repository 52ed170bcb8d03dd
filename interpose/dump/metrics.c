/* metrics.c - FBCOUNT_METRICS: the census as Prometheus text (rules/metrics.h, the formatter
 * `fbcount report --format openmetrics` uses too), rewritten atomically at every snapshot,
 * checkpoint and final dump, in the form node_exporter's textfile collector reads. A path
 * that cannot be written is named in one warning; the program is not affected. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dump.h"
#include "metrics.h"

static int warned;

static int to_writer(void *ctx, const char *buf, size_t len)
{
    fbc_writer *w = ctx;
    fbc_w_raw(w, buf, len);
    return w->failed ? 1 : 0;
}

static size_t count_rows(const fbc_report *r)
{
    size_t n = 0;
    for (int k = 0; k < FBC_KINDS; k++)
        for (size_t i = 0; i < r->nops[k]; i++)
            n += r->ops[k][i]->nsites ? r->ops[k][i]->nsites : 1;
    return n;
}

/* The kinds of the census, as the metrics name them. */
static const fbr_metrics_kind kinds[FBC_KINDS] = {[FBC_FALLBACK] = FBR_METRICS_FALLBACK,
                                                  [FBC_HOST] = FBR_METRICS_HOST,
                                                  [FBC_TRANSFER] = FBR_METRICS_TRANSFER,
                                                  [FBC_SPLIT] = FBR_METRICS_SPLIT};

/* Each row at each of its sites, with the backend that recorded it. */
static size_t fill_rows(const fbc_report *r, fbr_metrics_row *rows, fbr_metrics_origin *origins)
{
    size_t k = 0;
    for (int kind = 0; kind < FBC_KINDS; kind++)
        for (size_t i = 0; i < r->nops[kind]; i++) {
            const fbc_rop *o = r->ops[kind][i];
            fbr_metrics_origin from = {o->backend ? o->backend->row->name : NULL,
                                       !fbc_report_sizes(o->backend),
                                       fbc_report_split_timed(o->backend, (fbc_kind)kind)};
            for (size_t j = 0; j < (o->nsites ? o->nsites : 1); j++) {
                const fbc_rsite *s = o->nsites ? &o->sites[j] : NULL;
                rows[k] = (fbr_metrics_row){0,
                                            kinds[kind],
                                            o->op,
                                            s ? s->site : NULL,
                                            s ? s->file : NULL,
                                            s ? s->line : 0,
                                            s ? s->count : o->count,
                                            s ? s->bytes : o->bytes,
                                            s ? s->ns : o->ns};
                origins[k++] = from;
            }
        }
    return k;
}

/* Each backend's own counters, summed over its modules, for the backends that keep some. */
static size_t fill_counters(const fbc_report *r, fbr_metrics_counters *out)
{
    size_t n = 0, nb = fbc_bmod_count() < FBC_MAX_BMODS ? fbc_bmod_count() : FBC_MAX_BMODS;
    for (size_t i = 0; i < nb; i++) {
        const fbc_counters *c = &r->counters[i];
        if (!c->has)
            continue;
        const char *name = fbc_bmod_at(i)->row->name;
        size_t j = 0;
        while (j < n && strcmp(out[j].name, name))
            j++;
        if (j == n)
            out[n++] = (fbr_metrics_counters){name, 0, 0, 0};
        out[j].native += c->native;
        out[j].fallback += c->fallback;
        out[j].host_ops += c->host;
    }
    return n;
}

void fbc_metrics_write(const fbc_report *r)
{
    if (!fbc_cfg.metrics[0] || !r)
        return;
    size_t n = count_rows(r);
    fbr_metrics_row *rows = calloc(n ? n : 1, sizeof *rows);
    fbr_metrics_origin *origins = calloc(n ? n : 1, sizeof *origins);
    if (!rows || !origins) {
        free(rows);
        free(origins);
        return;
    }
    n = fill_rows(r, rows, origins);
    fbr_metrics_counters counters[FBC_MAX_BMODS];
    fbr_metrics_proc proc = {.pid = fbc_proc.pid,
                             .rank = fbc_proc.rank,
                             .host = fbc_proc.host,
                             .exe = fbc_proc.exe,
                             .has_time = true,
                             .has_backend = r->has_backend,
                             .native = r->native,
                             .fallback = r->fallback,
                             .host_ops = r->host,
                             .backends = counters,
                             .nbackends = fill_counters(r, counters)};
    char tmp[1200];
    int fd = fbc_output_open(fbc_cfg.metrics, tmp, sizeof tmp);
    int rc = -1;
    if (fd >= 0) {
        char buf[16384];
        fbc_writer w;
        fbc_w_init(&w, fd, buf, sizeof buf);
        int f = fbr_metrics_format_from(&proc, 1, rows, origins, n, to_writer, &w);
        fbc_w_flush(&w);
        /* The file is this process's to replace at each state of its census. */
        rc = fbc_output_commit(fd, tmp, fbc_cfg.metrics, f == 0 && !w.failed, true);
    }
    if (rc != 0 && !__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
        fbc_warn("FBCOUNT_METRICS: cannot write %.600s (%s); metrics are off", fbc_cfg.metrics,
                 fd < 0 && errno == EEXIST ? "it is not a regular file" : strerror(errno));
    free(rows);
    free(origins);
}
