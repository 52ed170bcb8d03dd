/* test_skip.c - the harness's own check: a program with a case that skips exits 77 (meson:
 * skipped), and the same program with that case left out by --filter exits 0. */
#include <criterion/criterion.h>

Test(harness, skips)
{
    cr_skip_test("skipped on purpose: the harness must report it");
}

Test(harness, passes)
{
    cr_assert(1);
}
