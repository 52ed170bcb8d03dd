/* cmd_diff.c - fbcount diff: how the composition of a census changed between two runs.
 *
 * The total can rise after a fix that worked (fixing dot exposes window_scatter_max), so
 * the output is per op: what appeared, vanished, grew or shrank, in count, bytes and time.
 */
#include <dirent.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "fields.h"
#include "table.h"
#include "text.h"
#include "units.h"

static const char help[] =
    "usage: fbcount diff [options] [OLD] [NEW]\n\n"
    "Compares two censuses (each a dump or a directory of dumps) op by op, for fallbacks\n"
    "and host-resident ops: which appeared, vanished, grew or shrank, by count, bytes and\n"
    "(when the dumps carry it) time. Without arguments, compares the two newest fbcount-*\n"
    "folders in the working directory; with one, compares it against the newest.\n\n"
    "  --by op|site                 compare ops (default) or call sites\n"
    "  --sort bytes|count|time      order rows within each change by (default bytes)\n"
    "  --format text|json           output format (default text; json: fbcount-diff/1)\n"
    "  --all                        also list unchanged rows\n"
    "  -V, --version                print the version\n"
    "  -h, --help                   this text\n\n";

typedef enum { D_APPEARED, D_GREW, D_VANISHED, D_SHRANK, D_SAME } change;
static const char *change_names[] = {"appeared", "grew", "vanished", "shrank", "same"};

typedef struct {
    const fbm_row *row; /* the new row, else the old one: names the op or site */
    uint64_t oc, ob, on, nc, nb, nn;
    change ch;
} delta;

static int64_t diff64(uint64_t a, uint64_t b) { return (int64_t)b - (int64_t)a; }

static uint64_t mag(int64_t v) { return v < 0 ? (uint64_t)-v : (uint64_t)v; }

static fbm_sort g_sort;

static int cmp_delta(const void *pa, const void *pb)
{
    const delta *a = pa, *b = pb;
    if (a->ch != b->ch)
        return (int)a->ch - (int)b->ch;
    uint64_t k[2][3] = {{mag(diff64(a->ob, a->nb)), mag(diff64(a->oc, a->nc)),
                         mag(diff64(a->on, a->nn))},
                        {mag(diff64(b->ob, b->nb)), mag(diff64(b->oc, b->nc)),
                         mag(diff64(b->on, b->nn))}};
    static const int order[3][3] = {{0, 1, 2}, {1, 0, 2}, {2, 0, 1}};
    for (int i = 0; i < 3; i++) {
        int j = order[g_sort][i];
        if (k[0][j] != k[1][j])
            return k[0][j] < k[1][j] ? 1 : -1;
    }
    return strcmp(a->row->key, b->row->key);
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
        d[k++] = (delta){m ? m : &ro[i], ro[i].count, ro[i].bytes, ro[i].ns,
                         m ? m->count : 0, m ? m->bytes : 0, m ? m->ns : 0, D_SAME};
    }
    for (size_t i = 0; i < nn; i++)
        if (!fbm_census_find(o, kind, by, rn[i].key))
            d[k++] = (delta){&rn[i], 0, 0, 0, rn[i].count, rn[i].bytes, rn[i].ns, D_SAME};
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

static const char *signed_time(int64_t v, char *buf, size_t len)
{
    char b[32];
    snprintf(buf, len, "%s%s", v < 0 ? "-" : "+", fbu_duration(mag(v), b, sizeof b));
    return buf;
}

typedef struct {
    const delta *d;
    size_t *idx;
    bool time;
} diff_ctx;

