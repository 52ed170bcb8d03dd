/* metrics_report.c - see metrics_report.h. Rows come from each dump's ops and their sites,
 * the same numbers the shim formats from its live census. */
#include "metrics_report.h"

#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "metrics.h"

static int to_file(void *ctx, const char *buf, size_t len)
{
    return fwrite(buf, 1, len, ctx) == len ? 0 : 1;
}

typedef struct {
    fbr_metrics_row *rows;
    fbr_metrics_origin *origins;
    size_t n, cap;
} row_list;

static int add_row(row_list *l, const fbr_metrics_row *r, const fbd_op *op)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        fbr_metrics_row *rows = realloc(l->rows, cap * sizeof *rows);
        if (rows)
            l->rows = rows;
        fbr_metrics_origin *o = rows ? realloc(l->origins, cap * sizeof *o) : NULL;
        if (!o)
            return -1;
        l->origins = o;
        l->cap = cap;
    }
    l->rows[l->n] = *r;
    l->origins[l->n++] = (fbr_metrics_origin){op->backend, !op->bytes_known, op->split_timed};
    return 0;
}

static const fbr_metrics_kind kinds[FBD_NKINDS] = {[FBD_FALLBACK] = FBR_METRICS_FALLBACK,
                                                   [FBD_HOST] = FBR_METRICS_HOST,
                                                   [FBD_TRANSFER] = FBR_METRICS_TRANSFER,
                                                   [FBD_SPLIT] = FBR_METRICS_SPLIT};

/* One row per site of each op, and one for what no site accounts for. */
static int add_op(row_list *l, size_t proc, fbd_kind kind, const fbd_op *op)
{
    uint64_t count = 0, bytes = 0, ns = 0;
    for (size_t s = 0; s <= op->nsites; s++) {
        fbr_metrics_row r = {.proc = proc, .kind = kinds[kind], .op = op->op};
        if (s < op->nsites) {
            const fbd_site *site = &op->sites[s];
            r.site = site->site;
            r.file = site->file;
            r.line = site->line;
            r.count = site->count;
            r.bytes = site->bytes;
            r.ns = site->ns;
            count += r.count;
            bytes += r.bytes;
            ns += r.ns;
        } else if (count < op->count || bytes < op->bytes || ns < op->ns || op->nsites == 0) {
            r.count = op->count > count ? op->count - count : 0;
            r.bytes = op->bytes > bytes ? op->bytes - bytes : 0;
            r.ns = op->ns > ns ? op->ns - ns : 0;
        } else {
            continue;
        }
        if (add_row(l, &r, op) != 0)
            return -1;
    }
    return 0;
}

/* The process's labels and its backends' counters (those --where keeps). */
static void add_proc(fbm_census *c, fbd_dump *d, fbr_metrics_proc *p, fbr_metrics_counters *cnt)
{
    fbd_counters be = fbd_backend_stats(d);
    bool vkt = fbm_census_keeps_backend(c, FBR_BACKEND_DEFAULT);
    *p = (fbr_metrics_proc){.pid = fbd_pid(d),
                            .rank = fbd_proc(d)->rank,
                            .host = fbd_host(d),
                            .exe = fbd_exe(d),
                            .has_time = fbd_has_time(d),
                            .has_backend = be.present && vkt,
                            .native = be.native,
                            .fallback = be.fallback,
                            .host_ops = be.host,
                            .backends = cnt};
    size_t nb;
    const fbd_backend *b = fbd_backends(d, &nb);
    for (size_t k = 0; k < nb; k++)
        if (b[k].counters.present && fbm_census_keeps_backend(c, b[k].name))
            cnt[p->nbackends++] = (fbr_metrics_counters){
                b[k].name, b[k].counters.native, b[k].counters.fallback, b[k].counters.host};
    /* libvkt's top-level counters stand for it where backends[] does not list its own. */
    bool listed = false;
    for (size_t k = 0; k < p->nbackends; k++)
        listed |= !strcmp(cnt[k].name, FBR_BACKEND_DEFAULT);
    if (p->nbackends && p->has_backend && !listed)
        cnt[p->nbackends++] =
            (fbr_metrics_counters){FBR_BACKEND_DEFAULT, be.native, be.fallback, be.host};
}

int fbom_write(FILE *out, fbm_census *c, const fbt_opts *o)
{
    (void)o;
    size_t nd = fbm_census_ndumps(c), ncnt = 0;
    for (size_t i = 0; i < nd; i++) {
        size_t nb;
        fbd_backends(fbm_census_dump(c, i), &nb);
        ncnt += nb + 1;
    }
    fbr_metrics_proc *procs = calloc(nd ? nd : 1, sizeof *procs);
    fbr_metrics_counters *cnt = calloc(ncnt ? ncnt : 1, sizeof *cnt), *next = cnt;
    row_list l = {0};
    int rc = -1;
    for (size_t i = 0; procs && cnt && i < nd; i++) {
        fbd_dump *d = fbm_census_dump(c, i);
        add_proc(c, d, &procs[i], next);
        next += procs[i].nbackends;
        for (int kind = 0; kind < FBD_NKINDS; kind++) {
            size_t nops;
            const fbd_op *ops = fbd_ops(d, (fbd_kind)kind, &nops);
            for (size_t k = 0; k < nops; k++)
                if (fbm_census_keeps_backend(c, ops[k].backend) &&
                    add_op(&l, i, (fbd_kind)kind, &ops[k]) != 0)
                    goto out;
        }
    }
    if (procs && cnt)
        rc = fbr_metrics_format_from(procs, nd, l.rows, l.origins, l.n, to_file, out) == 0 ? 0 : -1;
out:
    free(procs);
    free(cnt);
    free(l.rows);
    free(l.origins);
    return rc;
}
