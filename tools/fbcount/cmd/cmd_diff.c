/* cmd_diff.c - fbcount diff: how the composition of a census changed between two runs.
 *
 * The total can rise after a fix that worked (fixing dot exposes window_scatter_max), so
 * the output is per op: what appeared, vanished, grew or shrank, in count, bytes and time.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "cli.h"
#include "report_json.h"
#include "run_dir.h"
#include "text.h"
#include "units.h"

/* The groupings diff compares: by name they are report's (table.c). */
static const fbm_by diff_bys[] = {FBM_BY_OP, FBM_BY_SITE, FBM_BY_BACKEND};
#define NDIFF_BYS (sizeof diff_bys / sizeof *diff_bys)
static const fbx_choice diff_formats[] = {{"text", 0}, {"json", 1}};

static const fbx_choice *by_choices(void)
{
    static fbx_choice list[NDIFF_BYS];
    for (size_t i = 0; i < NDIFF_BYS; i++)
        list[i] = (fbx_choice){fbt_by_name(diff_bys[i]), (int)diff_bys[i]};
    return list;
}

FBX_CHOICE_VALUES(by_values, by_choices(), NDIFF_BYS)
FBX_CHOICE_VALUES(sort_values, fbt_sorts, fbt_nsorts)
FBX_CHOICE_VALUES(format_values, diff_formats, 2)

static const fbx_opt options[] = {
    {'b', false, "by", "%s", "compare ops (default), call sites or backends", by_values, NULL},
    {'s', false, "sort", "%s", "order rows within each change by (default bytes)", sort_values,
     NULL},
    {'W', false, "where", "FIELD=VALUE", "FIELD one of %s, in both censuses,\nas for report",
     fbm_where_help, NULL},
    {'f', false, "format", "%s", "output format (default text; json: fbcount-diff/1)",
     format_values, NULL},
    {'a', false, "all", NULL, "also list unchanged rows", NULL, NULL},
    {'i', false, "fail-on-increase", NULL,
     "exit 1 when NEW has more fallbacks, or more bytes\nleaving the GPU, than OLD", NULL, NULL},
    FBX_OPTS_VERSION_HELP,
};
#define NOPTIONS (sizeof options / sizeof *options)

static void help(void)
{
    printf("usage: fbcount diff [options] [OLD] [NEW]\n\n"
           "Compares two censuses (each a dump or a directory of dumps) op by op, for fallbacks,\n"
           "host-resident ops and transfers: which appeared, vanished, grew or shrank, by count,\n"
           "bytes and (when the dumps carry it) time. Without arguments, compares the two newest\n"
           "fbcount-* folders with a dump in the working directory; with one, compares it against\n"
           "the newest.\n\n");
    fbx_put_options(stdout, options, NOPTIONS, 31);
    putchar('\n');
    fbx_put_exit_codes(stdout, "diff");
}

typedef enum { D_APPEARED, D_GREW, D_VANISHED, D_SHRANK, D_SAME } change;
static const char *change_names[] = {"appeared", "grew", "vanished", "shrank", "same"};

typedef struct {
    const fbm_row *row; /* the new row, else the old one: names the op or site */
    uint64_t oc, ob, on, nc, nb, nn;
    uint64_t ou, nu; /* calls whose bytes their backend could not read */
    change ch;
} delta;

static int64_t diff64(uint64_t a, uint64_t b)
{
    return (int64_t)b - (int64_t)a;
}

static uint64_t mag(int64_t v)
{
    return v < 0 ? (uint64_t)-v : (uint64_t)v;
}

static fbm_sort g_sort;

static int cmp_delta(const void *pa, const void *pb)
{
    const delta *a = pa, *b = pb;
    if (a->ch != b->ch)
        return (int)a->ch - (int)b->ch;
    uint64_t k[2][3] = {
        {mag(diff64(a->ob, a->nb)), mag(diff64(a->oc, a->nc)), mag(diff64(a->on, a->nn))},
        {mag(diff64(b->ob, b->nb)), mag(diff64(b->oc, b->nc)), mag(diff64(b->on, b->nn))}};
    static const int order[3][3] = {{0, 1, 2}, {1, 0, 2}, {2, 0, 1}};
    for (int i = 0; i < 3; i++) {
        int j = order[g_sort][i];
        if (k[0][j] != k[1][j])
            return k[0][j] < k[1][j] ? 1 : -1;
    }
    int s = strcmp(a->row->key, b->row->key);
    if (s || !a->row->backend || !b->row->backend)
        return s;
    return strcmp(a->row->backend, b->row->backend);
}