static void diff_cells(void *p, size_t i, char **cells)
{
    const diff_ctx *c = p;
    const delta *d = &c->d[c->idx[i]];
    char b1[32], b2[32], b3[40];
    snprintf(cells[0], FBT_CELL, "%s", change_names[d->ch]);
    snprintf(cells[1], FBT_CELL, "%s", d->row->key);
    fbx_utf8_truncate(cells[1], FBT_CELL - 1);
    snprintf(cells[2], FBT_CELL, "%" PRIu64 " -> %" PRIu64 " (%+" PRId64 ")", d->oc, d->nc,
             diff64(d->oc, d->nc));
    snprintf(cells[3], FBT_CELL, "%s -> %s (%s)", fbu_bytes(d->ob, b1, sizeof b1),
             fbu_bytes(d->nb, b2, sizeof b2), signed_bytes(diff64(d->ob, d->nb), b3, sizeof b3));
    if (c->time)
        snprintf(cells[4], FBT_CELL, "%s -> %s (%s)", fbu_duration(d->on, b1, sizeof b1),
                 fbu_duration(d->nn, b2, sizeof b2), signed_time(diff64(d->on, d->nn), b3,
                                                                 sizeof b3));
}

static void text_section(FILE *out, const char *title, fbm_by by, const delta *d, size_t n,
                         bool all, bool time)
{
    fprintf(out, "\n%s:\n", title);
    size_t *idx = calloc(n + 1, sizeof *idx), shown = 0;
    if (!idx)
        return;
    for (size_t i = 0; i < n; i++)
        if (all || d[i].ch != D_SAME)
            idx[shown++] = i;
    if (!shown) {
        fputs("  no change\n", out);
        free(idx);
        return;
    }
    fbt_col cols[5] = {{"CHANGE", false, false}, {by == FBM_BY_OP ? "op" : "site", false, true},
                       {"COUNT OLD -> NEW", true, false}, {"BYTES OLD -> NEW", false, false},
                       {"TIME OLD -> NEW", false, false}};
    fbt_opts o = {.width = fbt_term_width(out)};
    diff_ctx c = {d, idx, time};
    fbt_print(out, &o, cols, time ? 5 : 4, shown, diff_cells, &c);
    free(idx);
}

static json_t *json_section(fbm_by by, const delta *d, size_t n, bool all, bool time)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        if (!all && d[i].ch == D_SAME)
            continue;
        const fbm_row *r = d[i].row;
        json_t *e = json_object(), *old = json_object(), *new = json_object();
        if (!e || !old || !new)
            break;
        if (by == FBM_BY_OP) {
            json_object_set_new(e, FBR_OP, json_string(r->op));
        } else {
            json_object_set_new(e, FBR_SITE, json_string(r->site));
            fbt_add_demangled(e, r->site);
            if (r->file)
                json_object_set_new(e, FBR_FILE, json_string(r->file));
            if (r->line > 0)
                json_object_set_new(e, FBR_LINE, json_integer(r->line));
        }
        json_object_set_new(e, "change", json_string(change_names[d[i].ch]));
        json_object_set_new(old, FBR_COUNT, json_integer((json_int_t)d[i].oc));
        json_object_set_new(old, FBR_BYTES, json_integer((json_int_t)d[i].ob));
        json_object_set_new(new, FBR_COUNT, json_integer((json_int_t)d[i].nc));
        json_object_set_new(new, FBR_BYTES, json_integer((json_int_t)d[i].nb));
        if (time) {
            json_object_set_new(old, FBR_NS, json_integer((json_int_t)d[i].on));
            json_object_set_new(new, FBR_NS, json_integer((json_int_t)d[i].nn));
        }
        json_object_set_new(e, "old", old);
        json_object_set_new(e, "new", new);
        json_array_append_new(a, e);
    }
    return a;
}

static json_t *total_json(const fbm_summary *s)
{
    json_t *t = json_pack("{s:I,s:I,s:I,s:I}", FBR_FALLBACKS, (json_int_t)s->total.fallbacks,
                          FBR_BYTES, (json_int_t)s->total.bytes, FBR_HOST_OPS,
                          (json_int_t)s->total.host_ops, FBR_HOST_BYTES,
                          (json_int_t)s->total.host_bytes);
    if (t && s->timed) {
        json_object_set_new(t, FBR_NS, json_integer((json_int_t)s->total.ns));
        json_object_set_new(t, FBR_HOST_NS, json_integer((json_int_t)s->total.host_ns));
    }
    return t;
}

typedef struct {
    char name[256];
    struct timespec mtime;
} folder;

