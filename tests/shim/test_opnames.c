/* test_opnames.c - FBCOUNT_ALLOW takes an op's short name ("dot") as well as the census's
 * ("vkt_dot"), and names an entry that matches no op of the process, with the closest ones. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>

#include "runner.h"

TestSuite(opnames, .init = make_dir, .fini = remove_dir, .timeout = 60);

static const char *allow_file(const char *text)
{
    static char var[160];
    snprintf(var, sizeof var, "FBCOUNT_ALLOW=%s/allow", tmpdir);
    FILE *f = fopen(var + 14, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return var;
}

Test(opnames, short_names_allow_in_abort_mode)
{
    const char *allow = allow_file("dot # no f32 dot shader yet\nadd # nor add\n(unknown) # raw\n");
    result r;
    const char *argv[] = {SHIM_APP, "mix", "2", "3", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", "FBCOUNT_MODE=abort", allow, NULL}, argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 3, "status %#x %s", r.status, r.err);
    cr_assert_eq(lines(r.err, "names no op"), 0, "%s", r.err);
}

Test(opnames, a_name_of_no_op_is_warned_once_with_the_closest)
{
    const char *allow = allow_file("dto # typo\nvkt_add # long name\n(unknown) # raw\nmatmul # "
                                   "inner op, never the innermost\nmy_pad # another backend\n");
    result r;
    const char *argv[] = {SHIM_APP, "mix", "2", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", "FBCOUNT_MODE=abort", allow, NULL}, argv);
    cr_assert(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT, "status %#x %s", r.status,
              r.err);
    cr_assert_eq(lines(r.err, "line 1: 'dto' names no op of this process; closest: dot\n"), 1, "%s",
                 r.err);
    cr_assert_eq(lines(r.err, "line 5: 'my_pad' names no op of this process\n"), 1, "%s", r.err);
    cr_assert_eq(lines(r.err, "names no op"), 2, "matmul is an op of the backend: %s", r.err);
    cr_assert_eq(lines(r.err, "vkt_dot is not allowed"), 1, "%s", r.err);
    json_t *d = one_dump(NULL);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(d, "abort"), "op")),
                     "vkt_dot");
    json_decref(d);
}
