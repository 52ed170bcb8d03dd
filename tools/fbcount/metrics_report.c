/* metrics_report.c - see metrics_report.h. Rows come from each dump's ops and their sites,
 * the same numbers the shim formats from its live census. */
#include "metrics_report.h"

#include <limits.h>
#include <stdlib.h>

#include "fields.h"
#include "metrics.h"

static int to_file(void *ctx, const char *buf, size_t len)
{
    return fwrite(buf, 1, len, ctx) == len ? 0 : 1;
}

/* Times, ranks and site times of newer shims, read from the validated document until the
 * reader's records carry them. */
static json_t *op_json(fbd_dump *d, fbd_kind kind, size_t i)
{
    return json_array_get(json_object_get(fbd_json(d), kind == FBD_HOST ? FBR_HOST_OPS : FBR_OPS),
                          i);
}

static uint64_t ns_of(json_t *o)
{
    json_t *v = json_object_get(o, FBR_NS);
    return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

static long rank_of(fbd_dump *d)
{
    json_t *v = json_object_get(json_object_get(fbd_json(d), FBR_PROCESS), FBR_RANK);
    return json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= LONG_MAX
               ? (long)json_integer_value(v)
               : -1;
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
        json_t *total = json_object_get(fbd_json(d), FBR_TOTAL);
        procs[i] = (fbr_metrics_proc){
            .pid = fbd_pid(d), .rank = rank_of(d), .host = fbd_host(d), .exe = fbd_exe(d),
            .has_time = json_is_integer(json_object_get(total, FBR_NS)),
            .has_backend = be.present, .native = be.native, .fallback = be.fallback,
            .host_ops = be.host};
        for (int kind = FBD_FALLBACK; kind <= FBD_HOST; kind++) {
            size_t nops;
            const fbd_op *ops = fbd_ops(d, (fbd_kind)kind, &nops);
            for (size_t k = 0; k < nops; k++) {
                json_t *oj = op_json(d, (fbd_kind)kind, k);
                json_t *sj = json_object_get(oj, FBR_SITES);
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
                        r->ns = ns_of(json_array_get(sj, s));
                        count += r->count;
                        bytes += r->bytes;
                        ns += r->ns;
                        nrows++;
                    } else if (count < ops[k].count || bytes < ops[k].bytes ||
                               ns < ns_of(oj) || ops[k].nsites == 0) {
                        r->count = ops[k].count > count ? ops[k].count - count : 0;
                        r->bytes = ops[k].bytes > bytes ? ops[k].bytes - bytes : 0;
                        r->ns = ns_of(oj) > ns ? ns_of(oj) - ns : 0;
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