static change classify(const delta *e)
{
    if (!e->oc && e->nc)
        return D_APPEARED;
    if (e->oc && !e->nc)
        return D_VANISHED;
    if (e->nb > e->ob || (e->nb == e->ob && e->nc > e->oc))
        return D_GREW;
    if (e->nb < e->ob || e->nc < e->oc)
        return D_SHRANK;
    return D_SAME;
}

/* The rows of both censuses matched by backend and key. NULL when out of memory. */
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
        const fbm_row *m = fbm_census_find(n, kind, by, ro[i].backend, ro[i].key);
        d[k++] = (delta){
            m ? m : &ro[i],   ro[i].count,   ro[i].bytes,   ro[i].ns,           m ? m->count : 0,
            m ? m->bytes : 0, m ? m->ns : 0, ro[i].unknown, m ? m->unknown : 0, D_SAME};
    }
    for (size_t i = 0; i < nn; i++)
        if (!fbm_census_find(o, kind, by, rn[i].backend, rn[i].key))
            d[k++] = (delta){&rn[i],        0,     0, 0, rn[i].count, rn[i].bytes, rn[i].ns, 0,
                             rn[i].unknown, D_SAME};
    for (size_t i = 0; i < k; i++)
        d[i].ch = classify(&d[i]);
    qsort(d, k, sizeof *d, cmp_delta);
    *count = k;
    return d;
}

static const char *signed_bytes(int64_t v, char *buf, size_t len)
{
    char b[32];
    snprintf(buf, len, "%s%s", v < 0 ? "-" : "+", fbr_bytes(mag(v), b, sizeof b));
    return buf;
}

static const char *signed_time(int64_t v, char *buf, size_t len)
{
    char b[32];
    snprintf(buf, len, "%s%s", v < 0 ? "-" : "+", fbr_duration(mag(v), b, sizeof b));
    return buf;
}

typedef struct {
    const delta *d;
    size_t *idx;
    bool time, backend;
} diff_ctx;

static void diff_cells(void *p, size_t i, char **cells)
{
    const diff_ctx *c = p;
    const delta *d = &c->d[c->idx[i]];
    char b1[32], b2[32], b3[40];
    int k = 0;
    snprintf(cells[k++], FBT_CELL, "%s", change_names[d->ch]);
    snprintf(cells[k], FBT_CELL, "%s", d->row->key);
    fbx_utf8_truncate(cells[k++], FBT_CELL - 1);
    if (c->backend)
        snprintf(cells[k++], FBT_CELL, "%s", d->row->backend ? d->row->backend : "-");
    snprintf(cells[k++], FBT_CELL, "%" PRIu64 " -> %" PRIu64 " (%+" PRId64 ")", d->oc, d->nc,
             diff64(d->oc, d->nc));
    /* Bytes a backend could not read are "?", and so is a change that involves them. */
    snprintf(cells[k++], FBT_CELL, "%s -> %s (%s)",
             fbt_bytes(d->ob, d->ou, d->oc, false, b1, sizeof b1),
             fbt_bytes(d->nb, d->nu, d->nc, false, b2, sizeof b2),
             d->ou || d->nu ? "?" : signed_bytes(diff64(d->ob, d->nb), b3, sizeof b3));
    if (c->time)
        snprintf(cells[k], FBT_CELL, "%s -> %s (%s)", fbr_duration(d->on, b1, sizeof b1),
                 fbr_duration(d->nn, b2, sizeof b2),
                 signed_time(diff64(d->on, d->nn), b3, sizeof b3));
}

typedef struct {
    fbm_by by;
    bool all, time, backend, json, fail_on_increase;
    fbm_census *c[2]; /* OLD and NEW: --where applies to both */
} diff_opts;

