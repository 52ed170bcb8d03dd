/* summary.c - the few lines a final dump prints on stderr (unless FBCOUNT_QUIET): totals,
 * the share of ops that stayed native, the heaviest ops with their sites, and the file. */
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>

#include "dump.h"
#include "signals.h"
#include "units.h"

void fbc_dump_summary(const fbc_report *r, const char *path, int signal)
{
    char da[32], db[32];
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return;
    char where[2200] = "";
    if (path && *path)
        snprintf(where, sizeof where, " (census: %s)", path);
    char on[64] = "";
    if (signal)
        snprintf(on, sizeof on, "%s: ", fbr_signal_name(signal));
    uint64_t n = r->total[FBC_FALLBACK], moved = r->total[FBC_TRANSFER];
    if (n == 0 && r->total[FBC_HOST] == 0 && moved == 0) {
        fprintf(f, "fbcount: %s0 fallbacks%s\n", on, where);
    } else {
        char b[32], m[32];
        fbr_bytes(r->bytes[FBC_FALLBACK], b, sizeof b);
        fbr_bytes(r->max[FBC_FALLBACK], m, sizeof m);
        fprintf(f,
                "fbcount: %s%" PRIu64 " fallback%s, %s left the GPU (largest %s); %" PRIu64
                " host-resident op%s",
                on, n, n == 1 ? "" : "s", b, m, r->total[FBC_HOST],
                r->total[FBC_HOST] == 1 ? "" : "s");
        if (moved) {
            char t[32];
            fbr_bytes(r->bytes[FBC_TRANSFER], t, sizeof t);
            fprintf(f, "; %" PRIu64 " transfer%s between devices (%s)", moved,
                    moved == 1 ? "" : "s", t);
        }
        uint64_t all = r->native + r->fallback + r->host;
        if (r->has_backend && all)
            fprintf(f, "; %.1f%% of %" PRIu64 " ops stayed native",
                    100.0 * (double)r->native / (double)all, all);
        fprintf(f, "%s\n", where);
        uint64_t ns = r->ns[FBC_FALLBACK] + r->ns[FBC_HOST],
                 wall = fbc_now_ns() - fbc_process_start_ns();
        if (ns && wall)
            fprintf(f, "fbcount: they cost %s of %s of wall time (%.1f%%)\n",
                    fbr_duration(ns, da, sizeof da), fbr_duration(wall, db, sizeof db),
                    100.0 * (double)ns / (double)wall);
        fbc_report_text(r, f, "fbcount: ", 5);
    }
    fclose(f);
    for (size_t off = 0; off < len;) {
        ssize_t k = write(2, text + off, len - off);
        if (k <= 0)
            break;
        off += (size_t)k;
    }
    free(text);
}
