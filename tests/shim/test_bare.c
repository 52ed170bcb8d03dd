/* test_bare.c - the shim leaves a process that never uses a backend as it was, gives the
 * program glibc's answers from its signal wrappers, and writes the census before every kind
 * exec (bare.c prints what each run is compared on). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "runner.h"

TestSuite(bare, .init = make_dir, .fini = remove_dir, .timeout = 60);

static const char *counted = "LD_PRELOAD=" SHIM_HEAPCOUNT;
static const char *counted_shim = "LD_PRELOAD=" SHIM_HEAPCOUNT " " SHIM_LIB;

static void expect_same(const result *with, const result *without, const char *what)
{
    cr_assert(WIFEXITED(with->status) && WEXITSTATUS(with->status) == 0, "%s: %s", what, with->err);
    cr_assert(WIFEXITED(without->status) && WEXITSTATUS(without->status) == 0, "%s", without->err);
    /* Line by line, so a failure names the first fact that differs. */
    const char *a = with->out, *b = without->out;
    while (*a || *b) {
        size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
        cr_assert(la == lb && !memcmp(a, b, la),
                  "%s: the shim's process has '%.*s', without it '%.*s'", what, (int)la, a, (int)lb,
                  b);
        a += la + (a[la] == '\n');
        b += lb + (b[lb] == '\n');
    }
}

Test(bare, a_process_that_never_uses_a_backend_is_left_as_it_was)
{
#ifdef SHIM_SANITIZED
    RUNNER_SKIP("a sanitized shim brings its runtime's own threads, handlers and heap");
#endif
    const char *argv[] = {SHIM_BARE, "state", NULL};
    result without, with;
    const char *plain[] = {counted, NULL};
    run(&without, false, plain, argv);
    cr_assert(strstr(without.out, "heap: 0 blocks live\n"), "the counting allocator is not in: %s",
              without.out);
    /* As preloaded by hand, and as `fbcount run` preloads it (a run log, an allow file, a
     * mode and prefixes set: all read at load, none of it kept on the heap). */
    char log[128], allow[128];
    snprintf(log, sizeof log, "FBCOUNT_RUN_LOG=%s/run.log", tmpdir);
    snprintf(allow, sizeof allow, "FBCOUNT_ALLOW=%s/allow.txt", tmpdir);
    FILE *f = fopen(strchr(allow, '=') + 1, "w");
    cr_assert_not_null(f);
    fputs("dot  # no kernel for it yet\n", f);
    fclose(f);
    const char *shim[] = {counted_shim, NULL};
    const char *as_run[] = {counted_shim,
                            log,
                            allow,
                            "FBCOUNT_MODE=abort",
                            "FBCOUNT_QUIET=1",
                            "FBCOUNT_OP_PREFIX=vkt_,my_",
                            "FBCOUNT_PY_BACKEND=vkt,mine",
                            NULL};
    run(&with, false, shim, argv);
    expect_same(&with, &without, "preloaded");
    cr_expect(strstr(with.out, "mapped:\n"), "libunwind and libdw wait for their first use: %s",
              with.out);
    cr_expect_str_eq(with.err, "");
    run(&with, false, as_run, argv);
    expect_same(&with, &without, "under fbcount run's environment");
    cr_expect_str_eq(with.err, "");
    json_t *d[1];
    cr_expect_eq(dumps(d, 1, NULL), 0, "a process without a backend writes no dump");
}

/* What the shim's load and exit path calls of the C library in such a process, as the loader
 * binds each function at its first call (interpose/base/early.h: every other function would
 * cost every exec a page of code). */
Test(bare, a_process_that_never_uses_a_backend_calls_two_functions_of_the_c_library)
{
#ifdef SHIM_SANITIZED
    RUNNER_SKIP("a sanitized shim calls its runtime's interceptors");
#endif
    char out[128];
    snprintf(out, sizeof out, "LD_DEBUG_OUTPUT=%s/ld", tmpdir);
    const char *env[] = {"LD_DEBUG=libs,bindings", out, NULL};
    const char *argv[] = {"/bin/true", NULL};
    result r;
    run(&r, true, env, argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s", r.err);
    char cmd[256], line[1024], called[1024] = "";
    snprintf(cmd, sizeof cmd, "cat %s/ld.*", tmpdir);
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f);
    bool loaded = false, allowed_seen = false;
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, "calling init: ") && strstr(line, "libfbcount.so"))
            loaded = true;
        const char *b = strstr(line, "binding file "), *sym = strstr(line, "symbol `");
        if (!loaded || !b || !sym || !strstr(b, "libfbcount.so [0] to "))
            continue;
        sym += 8;
        size_t n = strcspn(sym, "'");
        if ((n == 15 && !strncmp(sym, "dl_iterate_phdr", n)) ||
            (n == 12 && !strncmp(sym, "__cxa_atexit", n)))
            allowed_seen = true;
        else
            snprintf(called + strlen(called), sizeof called - strlen(called), " %.*s", (int)n, sym);
    }
    pclose(f);
    cr_assert(loaded, "the loader's trace has no constructor call of the shim");
    /* Bound lazily at the first call: without it the trace would say nothing either way. */
    cr_assert(allowed_seen, "no binding at a call seen (a library bound at load?)");
    cr_expect_str_eq(called, "", "the shim called:%s", called);
}

