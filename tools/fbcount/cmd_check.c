/* cmd_check.c - fbcount check: turn a silent fallback into a CI failure. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "allow.h" /* rules/: the grammar the shim reads too */
#include "cli.h"
#include "fields.h"
#include "table.h"
#include "text.h"
#include "units.h"

static const char help[] =
    "usage: fbcount check [options] [DUMP|DIR...]\n\n"
    "Exits 0 when the census is within the allowance, 1 (listing the offending ops and\n"
    "their sites) when it is not. Ops named in the allow file never count against it.\n"
    "With no limit given, any fallback not allowed fails the check. An empty census (no\n"
    "dump at all) is an error (exit 3), not a pass. Without a DUMP or DIR, reads the\n"
    "newest fbcount-* folder in the working directory.\n\n"
    "  --allow FILE        allowed ops, one per line, reason after '#' (the FBCOUNT_ALLOW\n"
    "                      format of the shim); a regular file of at most 1 MiB\n"
    "  --max N             at most N fallbacks of ops not allowed\n"
    "  --max-bytes B       at most B bytes leaving the GPU from ops not allowed\n"
    "                      (suffixes: K, KiB = 1024; KB = 1000; M, G, T likewise)\n"
    "  --max-time T        at most T of fallback time from ops not allowed (dumps with\n"
    "                      times only): 500ms, 1.5s, 2min; a bare number is seconds\n"
    "  --host              gate host-resident ops too (default: fallbacks only)\n"
    "  --json              print the verdict as one JSON object (fbcount-check/1) on\n"
    "                      standard output\n"
    "  -V, --version       print the version\n"
    "  -h, --help          this text\n\n";

/* The shim warns about the same lines (rules/allow.h): one grammar, one verdict. */
static void warn_no_reason(void *ctx, long line, const char *op)
{
    char e1[1200], e2[1200];
    fbx_error("check", "warning: %s: line %ld: '%s' has no reason (write '%s  # why')",
              fbx_escape((const char *)ctx, e1, sizeof e1, 0), line,
              fbx_escape(op, e2, sizeof e2, 0), e2);
}

typedef struct {
    uint64_t count, bytes, ns;
} sums;

static uint64_t sat(uint64_t a, uint64_t b) { return a > FBM_SAT_MAX - b ? FBM_SAT_MAX : a + b; }

