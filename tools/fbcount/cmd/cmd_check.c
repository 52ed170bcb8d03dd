/* cmd_check.c - fbcount check: turn a silent fallback into a CI failure. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "allow.h" /* rules/: the grammar the shim reads too */
#include "fields.h"
#include "cli.h"
#include "report_json.h"
#include "text.h"
#include "units.h"

static const fbx_opt options[] = {
    {'a', false, "allow", "FILE",
     "allowed ops, one per line, reason after '#' (the FBCOUNT_ALLOW\n"
     "format of the shim); a regular file of at most 1 MiB",
     NULL, NULL},
    {'m', false, "max", "N", "at most N fallbacks of ops not allowed", NULL, NULL},
    {'b', false, "max-bytes", "B",
     "at most B bytes leaving the GPU from ops not allowed\n"
     "(suffixes: K, KiB = 1024; KB = 1000; M, G, T likewise)",
     NULL, NULL},
    {'t', false, "max-time", "T",
     "at most T of fallback time from ops not allowed (dumps with\n"
     "times only): 500ms, 1.5s, 2min; a bare number is seconds",
     NULL, NULL},
    {'T', false, "max-transfer-bytes", "B",
     "at most B bytes crossing between devices (transfers are\n"
     "shown, and gated only with this limit)",
     NULL, NULL},
    {'H', false, "host", NULL, "gate host-resident ops too (default: fallbacks only)", NULL, NULL},
    {'W', false, "where", "FIELD=VALUE", "FIELD one of %s, as for report", fbm_where_help, NULL},
    {'j', false, "json", NULL,
     "print the verdict as one JSON object (fbcount-check/1) on\nstandard output", NULL, NULL},
    FBX_OPTS_VERSION_HELP,
};
#define NOPTIONS (sizeof options / sizeof *options)

static void help(void)
{
    printf("usage: fbcount check [options] [DUMP|DIR...]\n\n"
           "Exits 0 when the census is within the allowance, 1 (listing the offending ops and\n"
           "their sites) when it is not. Ops named in the allow file never count against it.\n"
           "With no limit given, any fallback not allowed fails the check. An empty census (no\n"
           "dump at all) is an error (exit 3), not a pass. Without a DUMP or DIR, reads the\n"
           "newest fbcount-* folder with a dump in the working directory.\n\n");
    fbx_put_options(stdout, options, NOPTIONS, 22);
    putchar('\n');
    fbx_put_exit_codes(stdout, "check");
}

/* The shim warns about the same lines (rules/allow.h): one grammar, one verdict. */
static void warn_no_reason(void *ctx, long line, const char *op)
{
    char e1[1200], e2[1200];
    fbx_error("check", "warning: %s: line %ld: '%s' has no reason (write '%s  # why')",
              fbx_escape((const char *)ctx, e1, sizeof e1, 0), line,
              fbx_escape(op, e2, sizeof e2, 0), e2);
}

typedef struct {
    const char *allow_path;
    uint64_t max, max_bytes, max_ns, max_transfer;
    bool have_max, have_bytes, have_time, have_transfer, host, json;
    fbm_census *c;
} check_opts;

typedef struct {
    uint64_t count, bytes, ns;
} sums;

static uint64_t sat(uint64_t a, uint64_t b)
{
    return a > FBM_SAT_MAX - b ? FBM_SAT_MAX : a + b;
}

static json_t *sites_json(const fbm_row *r)
{
    json_t *sites = json_array();
    for (size_t p = 0; sites && p < r->nparts; p++) {
        const fbm_part *s = &r->parts[p];
        json_t *e = json_object();
        fbt_site_json(e, s->raw, s->file, s->line, s->python);
        json_object_set_new(e, FBR_COUNT, json_integer((json_int_t)s->count));
        json_object_set_new(e, FBR_BYTES, json_integer((json_int_t)s->bytes));
        json_array_append_new(sites, e);
    }
    return sites;
}

static json_t *op_json(const fbm_row *r, fbd_kind kind, bool time)
{
    static const char *const kinds[FBD_NKINDS] = {FBR_KIND_FALLBACK, FBR_KIND_HOST,
                                                  FBR_KIND_TRANSFER};
    json_t *o = json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:o}", FBR_OP, r->key, FBR_BACKEND,
                          r->backend ? r->backend : FBR_BACKEND_DEFAULT, FBR_KIND, kinds[kind],
                          FBR_COUNT, (json_int_t)r->count, FBR_BYTES, (json_int_t)r->bytes,
                          FBR_MAX_BYTES, (json_int_t)r->max_bytes, FBR_SITES, sites_json(r));
    if (o && r->unknown)
        json_object_set_new(o, FBR_BYTES_KNOWN, json_false());
    if (o && time)
        json_object_set_new(o, FBR_NS, json_integer((json_int_t)r->ns));
    return o;
}