static void compare_signals(const char *backend)
{
    const char *argv[] = {SHIM_BARE, "signals", backend, NULL};
    const char *env[] = {"FBCOUNT_QUIET=1", "FBCOUNT_OUTPUT=none", NULL};
    result without, with;
    run(&without, false, env, argv);
    run(&with, true, env, argv);
    expect_same(&with, &without, backend ? "armed" : "not armed");
    /* What the comparison rests on: glibc's answers, as the program sees them without the shim. */
    cr_assert(strstr(without.out, "sigaction(0): -1 Invalid argument\n"), "%s", without.out);
    cr_assert(strstr(without.out, "signal(65, handler): SIG_ERR Invalid argument\n"));
    cr_assert(strstr(without.out, "signal(12, SIG_ERR): SIG_ERR Invalid argument\n"));
    cr_assert(strstr(without.out, "12 signal() after siginterrupt(1): program sees SA_RESTART off, "
                                  "kernel off\n"));
    cr_assert(strstr(without.out, "10 siginterrupt(1): program sees SA_RESTART off, kernel off\n"));
}

Test(bare, signal_wrappers_answer_as_glibc)
{
    compare_signals(NULL);
}

Test(bare, signal_wrappers_answer_as_glibc_once_armed)
{
    /* The backend armed the shim: SIGUSR1 is its census signal now, SIGTERM one it stands in
     * for; the program's view and the kernel's restart bit stay the program's. */
    compare_signals(SHIM_FAKEVKT);
}

/* The one dump the command left: its fallbacks and whether it says an exec followed. */
static void one_exec_dump(const char *how, bool exec)
{
    const char *argv[] = {SHIM_BARE, how, SHIM_FAKEVKT, "3", "/bin/true", NULL};
    const char *env[] = {"FBCOUNT_QUIET=1", NULL};
    result r;
    run(&r, true, env, argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s: %s", how, r.err);
    json_t *d = one_dump("exit");
    cr_expect_eq(num(d, "total.fallbacks"), 3, "%s", how);
    cr_expect_eq(json_is_true(json_object_get(d, "exec")), exec, "%s: exec marker", how);
    json_decref(d);
}

Test(bare, execveat_writes_the_census_first)
{
    one_exec_dump("execveat", true);
}

Test(bare, a_vfork_child_leaves_its_parents_census_alone)
{
    /* The child execs in the parent's memory: the census is the parent's, written once at its
     * exit, with no exec marker and its own pid. */
    one_exec_dump("vfork-exec", false);
}

Test(bare, a_fork_before_the_first_use_gives_the_child_a_census_of_its_own)
{
    const char *argv[] = {SHIM_BARE, "fork-first", SHIM_FAKEVKT, "2", NULL};
    const char *env[] = {"FBCOUNT_QUIET=1", NULL};
    result r;
    run(&r, true, env, argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s", r.err);
    json_t *d[4];
    cr_assert_eq(dumps(d, 4, "exit"), 2);
    json_t *child = num(d[0], "total.fallbacks") == 2 ? d[0] : d[1];
    json_t *parent = child == d[0] ? d[1] : d[0];
    cr_expect_eq(num(parent, "total.fallbacks"), 1);
    cr_expect_eq(num(child, "total.fallbacks"), 2);
    cr_expect_neq(num(child, "process.pid"), num(parent, "process.pid"));
    const char *pid = json_string_value(json_object_get(json_object_get(parent, "process"), "id"));
    const char *cid = json_string_value(json_object_get(json_object_get(child, "process"), "id"));
    const char *cparent =
        json_string_value(json_object_get(json_object_get(child, "process"), "parent_id"));
    cr_expect_str_neq(cid, pid, "a census id of its own");
    cr_expect_str_eq(cparent ? cparent : "", pid, "and its parent's as parent_id");
    json_decref(d[0]);
    json_decref(d[1]);
}