/* Adds the rows of ops not allowed to s; prints them (print) or lists them in arr (JSON). */
static void list_bad(fbm_census *c, fbd_kind kind, const fbr_allow *allow, sums *s, bool print,
                     json_t *arr, bool time)
{
    size_t n;
    const fbm_row *rows = fbm_census_rows(c, kind, FBM_BY_OP, FBM_SORT_BYTES, &n);
    for (size_t i = 0; i < n; i++) {
        const fbm_row *r = &rows[i];
        if (fbr_allow_has(allow, r->key) || !r->count)
            continue;
        s->count = sat(s->count, r->count);
        s->bytes = sat(s->bytes, r->bytes);
        s->ns = sat(s->ns, r->ns);
        if (arr) {
            json_t *sites = json_array();
            for (size_t p = 0; sites && p < r->nparts; p++) {
                json_t *e = json_pack("{s:s,s:I,s:I}", FBR_SITE, r->parts[p].raw, FBR_COUNT,
                                      (json_int_t)r->parts[p].count, FBR_BYTES,
                                      (json_int_t)r->parts[p].bytes);
                if (e)
                    fbt_add_demangled(e, r->parts[p].raw);
                json_array_append_new(sites, e);
            }
            json_t *o = json_pack("{s:s,s:s,s:I,s:I,s:I,s:o}", FBR_OP, r->key, FBR_KIND,
                                  kind == FBD_HOST ? FBR_KIND_HOST : FBR_KIND_FALLBACK,
                                  FBR_COUNT, (json_int_t)r->count, FBR_BYTES,
                                  (json_int_t)r->bytes, FBR_MAX_BYTES,
                                  (json_int_t)r->max_bytes, FBR_SITES, sites);
            if (o && time)
                json_object_set_new(o, FBR_NS, json_integer((json_int_t)r->ns));
            json_array_append_new(arr, o);
        }
        if (!print)
            continue;
        char b1[32], b2[32], b3[32], e[1200];
        fprintf(stderr, "  %s%s: %" PRIu64 " call%s, %s left the GPU (largest %s)",
                fbx_escape(r->key, e, sizeof e, 0), kind == FBD_HOST ? " (host-resident)" : "",
                r->count, r->count == 1 ? "" : "s", fbu_bytes(r->bytes, b1, sizeof b1),
                fbu_bytes(r->max_bytes, b2, sizeof b2));
        if (time)
            fprintf(stderr, ", %s", fbu_duration(r->ns, b3, sizeof b3));
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
}

int fbx_check(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"allow", required_argument, 0, 'a'}, {"max", required_argument, 0, 'm'},
        {"max-bytes", required_argument, 0, 'b'}, {"max-time", required_argument, 0, 't'},
        {"host", no_argument, 0, 'H'}, {"json", no_argument, 0, 'j'},
        {"version", no_argument, 0, 'V'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *allow_path = NULL;
    uint64_t max = UINT64_MAX, max_bytes = UINT64_MAX, max_ns = UINT64_MAX;
    bool have_max = false, have_bytes = false, have_time = false, host = false, json = false;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "hV", longopts, NULL)) != -1) {
        switch (opt) {
        case 'a': allow_path = optarg; break;
        case 'm':
            if (fbu_parse_count(optarg, &max) != 0) {
                fbx_error("check", "--max: expected a non-negative number, got '%s'", optarg);
                return FBX_USAGE;
            }
            have_max = true;
            break;
        case 'b':
            if (fbu_parse_bytes(optarg, &max_bytes) != 0) {
                fbx_error("check", "--max-bytes: expected a size like 4096, 64K or 1.5MiB, "
                          "got '%s'", optarg);
                return FBX_USAGE;
            }
            have_bytes = true;
            break;
        case 't':
            if (fbu_parse_duration(optarg, &max_ns) != 0) {
                fbx_error("check", "--max-time: expected a duration like 500ms, 1.5s or 2min, "
                          "got '%s'", optarg);
                return FBX_USAGE;
            }
            have_time = true;
            break;
        case 'H': host = true; break;
        case 'j': json = true; break;
        case 'V': fbx_version(); return fbx_finish("check", FBX_OK);
        case 'h':
            fputs(help, stdout);
            fputs(fbx_exit_codes, stdout);
            return fbx_finish("check", FBX_OK);
        default:
            fbx_error("check", "unknown or incomplete option '%s' (try --help)",
                      argv[optind - 1]);
            return FBX_USAGE;
        }
    }
    char dflt[4096];
    char *dpath[] = {dflt};
    if (optind >= argc && fbx_default_dir("check", dflt, sizeof dflt) != 0)
        return FBX_USAGE;
    if (!have_max && !have_bytes && !have_time)
        max = 0;
    char err[512];
    bool unreadable = false;
    fbr_allow *allow = allow_path ? fbr_allow_load(allow_path, warn_no_reason, (void *)allow_path,
                                                   err, sizeof err, &unreadable)
                                  : fbr_allow_empty();
    if (!allow) {
        char e[1200];
        fbx_error("check", "%s%s%s", allow_path ? "allow file " : "",
                  allow_path ? fbx_escape(err, e, sizeof e, 0) : "out of memory",
                  allow_path && !unreadable ? " (nothing is allowed by an invalid allow file)" : "");
        return FBX_READ;
    }
    int code;
    fbm_census *c = optind >= argc ? fbx_load("check", dpath, 1, &code)
                                   : fbx_load("check", argv + optind, argc - optind, &code);
    if (!c) {
        fbr_allow_free(allow);
        return code;
    }
    /* A census with no dump usually means the shim was not loaded: passing would hide
     * exactly the silence this command exists to catch. */
    if (fbm_census_ndumps(c) == 0) {
        fbx_error("check", "no dump found in the given paths (was libfbcount.so preloaded?)");
        fbm_census_free(c);
        fbr_allow_free(allow);
        return FBX_READ;
    }
    bool time = fbm_census_has_time(c);
    if (have_time && !time) {
        fbx_error("check", "--max-time: these dumps carry no times (written by an older shim)");
        fbm_census_free(c);
        fbr_allow_free(allow);
        return FBX_INVALID;
    }
    sums s = {0};
    json_t *bad = json ? json_array() : NULL;
    list_bad(c, FBD_FALLBACK, allow, &s, false, bad, time);
    if (host)
        list_bad(c, FBD_HOST, allow, &s, false, bad, time);
    bool over = s.count > max || s.bytes > max_bytes || (have_time && s.ns > max_ns);
    char b1[32], b2[32];
    if (json) {
        json_t *limits = json_object(), *o;
        if (have_max || (!have_bytes && !have_time))
            json_object_set_new(limits, "max", json_integer((json_int_t)max));
        if (have_bytes)
            json_object_set_new(limits, "max_bytes", json_integer((json_int_t)max_bytes));
        if (have_time)
            json_object_set_new(limits, "max_ns", json_integer((json_int_t)max_ns));
        o = json_pack("{s:s,s:b,s:I,s:b,s:o,s:{s:I,s:I,s:O}}", FBR_SCHEMA, "fbcount-check/1",
                      "ok", !over, "dumps", (json_int_t)fbm_census_ndumps(c), "host", host,
                      "limits", limits, "not_allowed", FBR_COUNT, (json_int_t)s.count,
                      FBR_BYTES, (json_int_t)s.bytes, FBR_OPS, bad);
        if (o && time)
            json_object_set_new(json_object_get(o, "not_allowed"), FBR_NS,
                                json_integer((json_int_t)s.ns));
        if (!o || json_dumpf(o, stdout, JSON_INDENT(2)) != 0)
            fbx_error("check", "out of memory");
        putchar('\n');
        json_decref(o);
    } else if (over) {
        fprintf(stderr, "fbcount: check: over the allowance: %" PRIu64 " %s not allowed", s.count,
                host ? "fallbacks and host-resident ops" : "fallbacks");
        if (have_max || (!have_bytes && !have_time))
            fprintf(stderr, " (max %" PRIu64 ")", max);
        fprintf(stderr, ", %s", fbu_bytes(s.bytes, b1, sizeof b1));
        /* Exact bytes too: two sizes can print alike in binary units. */
        if (have_bytes)
            fprintf(stderr, " = %" PRIu64 " B (max %" PRIu64 " B)", s.bytes, max_bytes);
        if (have_time)
            fprintf(stderr, ", %s (max %s)", fbu_duration(s.ns, b1, sizeof b1),
                    fbu_duration(max_ns, b2, sizeof b2));
        fputs(allow_path ? "; not in the allow file:\n" : ":\n", stderr);
        sums d = {0};
        list_bad(c, FBD_FALLBACK, allow, &d, true, NULL, time);
        if (host)
            list_bad(c, FBD_HOST, allow, &d, true, NULL, time);
    } else {
        printf("fbcount: check: ok: %" PRIu64 " fallback%s not allowed (%s", s.count,
               s.count == 1 ? "" : "s", fbu_bytes(s.bytes, b1, sizeof b1));
        if (time)
            printf(", %s", fbu_duration(s.ns, b2, sizeof b2));
        printf(") in %zu dump%s\n", fbm_census_ndumps(c), fbm_census_ndumps(c) == 1 ? "" : "s");
    }
    json_decref(bad);
    fbm_census_free(c);
    fbr_allow_free(allow);
    return fbx_finish("check", over ? FBX_CHECK : FBX_OK);
}