static int cmp_folder(const void *pa, const void *pb)
{
    const folder *a = pa, *b = pb;
    if (a->mtime.tv_sec != b->mtime.tv_sec)
        return a->mtime.tv_sec < b->mtime.tv_sec ? -1 : 1;
    if (a->mtime.tv_nsec != b->mtime.tv_nsec)
        return a->mtime.tv_nsec < b->mtime.tv_nsec ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* The k (1 or 2) newest fbcount-* folders here, oldest first: what fbcount run leaves. */
static int newest(size_t k, char names[][4096], size_t nargs)
{
    DIR *dp = opendir(".");
    folder f[2] = {{"", {0, 0}}, {"", {0, 0}}}, cur;
    size_t n = 0;
    struct dirent *e;
    while (dp && (e = readdir(dp))) {
        struct stat sb;
        if (!fbx_is_run_dir(e->d_name) || lstat(e->d_name, &sb) || !S_ISDIR(sb.st_mode) ||
            strlen(e->d_name) >= sizeof cur.name)
            continue;
        snprintf(cur.name, sizeof cur.name, "%s", e->d_name);
        cur.mtime = sb.st_mtim;
        if (n < 2)
            f[n++] = cur;
        else if (cmp_folder(&cur, &f[0]) > 0 || cmp_folder(&cur, &f[1]) > 0)
            f[cmp_folder(&f[0], &f[1]) < 0 ? 0 : 1] = cur;
    }
    if (dp)
        closedir(dp);
    if (n == 2 && cmp_folder(&f[0], &f[1]) > 0) {
        cur = f[0];
        f[0] = f[1];
        f[1] = cur;
    }
    if (n < k) {
        fbx_error("diff", "expected two censuses, OLD and NEW: %zu given, and %s fbcount-* "
                  "folder%s here (try --help)", nargs, n ? "only one" : "no", n ? "" : "s");
        return -1;
    }
    for (size_t i = 0; i < k; i++)
        snprintf(names[i], 4096, "%s", f[n - k + i].name);
    if (k == 2)
        fprintf(stderr, "fbcount: diff: comparing %s -> %s (the two newest fbcount-* folders "
                "here)\n", names[0], names[1]);
    else
        fprintf(stderr, "fbcount: diff: comparing against %s (the newest fbcount-* folder "
                "here)\n", names[0]);
    return 0;
}

int fbx_diff(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"by", required_argument, 0, 'b'}, {"format", required_argument, 0, 'f'},
        {"sort", required_argument, 0, 's'}, {"all", no_argument, 0, 'a'},
        {"version", no_argument, 0, 'V'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    fbm_by by = FBM_BY_OP;
    bool json = false, all = false;
    int opt;
    g_sort = FBM_SORT_BYTES;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "hV", longopts, NULL)) != -1) {
        switch (opt) {
        case 'b':
            if (strcmp(optarg, "op") && strcmp(optarg, "site")) {
                fbx_error("diff", "--by: unknown value '%s' (op or site)", optarg);
                return FBX_USAGE;
            }
            by = strcmp(optarg, "op") ? FBM_BY_SITE : FBM_BY_OP;
            break;
        case 's':
            if (strcmp(optarg, "bytes") && strcmp(optarg, "count") && strcmp(optarg, "time")) {
                fbx_error("diff", "--sort: unknown value '%s' (bytes, count or time)", optarg);
                return FBX_USAGE;
            }
            g_sort = !strcmp(optarg, "bytes") ? FBM_SORT_BYTES
                     : !strcmp(optarg, "count") ? FBM_SORT_COUNT : FBM_SORT_TIME;
            break;
        case 'f':
            if (strcmp(optarg, "text") && strcmp(optarg, "json")) {
                fbx_error("diff", "--format: unknown value '%s' (text or json)", optarg);
                return FBX_USAGE;
            }
            json = !strcmp(optarg, "json");
            break;
        case 'a': all = true; break;
        case 'V': fbx_version(); return fbx_finish("diff", FBX_OK);
        case 'h':
            fputs(help, stdout);
            fputs(fbx_exit_codes, stdout);
            return fbx_finish("diff", FBX_OK);
        default:
            fbx_error("diff", "unknown or incomplete option '%s' (try --help)", argv[optind - 1]);
            return FBX_USAGE;
        }
    }
    char d[2][4096];
    char *paths[2];
    int nargs = argc - optind;
    if (nargs > 2) {
        fbx_error("diff", "expected two censuses, OLD and NEW (try --help)");
        return FBX_USAGE;
    } else if (nargs == 2) {
        paths[0] = argv[optind];
        paths[1] = argv[optind + 1];
    } else if (nargs == 1) {
        if (newest(1, d, 1) != 0)
            return FBX_USAGE;
        paths[0] = argv[optind];
        paths[1] = d[0];
    } else {
        if (newest(2, d, 0) != 0)
            return FBX_USAGE;
        paths[0] = d[0];
        paths[1] = d[1];
    }
    int code;
    fbm_census *o = fbx_load("diff", paths, 1, &code);
    if (!o)
        return code;
    fbm_census *n = fbx_load("diff", paths + 1, 1, &code);
    if (!n) {
        fbm_census_free(o);
        return code;
    }
    size_t nf = 0, nh = 0;
    delta *df = compare(o, n, FBD_FALLBACK, by, &nf);
    delta *dh = compare(o, n, FBD_HOST, by, &nh);
    fbm_summary so = fbm_census_summary(o), sn = fbm_census_summary(n);
    bool time = so.timed || sn.timed;
    int rc = FBX_OK;
    if (!df || !dh) {
        fbx_error("diff", "out of memory");
        rc = FBX_READ;
    } else if (json) {
        json_t *j = json_pack("{s:s,s:s,s:s,s:s,s:o,s:o,s:o,s:o}", FBR_SCHEMA, "fbcount-diff/1",
                              "by", by == FBM_BY_OP ? "op" : "site", "old", paths[0], "new",
                              paths[1], "old_total", total_json(&so), "new_total",
                              total_json(&sn), FBR_FALLBACKS,
                              json_section(by, df, nf, all, time), FBR_HOST_OPS,
                              json_section(by, dh, nh, all, time));
        if (!j || json_dumpf(j, stdout, JSON_INDENT(2)) != 0)
            rc = FBX_WRITE;
        putchar('\n');
        json_decref(j);
    } else {
        char b1[32], b2[32], b3[40], e0[1200], e1[1200];
        printf("fbcount diff: %s (%zu dump%s) -> %s (%zu dump%s)\n",
               fbx_escape(paths[0], e0, sizeof e0, 0), so.dumps, so.dumps == 1 ? "" : "s",
               fbx_escape(paths[1], e1, sizeof e1, 0), sn.dumps, sn.dumps == 1 ? "" : "s");
        printf("fallbacks:         %" PRIu64 " -> %" PRIu64 " (%+" PRId64 "), %s -> %s (%s)\n",
               so.total.fallbacks, sn.total.fallbacks,
               diff64(so.total.fallbacks, sn.total.fallbacks),
               fbu_bytes(so.total.bytes, b1, sizeof b1), fbu_bytes(sn.total.bytes, b2, sizeof b2),
               signed_bytes(diff64(so.total.bytes, sn.total.bytes), b3, sizeof b3));
        if (time)
            printf("fallback time:     %s -> %s (%s)\n", fbu_duration(so.total.ns, b1, sizeof b1),
                   fbu_duration(sn.total.ns, b2, sizeof b2),
                   signed_time(diff64(so.total.ns, sn.total.ns), b3, sizeof b3));
        printf("host-resident ops: %" PRIu64 " -> %" PRIu64 " (%+" PRId64 "), %s -> %s (%s)\n",
               so.total.host_ops, sn.total.host_ops, diff64(so.total.host_ops, sn.total.host_ops),
               fbu_bytes(so.total.host_bytes, b1, sizeof b1),
               fbu_bytes(sn.total.host_bytes, b2, sizeof b2),
               signed_bytes(diff64(so.total.host_bytes, sn.total.host_bytes), b3, sizeof b3));
        text_section(stdout, "Fallbacks", by, df, nf, all, time);
        text_section(stdout, "Host-resident ops", by, dh, nh, all, time);
    }
    free(df);
    free(dh);
    fbm_census_free(o);
    fbm_census_free(n);
    return fbx_finish("diff", rc);
}
