/* cmd_diff.c - fbcount diff: how the composition of a census changed between two runs.
 *
 * The total can rise after a fix that worked (fixing dot exposes window_scatter_max), so
 * the output is per op: what appeared, vanished, grew or shrank, in count and in bytes.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "text.h"
#include "units.h"

static const char help[] =
    "usage: fbcount diff [options] OLD NEW\n\n"
    "Compares two censuses (each a dump or a directory of dumps) op by op, for fallbacks\n"
    "and host-resident ops: which appeared, vanished, grew or shrank, by count and bytes.\n\n"
    "  --by op|site         compare ops (default) or call sites\n"
    "  --format text|json   output format (default text)\n"
    "  --all                also list unchanged rows\n"
    "  -h, --help           this text\n\n";

typedef enum { D_APPEARED, D_GREW, D_VANISHED, D_SHRANK, D_SAME } change;
static const char *change_names[] = {"appeared", "grew", "vanished", "shrank", "same"};

typedef struct {
    const char *key;
    uint64_t oc, ob, nc, nb;
    change ch;
} delta;

static int64_t diff64(uint64_t a, uint64_t b) { return (int64_t)b - (int64_t)a; }

static uint64_t mag(int64_t v) { return v < 0 ? (uint64_t)-v : (uint64_t)v; }

static int cmp_delta(const void *pa, const void *pb)
{
    const delta *a = pa, *b = pb;
    if (a->ch != b->ch)
        return (int)a->ch - (int)b->ch;
    uint64_t ab = mag(diff64(a->ob, a->nb)), bb = mag(diff64(b->ob, b->nb));
    if (ab != bb)
        return ab < bb ? 1 : -1;
    uint64_t ac = mag(diff64(a->oc, a->nc)), bc = mag(diff64(b->oc, b->nc));
    if (ac != bc)
        return ac < bc ? 1 : -1;
    return strcmp(a->key, b->key);
}

static delta *compare(fbm_census *o, fbm_census *n, fbd_kind kind, fbm_by by, size_t *count)
{
    size_t no, nn;
    const fbm_row *ro = fbm_census_rows(o, kind, by, FBM_SORT_BYTES, &no);
    const fbm_row *rn = fbm_census_rows(n, kind, by, FBM_SORT_BYTES, &nn);
    delta *d = calloc(no + nn + 1, sizeof *d);
    if (!d)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < no; i++) {
        const fbm_row *m = fbm_census_find(n, kind, by, ro[i].key);
        d[k++] = (delta){ro[i].key, ro[i].count, ro[i].bytes, m ? m->count : 0,
                         m ? m->bytes : 0, D_SAME};
    }
    for (size_t i = 0; i < nn; i++)
        if (!fbm_census_find(o, kind, by, rn[i].key))
            d[k++] = (delta){rn[i].key, 0, 0, rn[i].count, rn[i].bytes, D_SAME};
    for (size_t i = 0; i < k; i++) {
        delta *e = &d[i];
        if (!e->oc && e->nc)
            e->ch = D_APPEARED;
        else if (e->oc && !e->nc)
            e->ch = D_VANISHED;
        else if (e->nb > e->ob || (e->nb == e->ob && e->nc > e->oc))
            e->ch = D_GREW;
        else if (e->nb < e->ob || e->nc < e->oc)
            e->ch = D_SHRANK;
    }
    qsort(d, k, sizeof *d, cmp_delta);
    *count = k;
    return d;
}

static const char *signed_bytes(int64_t v, char *buf, size_t len)
{
    char b[32];
    snprintf(buf, len, "%s%s", v < 0 ? "-" : "+", fbu_bytes(mag(v), b, sizeof b));
    return buf;
}

static void text_section(const char *title, const char *keyname, const delta *d, size_t n,
                         bool all)
{
    printf("\n%s:\n", title);
    size_t shown = 0;
    int w = (int)strlen(keyname);
    for (size_t i = 0; i < n; i++)
        if ((all || d[i].ch != D_SAME) && (int)strlen(d[i].key) > w)
            w = (int)strlen(d[i].key) > 48 ? 48 : (int)strlen(d[i].key);
    for (size_t i = 0; i < n; i++) {
        if (!all && d[i].ch == D_SAME)
            continue;
        if (!shown++)
            printf("  %-9s %-*s %24s  %s\n", "CHANGE", w, keyname, "COUNT OLD -> NEW",
                   "BYTES OLD -> NEW");
        char b1[32], b2[32], b3[40], cnt[64];
        snprintf(cnt, sizeof cnt, "%" PRIu64 " -> %" PRIu64 " (%+" PRId64 ")", d[i].oc, d[i].nc,
                 diff64(d[i].oc, d[i].nc));
        printf("  %-9s %-*.*s %24s  %s -> %s (%s)\n", change_names[d[i].ch], w,
               (int)fbx_utf8_prefix(d[i].key, (size_t)w), d[i].key, cnt,
               fbu_bytes(d[i].ob, b1, sizeof b1), fbu_bytes(d[i].nb, b2, sizeof b2),
               signed_bytes(diff64(d[i].ob, d[i].nb), b3, sizeof b3));
    }
    if (!shown)
        puts("  no change");
}

static json_t *json_section(const char *keyname, const delta *d, size_t n, bool all)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (all || d[i].ch != D_SAME)
            json_array_append_new(a, json_pack("{s:s,s:s,s:{s:I,s:I},s:{s:I,s:I}}", keyname,
                                               d[i].key, "change", change_names[d[i].ch], "old",
                                               "count", (json_int_t)d[i].oc, "bytes",
                                               (json_int_t)d[i].ob, "new", "count",
                                               (json_int_t)d[i].nc, "bytes",
                                               (json_int_t)d[i].nb));
    return a;
}

int fbx_diff(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"by", required_argument, 0, 'b'}, {"format", required_argument, 0, 'f'},
        {"all", no_argument, 0, 'a'},      {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    fbm_by by = FBM_BY_OP;
    bool json = false, all = false;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'b':
            if (strcmp(optarg, "op") && strcmp(optarg, "site")) {
                fbx_error("diff", "--by: unknown value '%s' (op or site)", optarg);
                return FBX_USAGE;
            }
            by = strcmp(optarg, "op") ? FBM_BY_SITE : FBM_BY_OP;
            break;
        case 'f':
            if (strcmp(optarg, "text") && strcmp(optarg, "json")) {
                fbx_error("diff", "--format: unknown value '%s' (text or json)", optarg);
                return FBX_USAGE;
            }
            json = !strcmp(optarg, "json");
            break;
        case 'a': all = true; break;
        case 'h': fputs(help, stdout); fputs(fbx_exit_codes, stdout); return FBX_OK;
        default:
            fbx_error("diff", "unknown or incomplete option '%s' (try --help)", argv[optind - 1]);
            return FBX_USAGE;
        }
    }
    if (argc - optind != 2) {
        fbx_error("diff", "expected two censuses, OLD and NEW (try --help)");
        return FBX_USAGE;
    }
    int code;
    fbm_census *o = fbx_load("diff", argv + optind, 1, &code);
    if (!o)
        return code;
    fbm_census *n = fbx_load("diff", argv + optind + 1, 1, &code);
    if (!n) {
        fbm_census_free(o);
        return code;
    }
    const char *keyname = by == FBM_BY_OP ? "op" : "site";
    size_t nf = 0, nh = 0;
    delta *df = compare(o, n, FBD_FALLBACK, by, &nf);
    delta *dh = compare(o, n, FBD_HOST, by, &nh);
    fbm_summary so = fbm_census_summary(o), sn = fbm_census_summary(n);
    int rc = FBX_OK;
    if (!df || !dh) {
        fbx_error("diff", "out of memory");
        rc = FBX_READ;
    } else if (json) {
        json_t *j = json_pack("{s:s,s:s,s:s,s:{s:I,s:I,s:I,s:I},s:{s:I,s:I,s:I,s:I},s:o,s:o}",
                              "schema", "fbcount-diff/1", "old", argv[optind], "new",
                              argv[optind + 1], "old_total", "fallbacks",
                              (json_int_t)so.total.fallbacks, "bytes",
                              (json_int_t)so.total.bytes, "host_ops",
                              (json_int_t)so.total.host_ops, "host_bytes",
                              (json_int_t)so.total.host_bytes, "new_total", "fallbacks",
                              (json_int_t)sn.total.fallbacks, "bytes",
                              (json_int_t)sn.total.bytes, "host_ops",
                              (json_int_t)sn.total.host_ops, "host_bytes",
                              (json_int_t)sn.total.host_bytes, "fallbacks",
                              json_section(keyname, df, nf, all), "host_ops",
                              json_section(keyname, dh, nh, all));
        if (!j || json_dumpf(j, stdout, JSON_INDENT(2)) != 0)
            rc = FBX_READ;
        putchar('\n');
        json_decref(j);
    } else {
        char b1[32], b2[32], b3[40];
        printf("fbcount diff: %s (%zu dump%s) -> %s (%zu dump%s)\n", argv[optind], so.dumps,
               so.dumps == 1 ? "" : "s", argv[optind + 1], sn.dumps, sn.dumps == 1 ? "" : "s");
        printf("fallbacks:         %" PRIu64 " -> %" PRIu64 " (%+" PRId64 "), %s -> %s (%s)\n",
               so.total.fallbacks, sn.total.fallbacks,
               diff64(so.total.fallbacks, sn.total.fallbacks),
               fbu_bytes(so.total.bytes, b1, sizeof b1), fbu_bytes(sn.total.bytes, b2, sizeof b2),
               signed_bytes(diff64(so.total.bytes, sn.total.bytes), b3, sizeof b3));
        printf("host-resident ops: %" PRIu64 " -> %" PRIu64 " (%+" PRId64 "), %s -> %s (%s)\n",
               so.total.host_ops, sn.total.host_ops, diff64(so.total.host_ops, sn.total.host_ops),
               fbu_bytes(so.total.host_bytes, b1, sizeof b1),
               fbu_bytes(sn.total.host_bytes, b2, sizeof b2),
               signed_bytes(diff64(so.total.host_bytes, sn.total.host_bytes), b3, sizeof b3));
        text_section("Fallbacks", keyname, df, nf, all);
        text_section("Host-resident ops", keyname, dh, nh, all);
    }
    free(df);
    free(dh);
    fbm_census_free(o);
    fbm_census_free(n);
    return rc;
}