static void text_section(FILE *out, const char *title, const diff_opts *o, const delta *d, size_t n)
{
    fprintf(out, "\n%s:\n", title);
    size_t *idx = calloc(n + 1, sizeof *idx), shown = 0;
    if (!idx)
        return;
    for (size_t i = 0; i < n; i++)
        if (o->all || d[i].ch != D_SAME)
            idx[shown++] = i;
    if (!shown) {
        fputs("  no change\n", out);
        free(idx);
        return;
    }
    fbt_col cols[6];
    int k = 0;
    cols[k++] = (fbt_col){"CHANGE", false, false};
    cols[k++] = (fbt_col){fbt_by_name(o->by), false, true};
    if (o->backend)
        cols[k++] = (fbt_col){"BACKEND", false, false};
    cols[k++] = (fbt_col){"COUNT OLD -> NEW", true, false};
    cols[k++] = (fbt_col){"BYTES OLD -> NEW", false, false};
    if (o->time)
        cols[k++] = (fbt_col){"TIME OLD -> NEW", false, false};
    fbt_opts to = {.width = fbt_term_width(out)};
    diff_ctx c = {d, idx, o->time, o->backend};
    fbt_print(out, &to, cols, k, shown, diff_cells, &c);
    free(idx);
}

static json_t *json_section(const diff_opts *o, const delta *d, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        if (!o->all && d[i].ch == D_SAME)
            continue;
        const fbm_row *r = d[i].row;
        json_t *e = json_object();
        if (!e)
            break;
        if (o->by == FBM_BY_SITE)
            fbt_site_json(e, r->site, r->file, r->line, r->python);
        else if (o->by == FBM_BY_OP)
            json_object_set_new(e, FBR_OP, json_string(r->op));
        if (r->backend)
            json_object_set_new(e, FBR_BACKEND, json_string(r->backend));
        json_object_set_new(e, "change", json_string(change_names[d[i].ch]));
        json_object_set_new(
            e, "old",
            json_pack("{s:I,s:I}", FBR_COUNT, (json_int_t)d[i].oc, FBR_BYTES, (json_int_t)d[i].ob));
        json_object_set_new(
            e, "new",
            json_pack("{s:I,s:I}", FBR_COUNT, (json_int_t)d[i].nc, FBR_BYTES, (json_int_t)d[i].nb));
        if (o->time) {
            json_object_set_new(json_object_get(e, "old"), FBR_NS,
                                json_integer((json_int_t)d[i].on));
            json_object_set_new(json_object_get(e, "new"), FBR_NS,
                                json_integer((json_int_t)d[i].nn));
        }
        if (d[i].ou)
            json_object_set_new(json_object_get(e, "old"), FBR_BYTES_KNOWN, json_false());
        if (d[i].nu)
            json_object_set_new(json_object_get(e, "new"), FBR_BYTES_KNOWN, json_false());
        json_array_append_new(a, e);
    }
    return a;
}

static const struct {
    fbd_kind kind;
    const char *title, *key;
} sections[FBD_NKINDS] = {{FBD_FALLBACK, "Fallbacks", FBR_FALLBACKS},
                          {FBD_HOST, "Host-resident ops", FBR_HOST_OPS},
                          {FBD_TRANSFER, "Transfers between devices", FBR_TRANSFERS},
                          {FBD_SPLIT, "Host splits", FBR_SPLITS}};

typedef struct {
    const char *paths[2];
    fbm_summary s[2];
    delta *d[FBD_NKINDS];
    size_t n[FBD_NKINDS];
} comparison;

static int print_json(const diff_opts *o, const comparison *cmp)
{
    json_t *j =
        json_pack("{s:s,s:s,s:s,s:s,s:o,s:o}", FBR_SCHEMA, "fbcount-diff/1", "by",
                  fbt_by_name(o->by), "old", cmp->paths[0], "new", cmp->paths[1], "old_total",
                  fbt_total_json(&cmp->s[0]), "new_total", fbt_total_json(&cmp->s[1]));
    for (int k = 0; j && k < FBD_NKINDS; k++)
        json_object_set_new(j, sections[k].key, json_section(o, cmp->d[k], cmp->n[k]));
    int rc = !j || json_dumpf(j, stdout, JSON_INDENT(2)) != 0 ? FBX_WRITE : FBX_OK;
    putchar('\n');
    json_decref(j);
    return rc;
}

