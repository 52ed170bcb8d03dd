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
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < r->nops[k]; i++)
            n += r->ops[k][i]->nsites ? r->ops[k][i]->nsites : 1;
    return n;
}

void fbc_metrics_write(const fbc_report *r)
{
    if (!fbc_cfg.metrics[0] || !r)
        return;
    size_t n = count_rows(r), k = 0;
    fbr_metrics_row *rows = calloc(n ? n : 1, sizeof *rows);
    if (!rows)
        return;
    for (int kind = 0; kind < 2; kind++)
        for (size_t i = 0; i < r->nops[kind]; i++) {
            const fbc_rop *o = r->ops[kind][i];
            for (size_t j = 0; j < (o->nsites ? o->nsites : 1); j++) {
                fbr_metrics_row *row = &rows[k++];
                row->kind = kind == FBC_HOST ? FBR_METRICS_HOST : FBR_METRICS_FALLBACK;
                row->op = o->op;
                if (o->nsites) {
                    const fbc_rsite *s = &o->sites[j];
                    *row = (fbr_metrics_row){0, row->kind, o->op, s->site, s->file, s->line,
                                             s->count, s->bytes, s->ns};
                } else {
                    row->count = o->count;
                    row->bytes = o->bytes;
                    row->ns = o->ns;
                }
            }
        }
    fbr_metrics_proc proc = {.pid = fbc_proc.pid, .rank = fbc_proc.rank, .host = fbc_proc.host,
                             .exe = fbc_proc.exe, .has_time = true,
                             .has_backend = r->has_backend, .native = r->native,
                             .fallback = r->fallback, .host_ops = r->host};
    char tmp[1200];
    int fd = fbc_output_open(fbc_cfg.metrics, tmp, sizeof tmp);
    int rc = -1;
    if (fd >= 0) {
        char buf[16384];
        fbc_writer w;
        fbc_w_init(&w, fd, buf, sizeof buf);
        int f = fbr_metrics_format(&proc, 1, rows, n, to_writer, &w);
        fbc_w_flush(&w);
        /* The file is this process's to replace at each state of its census. */
        rc = fbc_output_commit(fd, tmp, fbc_cfg.metrics, f == 0 && !w.failed, true);
    }
    if (rc != 0 && !__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
        fbc_warn("FBCOUNT_METRICS: cannot write %.600s (%s); metrics are off", fbc_cfg.metrics,
                 fd < 0 && errno == EEXIST ? "it is not a regular file" : strerror(errno));
    free(rows);
}