/* "  vkt_dot: 180 calls, 5.5 MiB left the GPU (largest 188 KiB); sites: ..." on stderr. */
static void print_op(const fbm_row *r, fbd_kind kind, bool time, bool multi)
{
    char b1[32], b2[32], b3[32], e[1200];
    fprintf(stderr, "  %s", fbx_escape(r->key, e, sizeof e, 0));
    if (multi && r->backend)
        fprintf(stderr, " [%s]", fbx_escape(r->backend, e, sizeof e, 0));
    fprintf(stderr, "%s: %" PRIu64 " call%s, %s %s (largest %s)",
            kind == FBD_HOST ? " (host-resident)" : "", r->count, r->count == 1 ? "" : "s",
            fbt_bytes(r->bytes, r->unknown, r->count, false, b1, sizeof b1),
            kind == FBD_TRANSFER ? "crossed between devices" : "left the GPU",
            r->max_bytes || !r->unknown ? fbr_bytes(r->max_bytes, b2, sizeof b2) : "?");
    if (time)
        fprintf(stderr, ", %s", fbr_duration(r->ns, b3, sizeof b3));
    fputs("; sites: ", stderr);
    for (size_t p = 0; p < r->nparts && p < 6; p++)
        fprintf(stderr, "%s%s (%" PRIu64 ")", p ? ", " : "",
                fbx_escape(r->parts[p].name, e, sizeof e, 0), r->parts[p].count);
    if (r->nparts > 6)
        fprintf(stderr, ", +%zu more", r->nparts - 6);
    if (!r->nparts)
        fputs("(none recorded)", stderr);
    fputc('\n', stderr);
}

/* Adds the rows of ops not allowed to s; prints them (print) or lists them in arr (JSON). */
static void list_bad(fbm_census *c, fbd_kind kind, const fbr_allow *allow, sums *s, bool print,
                     json_t *arr)
{
    size_t n, nb;
    const fbm_row *rows = fbm_census_rows(c, kind, FBM_BY_OP, FBM_SORT_BYTES, &n);
    bool time = fbm_census_has_time(c);
    fbm_census_backends(c, &nb);
    for (size_t i = 0; i < n; i++) {
        const fbm_row *r = &rows[i];
        if ((kind != FBD_TRANSFER && fbr_allow_has(allow, r->key)) || !r->count)
            continue;
        s->count = sat(s->count, r->count);
        s->bytes = sat(s->bytes, r->bytes);
        s->ns = sat(s->ns, r->ns);
        if (arr)
            json_array_append_new(arr, op_json(r, kind, time));
        if (print)
            print_op(r, kind, time, nb > 1);
    }
}

static json_t *limits_json(const check_opts *o)
{
    json_t *limits = json_object();
    if (o->have_max || (!o->have_bytes && !o->have_time))
        json_object_set_new(limits, "max", json_integer((json_int_t)o->max));
    if (o->have_bytes)
        json_object_set_new(limits, "max_bytes", json_integer((json_int_t)o->max_bytes));
    if (o->have_time)
        json_object_set_new(limits, "max_ns", json_integer((json_int_t)o->max_ns));
    if (o->have_transfer)
        json_object_set_new(limits, "max_transfer_bytes",
                            json_integer((json_int_t)o->max_transfer));
    return limits;
}

static int print_json(fbm_census *c, const check_opts *o, const fbr_allow *allow, bool over)
{
    sums s = {0}, t = {0};
    json_t *bad = json_array(), *transfers = json_array();
    list_bad(c, FBD_FALLBACK, allow, &s, false, bad);
    if (o->host)
        list_bad(c, FBD_HOST, allow, &s, false, bad);
    list_bad(c, FBD_TRANSFER, allow, &t, false, transfers);
    json_t *j = json_pack("{s:s,s:b,s:I,s:b,s:o,s:{s:I,s:I,s:o},s:{s:I,s:I,s:b,s:o}}", FBR_SCHEMA,
                          "fbcount-check/1", "ok", !over, "dumps", (json_int_t)fbm_census_ndumps(c),
                          "host", o->host, "limits", limits_json(o), "not_allowed", FBR_COUNT,
                          (json_int_t)s.count, FBR_BYTES, (json_int_t)s.bytes, FBR_OPS, bad,
                          FBR_TRANSFERS, FBR_COUNT, (json_int_t)t.count, FBR_BYTES,
                          (json_int_t)t.bytes, "gated", o->have_transfer, FBR_OPS, transfers);
    if (j && fbm_census_has_time(c))
        json_object_set_new(json_object_get(j, "not_allowed"), FBR_NS,
                            json_integer((json_int_t)s.ns));
    int rc = !j ? FBX_NOMEM : json_dumpf(j, stdout, JSON_INDENT(2)) != 0 ? FBX_WRITE : FBX_OK;
    if (!j)
        fbx_error("check", "out of memory");
    putchar('\n');
    json_decref(j);
    return rc;
}

