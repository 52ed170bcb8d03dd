/* fleet-export: loads dumps and writes them through the pprof writer or the metrics report,
 * the entry points `fbcount report --format pprof|openmetrics` calls, so the tests and the
 * benchmark drive them directly.
 *   fleet-export pprof OUT|- DUMP|DIR...
 *   fleet-export openmetrics OUT|- DUMP|DIR...
 * Exit: 0, 2 usage, 3 unreadable input or unwritable output, 4 invalid dump. */
#include <stdio.h>
#include <string.h>

#include "merge.h"
#include "metrics_report.h"
#include "output.h"
#include "pprof.h"

int main(int argc, char **argv)
{
    if (argc < 4 || (strcmp(argv[1], "pprof") && strcmp(argv[1], "openmetrics"))) {
        fprintf(stderr, "usage: fleet-export pprof|openmetrics OUT|- DUMP|DIR...\n");
        return 2;
    }
    fbm_census *c = fbm_census_new();
    char err[512];
    fbd_status st =
        c ? fbm_census_load(c, argv + 3, (size_t)(argc - 3), err, sizeof err) : FBD_EREAD;
    if (st != FBD_OK) {
        fprintf(stderr, "fleet-export: %s\n", c ? err : "out of memory");
        fbm_census_free(c);
        return st == FBD_EINVALID ? 4 : 3;
    }
    int rc = 0;
    if (!strcmp(argv[1], "pprof")) {
        fbpp_status ps = fbpp_write(c, strcmp(argv[2], "-") ? argv[2] : NULL, err, sizeof err);
        if (ps != FBPP_OK) {
            fprintf(stderr, "fleet-export: %s\n", err);
            rc = ps == FBPP_ETTY ? 2 : 3;
        }
    } else {
        fbo_file out;
        fbt_opts o = {.by = FBM_BY_OP};
        if (fbo_open(&out, argv[2], err, sizeof err) != 0 ||
            fbo_close(&out, fbom_write(out.f, c, &o) == 0, err, sizeof err) != 0) {
            fprintf(stderr, "fleet-export: %s\n", err);
            rc = 3;
        }
    }
    fbm_census_free(c);
    return rc;
}
