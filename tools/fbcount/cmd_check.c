/* cmd_check.c - fbcount check: turn a silent fallback into a CI failure. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "allow.h" /* rules/: the grammar the shim reads too */
#include "cli.h"
#include "units.h"

static const char help[] =
    "usage: fbcount check [options] DUMP|DIR...\n\n"
    "Exits 0 when the census is within the allowance, 1 (listing the offending ops and\n"
    "their sites) when it is not. Ops named in the allow file never count against it.\n"
    "With neither --max nor --max-bytes, any fallback not allowed fails the check.\n\n"
    "  --allow FILE      allowed ops, one per line, reason after '#' (the FBCOUNT_ALLOW\n"
    "                    format of the shim)\n"
    "  --max N           at most N fallbacks of ops not allowed\n"
    "  --max-bytes B     at most B bytes leaving the GPU from ops not allowed\n"
    "                    (suffixes: K, KiB = 1024; KB = 1000; M, G, T likewise)\n"
    "  --host            gate host-resident ops too (default: fallbacks only)\n"
    "An empty census (no dump at all) is an error (exit 3), not a pass.\n"
    "  -h, --help        this text\n\n";

/* The shim warns about the same lines (rules/allow.h): one grammar, one verdict. */
static void warn_no_reason(void *ctx, long line, const char *op)
{
    fbx_error("check", "warning: %s: line %ld: '%s' has no reason (write '%s  # why')",
              (const char *)ctx, line, op, op);
}

static void list_bad(fbm_census *c, fbd_kind kind, const fbr_allow *allow, uint64_t *count,
                     uint64_t *bytes, bool print)
{
    size_t n;
    const fbm_row *rows = fbm_census_rows(c, kind, FBM_BY_OP, FBM_SORT_BYTES, &n);
    for (size_t i = 0; i < n; i++) {
        if (fbr_allow_has(allow, rows[i].key) || !rows[i].count)
            continue;
        *count += rows[i].count;
        *bytes += rows[i].bytes;
        if (!print)
            continue;
        char b1[32], b2[32];
        fprintf(stderr, "  %s%s: %" PRIu64 " call%s, %s left the GPU (largest %s); sites: ",
                rows[i].key, kind == FBD_HOST ? " (host-resident)" : "", rows[i].count,
                rows[i].count == 1 ? "" : "s", fbu_bytes(rows[i].bytes, b1, sizeof b1),
                fbu_bytes(rows[i].max_bytes, b2, sizeof b2));
        for (size_t p = 0; p < rows[i].nparts && p < 6; p++)
            fprintf(stderr, "%s%s (%" PRIu64 ")", p ? ", " : "", rows[i].parts[p].name,
                    rows[i].parts[p].count);
        if (rows[i].nparts > 6)
            fprintf(stderr, ", +%zu more", rows[i].nparts - 6);
        if (!rows[i].nparts)
            fputs("(none recorded)", stderr);
        fputc('\n', stderr);
    }
}

int fbx_check(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"allow", required_argument, 0, 'a'}, {"max", required_argument, 0, 'm'},
        {"max-bytes", required_argument, 0, 'b'}, {"host", no_argument, 0, 'H'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *allow_path = NULL;
    uint64_t max = UINT64_MAX, max_bytes = UINT64_MAX;
    bool have_max = false, have_bytes = false, host = false;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
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
        case 'H': host = true; break;
        case 'h': fputs(help, stdout); fputs(fbx_exit_codes, stdout); return FBX_OK;
        default:
            fbx_error("check", "unknown or incomplete option '%s' (try --help)",
                      argv[optind - 1]);
            return FBX_USAGE;
        }
    }
    if (optind >= argc) {
        fbx_error("check", "no dump given (try --help)");
        return FBX_USAGE;
    }
    if (!have_max && !have_bytes)
        max = 0;
    char err[512];
    bool unreadable = false;
    fbr_allow *allow = allow_path ? fbr_allow_load(allow_path, warn_no_reason, (void *)allow_path,
                                                   err, sizeof err, &unreadable)
                                  : fbr_allow_empty();
    if (!allow) {
        fbx_error("check", "%s%s%s", allow_path ? "allow file " : "", allow_path ? err : "out of memory",
                  allow_path && !unreadable ? " (nothing is allowed by an invalid allow file)" : "");
        return FBX_READ;
    }
    int code;
    fbm_census *c = fbx_load("check", argv + optind, argc - optind, &code);
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
    uint64_t count = 0, bytes = 0;
    list_bad(c, FBD_FALLBACK, allow, &count, &bytes, false);
    if (host)
        list_bad(c, FBD_HOST, allow, &count, &bytes, false);
    char b1[32];
    if (count > max || bytes > max_bytes) {
        fprintf(stderr, "fbcount: check: over the allowance: %" PRIu64 " %s not allowed", count,
                host ? "fallbacks and host-resident ops" : "fallbacks");
        if (have_max || !have_bytes)
            fprintf(stderr, " (max %" PRIu64 ")", max);
        fprintf(stderr, ", %s", fbu_bytes(bytes, b1, sizeof b1));
        /* Exact bytes too: two sizes can print alike in binary units. */
        if (have_bytes)
            fprintf(stderr, " = %" PRIu64 " B (max %" PRIu64 " B)", bytes, max_bytes);
        fputs(allow_path ? "; not in the allow file:\n" : ":\n", stderr);
        uint64_t dc = 0, db = 0;
        list_bad(c, FBD_FALLBACK, allow, &dc, &db, true);
        if (host)
            list_bad(c, FBD_HOST, allow, &dc, &db, true);
        code = FBX_CHECK;
    } else {
        printf("fbcount: check: ok: %" PRIu64 " fallback%s not allowed (%s) in %zu dump%s\n", count,
               count == 1 ? "" : "s", fbu_bytes(bytes, b1, sizeof b1), fbm_census_ndumps(c),
               fbm_census_ndumps(c) == 1 ? "" : "s");
        code = FBX_OK;
    }
    fbm_census_free(c);
    fbr_allow_free(allow);
    return code;
}