static void print_over(fbm_census *c, const check_opts *o, const fbr_allow *allow, sums s, sums t)
{
    char b1[32], b2[32];
    fprintf(stderr, "fbcount: check: over the allowance: %" PRIu64 " %s not allowed", s.count,
            o->host ? "fallbacks and host-resident ops" : "fallbacks");
    if (o->have_max || (!o->have_bytes && !o->have_time && !o->have_transfer))
        fprintf(stderr, " (max %" PRIu64 ")", o->max);
    fprintf(stderr, ", %s", fbr_bytes(s.bytes, b1, sizeof b1));
    /* Exact bytes too: two sizes can print alike in binary units. */
    if (o->have_bytes)
        fprintf(stderr, " = %" PRIu64 " B (max %" PRIu64 " B)", s.bytes, o->max_bytes);
    if (o->have_time)
        fprintf(stderr, ", %s (max %s)", fbr_duration(s.ns, b1, sizeof b1),
                fbr_duration(o->max_ns, b2, sizeof b2));
    if (o->have_transfer)
        fprintf(stderr, "; %" PRIu64 " B crossed between devices (max %" PRIu64 " B)", t.bytes,
                o->max_transfer);
    fputs(o->allow_path ? "; not in the allow file:\n" : ":\n", stderr);
    sums d = {0};
    list_bad(c, FBD_FALLBACK, allow, &d, true, NULL);
    if (o->host)
        list_bad(c, FBD_HOST, allow, &d, true, NULL);
    if (o->have_transfer && t.bytes > o->max_transfer)
        list_bad(c, FBD_TRANSFER, allow, &d, true, NULL);
}

/* The verdict, printed; returns FBX_OK or FBX_CHECK (or the error of a failed print). */
static int verdict(fbm_census *c, const check_opts *o, const fbr_allow *allow)
{
    sums s = {0}, t = {0};
    list_bad(c, FBD_FALLBACK, allow, &s, false, NULL);
    if (o->host)
        list_bad(c, FBD_HOST, allow, &s, false, NULL);
    list_bad(c, FBD_TRANSFER, allow, &t, false, NULL);
    bool over = s.count > o->max || s.bytes > o->max_bytes || (o->have_time && s.ns > o->max_ns) ||
                (o->have_transfer && t.bytes > o->max_transfer);
    char b1[32], b2[32];
    if (o->json) {
        int rc = print_json(c, o, allow, over);
        if (rc != FBX_OK)
            return rc;
    } else if (over) {
        print_over(c, o, allow, s, t);
    } else {
        printf("fbcount: check: ok: %" PRIu64 " fallback%s not allowed (%s", s.count,
               s.count == 1 ? "" : "s", fbr_bytes(s.bytes, b1, sizeof b1));
        if (fbm_census_has_time(c))
            printf(", %s", fbr_duration(s.ns, b2, sizeof b2));
        printf(") in %zu dump%s", fbm_census_ndumps(c), fbm_census_ndumps(c) == 1 ? "" : "s");
        if (t.count)
            printf("; %" PRIu64 " transfer%s, %s crossed between devices%s", t.count,
                   t.count == 1 ? "" : "s", fbr_bytes(t.bytes, b1, sizeof b1),
                   o->have_transfer ? "" : " (not gated)");
        putchar('\n');
    }
    return over ? FBX_CHECK : FBX_OK;
}

static int limit(const char *opt, const char *arg, uint64_t *out, bool *have)
{
    int bad = !strcmp(opt, "--max")        ? fbr_parse_count(arg, out)
              : !strcmp(opt, "--max-time") ? fbr_parse_duration(arg, out)
                                           : fbr_parse_bytes(arg, out);
    if (bad) {
        fbx_error("check", "%s: expected %s, got '%s'", opt,
                  !strcmp(opt, "--max")        ? "a non-negative number"
                  : !strcmp(opt, "--max-time") ? "a duration like 500ms, 1.5s or 2min"
                                               : "a size like 4096, 64K or 1.5MiB",
                  arg);
        return FBX_USAGE;
    }
    *have = true;
    return FBX_OK;
}

static int option(void *ctx, int opt, char *arg)
{
    check_opts *o = ctx;
    switch (opt) {
    case 'a': o->allow_path = arg; return FBX_OK;
    case 'm': return limit("--max", arg, &o->max, &o->have_max);
    case 'b': return limit("--max-bytes", arg, &o->max_bytes, &o->have_bytes);
    case 't': return limit("--max-time", arg, &o->max_ns, &o->have_time);
    case 'T': return limit("--max-transfer-bytes", arg, &o->max_transfer, &o->have_transfer);
    case 'H': o->host = true; return FBX_OK;
    case 'j': o->json = true; return FBX_OK;
    case 'W': return fbx_where("check", o->c, arg);
    case 'V': fbx_version(); return -1;
    case 'h': help(); return -1;
    }
    return FBX_OK; /* fbx_options gives the keys of the table's rows alone */
}

