/* criterion_main.c - the main of every Criterion test program: Criterion's own, except that a
 * program one of whose cases skipped (cr_skip_test: no timestamps on this device, not root, no
 * pid namespaces) and none failed exits 77, which meson reports as skipped. Criterion's main
 * exits 0 then, and meson would count cases that never ran as passed. */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <criterion/options.h>
#include <stdio.h>

#define EXIT_SKIPPED 77

static size_t skipped;

/* Per case, not Criterion's total: a case that --filter leaves out counts as skipped there. */
ReportHook(POST_TEST)(struct criterion_test_stats *stats)
{
    if (stats->test_status == CR_STATUS_SKIPPED)
        skipped++;
}

int main(int argc, char *argv[])
{
    struct criterion_test_set *tests = criterion_initialize();
    int rc = 0;
    if (criterion_handle_args(argc, argv, true))
        rc = criterion_run_all_tests(tests) ? 0 : 1;
    criterion_finalize(tests);
    if (rc == 0 && skipped) {
        fprintf(stderr, "%zu case%s skipped: the program is reported as skipped\n", skipped,
                skipped == 1 ? "" : "s");
        return EXIT_SKIPPED;
    }
    return rc;
}