/* "fallbacks:         280 -> 180 (-100), 15 MiB -> 5.5 MiB (-9.3 MiB)" */
static void total_line(const char *what, uint64_t oc, uint64_t nc, uint64_t ob, uint64_t nb)
{
    char b1[32], b2[32], b3[40];
    printf("%-19s%" PRIu64 " -> %" PRIu64 " (%+" PRId64 "), %s -> %s (%s)\n", what, oc, nc,
           diff64(oc, nc), fbr_bytes(ob, b1, sizeof b1), fbr_bytes(nb, b2, sizeof b2),
           signed_bytes(diff64(ob, nb), b3, sizeof b3));
}

static void print_text(const diff_opts *o, const comparison *cmp)
{
    const fbd_total *t0 = &cmp->s[0].total, *t1 = &cmp->s[1].total;
    char b1[32], b2[32], b3[40], e0[1200], e1[1200];
    printf("fbcount diff: %s (%zu dump%s) -> %s (%zu dump%s)\n",
           fbx_escape(cmp->paths[0], e0, sizeof e0, 0), cmp->s[0].dumps,
           cmp->s[0].dumps == 1 ? "" : "s", fbx_escape(cmp->paths[1], e1, sizeof e1, 0),
           cmp->s[1].dumps, cmp->s[1].dumps == 1 ? "" : "s");
    total_line("fallbacks:", t0->fallbacks, t1->fallbacks, t0->bytes, t1->bytes);
    if (o->time)
        printf("fallback time:     %s -> %s (%s)\n", fbr_duration(t0->ns, b1, sizeof b1),
               fbr_duration(t1->ns, b2, sizeof b2),
               signed_time(diff64(t0->ns, t1->ns), b3, sizeof b3));
    total_line("host-resident ops:", t0->host_ops, t1->host_ops, t0->host_bytes, t1->host_bytes);
    bool transfers = t0->transfers || t1->transfers;
    if (transfers)
        total_line("transfers:", t0->transfers, t1->transfers, t0->transfer_bytes,
                   t1->transfer_bytes);
    bool splits = t0->splits || t1->splits;
    if (splits)
        total_line("host splits:", t0->splits, t1->splits, t0->split_bytes, t1->split_bytes);
    for (int k = 0; k < FBD_NKINDS; k++)
        if ((k != FBD_TRANSFER || transfers) && (k != FBD_SPLIT || splits))
            text_section(stdout, sections[k].title, o, cmp->d[k], cmp->n[k]);
}

/* --fail-on-increase: whether NEW has more fallbacks or more bytes left the GPU. */
static bool increased(const comparison *cmp)
{
    const fbd_total *t0 = &cmp->s[0].total, *t1 = &cmp->s[1].total;
    if (t1->fallbacks <= t0->fallbacks && t1->bytes <= t0->bytes)
        return false;
    fprintf(stderr,
            "fbcount: diff: more fallbacks or bytes than before: %" PRIu64 " -> %" PRIu64
            " fallbacks, %" PRIu64 " -> %" PRIu64 " bytes left the GPU\n",
            t0->fallbacks, t1->fallbacks, t0->bytes, t1->bytes);
    return true;
}

static int report(const diff_opts *o, fbm_census *old, fbm_census *new, const char *const *paths)
{
    comparison cmp = {
        {paths[0], paths[1]}, {fbm_census_summary(old), fbm_census_summary(new)}, {NULL}, {0}};
    bool oom = false;
    for (int k = 0; k < FBD_NKINDS; k++)
        oom |= !(cmp.d[k] = compare(old, new, (fbd_kind)k, o->by, &cmp.n[k]));
    int rc = FBX_OK;
    if (oom) {
        fbx_error("diff", "out of memory");
        rc = FBX_NOMEM;
    } else if (o->json) {
        rc = print_json(o, &cmp);
    } else {
        print_text(o, &cmp);
    }
    if (rc == FBX_OK && o->fail_on_increase && increased(&cmp))
        rc = FBX_CHECK;
    for (int k = 0; k < FBD_NKINDS; k++)
        free(cmp.d[k]);
    return rc;
}