static int parse(check_opts *o, int argc, char **argv)
{
    int code = fbx_options(argc, argv, options, NOPTIONS, false, option, o);
    if (code == FBX_OK && !o->have_max && !o->have_bytes && !o->have_time && !o->have_transfer)
        o->max = 0;
    return code;
}

static fbr_allow *load_allow(const char *path, int *code)
{
    char err[512], e[1200];
    bool unreadable = false;
    fbr_allow *allow =
        path ? fbr_allow_load(path, warn_no_reason, (void *)path, err, sizeof err, &unreadable)
             : fbr_allow_empty();
    *code = FBX_OK;
    if (!allow && !path) {
        fbx_error("check", "out of memory");
        *code = FBX_NOMEM;
    } else if (!allow) {
        fbx_error("check", "allow file %s%s", fbx_escape(err, e, sizeof e, 0),
                  unreadable ? "" : " (nothing is allowed by an invalid allow file)");
        *code = FBX_READ;
    }
    return allow;
}

static void warn_unknown(void *ctx, long line, const char *name, const char *const *close,
                         size_t nclose)
{
    char e[600], e2[600];
    fprintf(stderr, "fbcount: check: allow file %s, line %ld: '%s' names no op in these dumps",
            fbx_escape((const char *)ctx, e, sizeof e, 0), line,
            fbx_escape(name, e2, sizeof e2, 0));
    for (size_t i = 0; i < nclose; i++)
        fprintf(stderr, "%s%s", i ? ", " : " (closest: ", fbx_escape(close[i], e, sizeof e, 0));
    fputs(nclose ? ")\n" : "\n", stderr);
}

/* Allow-file entries that name no op of the census (a typo, a short name of another prefix)
 * are named, as the shim names them, with the closest ops: a silent entry allows nothing. */
static void check_names(fbm_census *c, const check_opts *o, fbr_allow *allow, fbr_names *pre)
{
    size_t n = 0, np = 0, nk;
    const char *const *p =
        fbm_census_ndumps(c) ? fbd_op_prefixes(fbm_census_dump(c, 0), &np) : NULL;
    pre->n = 0;
    for (size_t i = 0; i < np && pre->n < FBR_MAX_NAMES; i++)
        pre->name[pre->n++] = p[i];
    if (pre->n)
        fbr_allow_set_prefixes(allow, pre);
    for (int k = 0; k < 2; k++) {
        fbm_census_rows(c, k ? FBD_HOST : FBD_FALLBACK, FBM_BY_OP, FBM_SORT_BYTES, &nk);
        n += nk;
    }
    const char **known = calloc(n + 1, sizeof *known);
    if (!known || !o->allow_path) {
        free(known);
        return;
    }
    n = 0;
    for (int k = 0; k < 2; k++) {
        const fbm_row *rows =
            fbm_census_rows(c, k ? FBD_HOST : FBD_FALLBACK, FBM_BY_OP, FBM_SORT_BYTES, &nk);
        for (size_t i = 0; i < nk; i++)
            known[n++] = rows[i].key;
    }
    fbr_allow_unknown(allow, known, n, warn_unknown, (void *)o->allow_path);
    free(known);
}

int fbx_check(int argc, char **argv)
{
    check_opts o = {.max = UINT64_MAX,
                    .max_bytes = UINT64_MAX,
                    .max_ns = UINT64_MAX,
                    .max_transfer = UINT64_MAX};
    fbm_census *c = o.c = fbm_census_new();
    fbr_allow *allow = NULL;
    int code = c ? parse(&o, argc, argv) : FBX_NOMEM;
    if (!c)
        fbx_error("check", "out of memory");
    if (code == FBX_OK)
        allow = load_allow(o.allow_path, &code);
    /* A census with no dump usually means the shim was not loaded: passing would hide
     * exactly the silence this command exists to catch (fbx_load_args refuses it). */
    if (code == FBX_OK)
        code = fbx_load_args("check", c, argv + optind, argc - optind);
    if (code == FBX_OK && o.have_time && !fbm_census_has_time(c)) {
        fbx_error("check", "--max-time: these dumps carry no times (written by an older shim)");
        code = FBX_INVALID;
    }
    fbr_names prefixes = {0};
    if (code == FBX_OK)
        check_names(c, &o, allow, &prefixes);
    if (code == FBX_OK)
        code = verdict(c, &o, allow);
    fbm_census_free(c);
    fbr_allow_free(allow);
    return code < 0 ? FBX_OK : code;
}
