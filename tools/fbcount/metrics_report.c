/* metrics_report.c - see metrics_report.h. Rows come from each dump's ops and their sites,
 * the same numbers the shim formats from its live census. */
#include "metrics_report.h"

#include <stdlib.h>

#include "metrics.h"

static int to_file(void *ctx, const char *buf, size_t len)
{
    return fwrite(buf, 1, len, ctx) == len ? 0 : 1;
}

int fbom_write(fbm_census *c, FILE *out)
{
    size_t nd = fbm_census_ndumps(c), nrows = 0, cap = 0;
    fbr_metrics_proc *procs = calloc(nd ? nd : 1, sizeof *procs);
    fbr_metrics_row *rows = NULL;
    int rc = -1;
    if (!procs)
        return -1;
    for (size_t i = 0; i < nd; i++) {
        fbd_dump *d = fbm_census_dump(c, i);
        fbd_backend be = fbd_backend_stats(d);
        procs[i] = (fbr_metrics_proc){
            .pid = fbd_pid(d), .rank = fbd_proc(d)->rank, .host = fbd_host(d), .exe = fbd_exe(d),
            .has_time = fbd_has_time(d),
            .has_backend = be.present, .native = be.native, .fallback = be.fallback,
            .host_ops = be.host};
        for (int kind = FBD_FALLBACK; kind <= FBD_HOST; kind++) {
            size_t nops;
            const fbd_op *ops = fbd_ops(d, (fbd_kind)kind, &nops);
            for (size_t k = 0; k < nops; k++) {
                uint64_t count = 0, bytes = 0, ns = 0;
                /* Each site is a row; what no site accounts for is a row without one. */
                for (size_t s = 0; s <= ops[k].nsites; s++) {
                    if (nrows == cap) {
                        cap = cap ? cap * 2 : 64;
                        fbr_metrics_row *nr = realloc(rows, cap * sizeof *nr);
                        if (!nr)
                            goto out;
                        rows = nr;
                    }
                    fbr_metrics_row *r = &rows[nrows];
                    *r = (fbr_metrics_row){.proc = i, .kind = kind == FBD_HOST
                                                                  ? FBR_METRICS_HOST
                                                                  : FBR_METRICS_FALLBACK,
                                           .op = ops[k].op};
                    if (s < ops[k].nsites) {
                        const fbd_site *site = &ops[k].sites[s];
                        r->site = site->site;
                        r->file = site->file;
                        r->line = site->line;
                        r->count = site->count;
                        r->bytes = site->bytes;
                        r->ns = site->ns;
                        count += r->count;
                        bytes += r->bytes;
                        ns += r->ns;
                        nrows++;
                    } else if (count < ops[k].count || bytes < ops[k].bytes ||
                               ns < ops[k].ns || ops[k].nsites == 0) {
                        r->count = ops[k].count > count ? ops[k].count - count : 0;
                        r->bytes = ops[k].bytes > bytes ? ops[k].bytes - bytes : 0;
                        r->ns = ops[k].ns > ns ? ops[k].ns - ns : 0;
                        nrows++;
                    }
                }
            }
        }
    }
    rc = fbr_metrics_format(procs, nd, rows, nrows, to_file, out) == 0 ? 0 : -1;
out:
    free(procs);
    free(rows);
    return rc;
}