/* The two censuses: the paths given, or the newest fbcount-* folders here. */
static int pick_paths(int nargs, char **args, char names[][FBX_PATH], const char **paths)
{
    if (nargs > 2) {
        fbx_error("diff", "expected two censuses, OLD and NEW (try --help)");
        return FBX_USAGE;
    }
    size_t want = 2 - (size_t)nargs, found = want ? fbx_newest_runs("diff", want, names) : 0;
    if (found < want) {
        fbx_error("diff",
                  "expected two censuses, OLD and NEW: %d given, and %s fbcount-* "
                  "folder%s with a dump here (try --help)",
                  nargs, found ? "only one" : "no", found ? "" : "s");
        return FBX_USAGE;
    }
    paths[0] = nargs ? args[0] : names[0];
    paths[1] = nargs == 2 ? args[1] : names[want - 1];
    if (want == 2)
        fprintf(stderr,
                "fbcount: diff: comparing %s -> %s (the two newest fbcount-* folders "
                "here)\n",
                paths[0], paths[1]);
    else if (want == 1)
        fprintf(stderr,
                "fbcount: diff: comparing against %s (the newest fbcount-* folder "
                "here)\n",
                paths[1]);
    return FBX_OK;
}

static int option(void *ctx, int opt, char *arg)
{
    diff_opts *o = ctx;
    int v = 0;
    switch (opt) {
    case 'b':
        v = fbx_choose("diff", "--by", arg, by_choices(), NDIFF_BYS);
        o->by = (fbm_by)v;
        break;
    case 's':
        v = fbx_choose("diff", "--sort", arg, fbt_sorts, fbt_nsorts);
        g_sort = (fbm_sort)v;
        break;
    case 'f':
        v = fbx_choose("diff", "--format", arg, diff_formats, 2);
        o->json = v == 1;
        break;
    case 'a': o->all = true; break;
    case 'i': o->fail_on_increase = true; break;
    case 'W': {
        int rc = fbx_where("diff", o->c[0], arg);
        return rc ? rc : fbx_where("diff", o->c[1], arg);
    }
    case 'V': fbx_version(); return -1;
    case 'h': help(); return -1;
    }
    return v < 0 ? FBX_USAGE : FBX_OK;
}

static int parse(diff_opts *o, int argc, char **argv)
{
    return fbx_options(argc, argv, options, NOPTIONS, false, option, o);
}

int fbx_diff(int argc, char **argv)
{
    diff_opts o = {.by = FBM_BY_OP, .c = {fbm_census_new(), fbm_census_new()}};
    g_sort = FBM_SORT_BYTES;
    fbm_census **c = o.c;
    int code = c[0] && c[1] ? parse(&o, argc, argv) : FBX_NOMEM;
    char names[2][FBX_PATH];
    const char *paths[2];
    if (code == FBX_NOMEM)
        fbx_error("diff", "out of memory");
    if (code == FBX_OK)
        code = pick_paths(argc - optind, argv + optind, names, paths);
    for (int i = 0; i < 2 && code == FBX_OK; i++)
        code = fbx_load_args("diff", c[i], (char *const *)&paths[i], 1);
    if (code == FBX_OK) {
        size_t nb[2];
        const char *const *b0 = fbm_census_backends(c[0], &nb[0]);
        const char *const *b1 = fbm_census_backends(c[1], &nb[1]);
        o.backend = o.by == FBM_BY_OP &&
                    (nb[0] > 1 || nb[1] > 1 || (nb[0] && nb[1] && strcmp(b0[0], b1[0])));
        o.time = fbm_census_has_time(c[0]) || fbm_census_has_time(c[1]);
        code = report(&o, c[0], c[1], paths);
    }
    fbm_census_free(c[0]);
    fbm_census_free(c[1]);
    return code < 0 ? FBX_OK : code;
}
