/* test_preload.c - programs run under the preloaded libfbcount.so, their dumps read back
 * with jansson: exact counts, ops and sites; threads, dlopen, fork, exec; snapshots under
 * load; crash dumps with the process still dying by its signal; the application's own
 * SIGUSR1 handler; bad environment values; warn and abort modes with an allow file. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner.h"

TestSuite(preload, .init = make_dir, .fini = remove_dir, .timeout = 60);

Test(preload, exact_ops_sites_shapes_and_summary)
{
    result r;
    const char *argv[] = {SHIM_APP, "mix", "4", "7", NULL};
    run(&r, true, NULL, argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 7, "exit code preserved");
    cr_assert_str_eq(r.out, "mix done 4\n");
    json_t *d = one_dump("exit");
    cr_assert_str_eq(json_string_value(json_object_get(d, "schema")), "fbcount/1");
    cr_assert_eq(num(d, "seq"), 1);
    cr_assert_eq(num(d, "total.fallbacks"), 20);
    cr_assert_eq(num(d, "total.host_ops"), 4);
    cr_assert_eq(num(d, "total.bytes"), 8 * 2048 + 8 * 32 + 4 * 16);
    cr_assert_eq(op_count(d, "ops", "vkt_dot"), 8);
    cr_assert_eq(op_count(d, "ops", "vkt_matmul"), 0, "innermost op wins");
    cr_assert_eq(site_count(d, "vkt_dot", "site_alpha"), 4);
    cr_assert_eq(site_count(d, "vkt_dot", "site_gamma"), 4);
    cr_assert_eq(site_field(d, "vkt_dot", "site_alpha", "max_bytes"), 2048,
                 "a site's largest result");
    cr_assert_eq(site_field(d, "vkt_add", "site_beta", "max_bytes"), 32);
    cr_assert_eq(op_count(d, "ops", "vkt_add"), 8);
    cr_assert_eq(site_count(d, "vkt_add", "site_beta"), 8);
    cr_assert_eq(op_count(d, "ops", "(unknown)"), 4, "no op: counted, never dropped");
    cr_assert_eq(site_count(d, "(unknown)", "site_raw"), 4);
    cr_assert_eq(op_count(d, "host_ops", "vkt_transpose"), 4);
    cr_assert_str_eq(
        json_string_value(json_object_get(json_array_get(json_object_get(d, "ops"), 0), "op")),
        "vkt_dot", "sorted by bytes");
    json_t *shape = json_array_get(json_object_get(op(d, "ops", "vkt_dot"), "shapes"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(shape, "dtype")), "f32");
    cr_assert_eq(json_integer_value(json_array_get(json_object_get(shape, "shape"), 1)), 32);
    cr_assert_eq(num(d, "backend.native"), 1);
    json_t *st = json_array_get(json_object_get(d, "stacks"), 0);
    json_t *f0 = frame(d, st, 0);
    cr_assert_str_eq(json_string_value(json_object_get(f0, "symbol")), "host_result");
    cr_assert(strstr(json_string_value(json_object_get(f0, "module")), "libfakevkt"));
    cr_assert(strstr(r.err, "fbcount: 20 fallbacks"), "summary: %s", r.err);
    cr_assert(strstr(r.err, "stayed native"), "summary: %s", r.err);
    json_decref(d);
}

Test(preload, stdout_and_exit_code_are_the_programs)
{
    result a, b;
    const char *argv[] = {SHIM_APP, "rc", "2", "3", NULL};
    run(&a, false, NULL, argv);
    run(&b, true, NULL, argv);
    cr_assert_str_eq(a.out, b.out);
    cr_assert_eq(a.status, b.status);
    cr_assert_str_eq(a.err, "");
}

Test(preload, results_pass_through)
{
    result r;
    const char *argv[] = {SHIM_APP, "passthrough", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", NULL}, argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s", r.out);
    cr_assert_str_eq(r.err, "");
}

Test(preload, zero_fallbacks_one_line)
{
    result r;
    const char *argv[] = {SHIM_APP, "none", NULL};
    run(&r, true, NULL, argv);
    cr_assert_eq(lines(r.err, "\n"), 1, "%s", r.err);
    cr_assert(strstr(r.err, "fbcount: 0 fallbacks"), "%s", r.err);
    json_t *d = one_dump("exit");
    cr_assert_eq(num(d, "total.fallbacks"), 0);
    json_decref(d);
}

Test(preload, many_threads_exact)
{
    result r;
    const char *argv[] = {SHIM_APP, "threads", "8", "20000", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", NULL}, argv);
    cr_assert_str_eq(r.out, "calls 160000\n");
    json_t *d = one_dump("exit");
    cr_assert_eq(num(d, "total.fallbacks"), 160000);
    cr_assert_eq(site_count(d, "vkt_dot", "site_thread"), 160000);
    json_decref(d);
}

Test(preload, dlopened_backend)
{
    result r;
    const char *argv[] = {SHIM_DLAPP, SHIM_FAKEDL, "5", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", NULL}, argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s%s", r.out, r.err);
    json_t *d = one_dump("exit");
    cr_assert_eq(op_count(d, "ops", "vkt_dlop"), 5);
    cr_assert_eq(site_count(d, "vkt_dlop", "site_dl"), 5);
    json_decref(d);
}

/* The process's facts: argv as the program got it (read from the loader's arguments to the
 * shim's constructor, not from /proc), the executable and the start time (read and written
 * out at the first use). */
Test(preload, process_facts)
{
    result r;
    const char *argv[] = {SHIM_APP, "mix", "1", "0", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", NULL}, argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s", r.err);
    json_t *d = one_dump("exit");
    json_t *p = json_object_get(d, "process"), *a = json_object_get(p, "argv");
    cr_assert_eq(json_array_size(a), 4);
    for (size_t i = 0; i < 4; i++)
        cr_expect_str_eq(json_string_value(json_array_get(a, i)), argv[i]);
    char exe[4096];
    cr_assert(realpath(SHIM_APP, exe));
    cr_expect_str_eq(json_string_value(json_object_get(p, "exe")), exe);
    const char *t = json_string_value(json_object_get(p, "start_time"));
    cr_assert(t && strlen(t) == 20 && t[4] == '-' && t[10] == 'T' && t[19] == 'Z', "start_time %s",
              t ? t : "(none)");
    json_decref(d);
}

/* The start is the process's, taken at load (a counter reading, early.h), not the shim's
 * first use: a program that waits 300 ms before its backend has lived 300 ms more. */
Test(preload, start_is_dated_at_load)
{
    result r;
    struct timespec before;
    clock_gettime(CLOCK_REALTIME, &before);
    const char *argv[] = {SHIM_DLAPP, SHIM_FAKEDL, "2", "300", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", NULL}, argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s%s", r.out, r.err);
    json_t *d = one_dump("exit");
    json_int_t elapsed = num(d, "process.elapsed_ns");
    cr_expect(elapsed >= 300000000 && elapsed < 20000000000LL, "elapsed_ns %lld",
              (long long)elapsed);
    struct tm tm = {0};
    const char *t = json_string_value(json_object_get(json_object_get(d, "process"), "start_time"));
    cr_assert(t && strptime(t, "%Y-%m-%dT%H:%M:%SZ", &tm), "start_time %s", t ? t : "(none)");
    long long start = (long long)timegm(&tm);
    cr_expect(start >= (long long)before.tv_sec - 1 && start <= (long long)before.tv_sec + 2,
              "start_time %s is not when the program started (%lld)", t, (long long)before.tv_sec);
    json_decref(d);
}

/* A program whose argv[0] is empty (or that has no argument at all): its name for %e is the
 * executable's. Making it entered the executable path's once from inside it, and the
 * program hung at load. */
Test(preload, a_program_with_an_empty_argv0_is_named_by_its_executable)
{
    result r;
    const char *argv[] = {"/bin/bash", "-c", "exec -a '' " SHIM_APP " mix 1", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", NULL}, argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s%s", r.out, r.err);
    json_t *d = one_dump("exit");
    json_t *a = json_object_get(json_object_get(d, "process"), "argv");
    cr_assert_str_eq(json_string_value(json_array_get(a, 0)), "");
    DIR *dir = opendir(tmpdir);
    cr_assert_not_null(dir);
    bool named = false;
    for (struct dirent *e; (e = readdir(dir));)
        named |= !strncmp(e->d_name, "fbcount.shim-app.", 17);
    closedir(dir);
    cr_expect(named, "no dump named after the executable (fbcount.shim-app.PID.json)");
    json_decref(d);
}

Test(preload, fork_child_has_its_own_census_and_file)
{
    result r;
    const char *argv[] = {SHIM_APP, "fork", "3", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", NULL}, argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    json_t *d[4];
    cr_assert_eq(dumps(d, 4, "exit"), 2);
    json_t *parent = op(d[0], "ops", "vkt_dot") ? d[0] : d[1];
    json_t *child = parent == d[0] ? d[1] : d[0];
    cr_assert_eq(op_count(parent, "ops", "vkt_dot"), 3);
    cr_assert_eq(num(parent, "total.fallbacks"), 3);
    cr_assert_eq(op_count(child, "ops", "vkt_add"), 6);
    cr_assert_eq(num(child, "total.fallbacks"), 6, "the child starts empty");
    cr_assert_eq(num(child, "process.ppid"), num(parent, "process.pid"));
    json_decref(d[0]);
    json_decref(d[1]);
}

Test(preload, exec_keeps_both_censuses)
{
    result r;
    const char *argv[] = {SHIM_APP, "exec", "2", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", NULL}, argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    json_t *d[4];
    cr_assert_eq(dumps(d, 4, "exit"), 2, "the new image's dump took a name of its own");
    json_t *before = json_is_true(json_object_get(d[0], "exec")) ? d[0] : d[1];
    json_t *after = before == d[0] ? d[1] : d[0];
    cr_assert_eq(op_count(before, "ops", "vkt_dot"), 2);
    cr_assert_eq(op_count(after, "ops", "vkt_add"), 2);
    cr_assert_eq(num(after, "total.fallbacks"), 5, "the new image (mix 1) is a census of its own");
    cr_assert_eq(num(after, "process.pid"), num(before, "process.pid"));
    const char *id0 = json_string_value(json_object_get(json_object_get(before, "process"), "id"));
    const char *id1 = json_string_value(json_object_get(json_object_get(after, "process"), "id"));
    cr_assert(id0 && id1 && strlen(id0) == 32 && strcmp(id0, id1), "two censuses: %s %s", id0, id1);
    json_decref(d[0]);
    json_decref(d[1]);
}

static void crash_case(const char *cmd, int sig)
{
    result r;
    const char *argv[] = {SHIM_APP, cmd, "3", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", NULL}, argv);
    cr_assert(WIFSIGNALED(r.status) && WTERMSIG(r.status) == sig, "status %#x", r.status);
    json_t *d = one_dump("crash");
    cr_assert_eq(num(d, "signal"), sig);
    cr_assert(json_is_false(json_object_get(d, "symbolized")));
    cr_assert_eq(num(d, "total.fallbacks"), 3);
    cr_assert_eq(op_count(d, "ops", "(unknown)"), 3);
    json_t *st = json_array_get(json_object_get(d, "stacks"), 0);
    json_t *f = frame(d, st, 3);
    cr_assert(strstr(json_string_value(json_object_get(f, "module")), "libfakevkt"));
    cr_assert(json_is_string(json_object_get(f, "offset")));
    cr_assert_gt(json_array_size(json_object_get(d, "modules")), 2);
    json_decref(d);
    json_t *all[4];
    cr_assert_eq(dumps(all, 4, NULL), 1, "only the crash dump");
    json_decref(all[0]);
}

Test(preload, crash_dump_on_sigsegv_and_death_by_it)
{
    crash_case("segv", SIGSEGV);
}

Test(preload, crash_dump_on_sigabrt_and_death_by_it)
{
    crash_case("abort", SIGABRT);
}

static void usr1_case(const char *how)
{
    result r;
    const char *argv[] = {SHIM_APP, "usr1", "2", how, NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", "FBCOUNT_OUTPUT=d.%n.json", NULL}, argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "app handler: %s", r.out);
    cr_assert_str_eq(r.out, "handled 1 own 1\n");
    json_t *d = one_dump("snapshot");
    cr_assert_eq(op_count(d, "ops", "vkt_dot"), 2);
    json_decref(d);
    char p[128];
    snprintf(p, sizeof p, "%s/d.1.json", tmpdir);
    cr_assert_eq(access(p, F_OK), 0, "the snapshot is dump 1");
    snprintf(p, sizeof p, "%s/d.2.json", tmpdir);
    cr_assert_eq(access(p, F_OK), 0, "the exit dump is dump 2");
}

Test(preload, app_signal_handler_still_called)
{
    usr1_case("signal");
}

Test(preload, app_sigaction_handler_still_called)
{
    usr1_case("sigaction");
}

Test(preload, snapshots_while_threads_fall_back)
{
    result r;
    const char *argv[] = {SHIM_APP, "spin", "3", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", NULL}, argv);
    long spun = 0;
    cr_assert_eq(sscanf(r.out, "spun %ld", &spun), 1, "%s", r.out);
    json_t *s[8];
    int n = dumps(s, 8, "snapshot");
    cr_assert_geq(n, 1);
    for (int i = 0; i < n; i++) {
        json_int_t total = num(s[i], "total.fallbacks"), sum = 0;
        size_t k;
        json_t *st;
        json_array_foreach(json_object_get(s[i], "stacks"), k, st) sum +=
            json_integer_value(json_object_get(st, "count"));
        cr_assert_eq(sum, total, "a snapshot is consistent");
        cr_assert_eq(op_count(s[i], "ops", "vkt_dot"), total);
        cr_assert_leq(total, spun);
        json_decref(s[i]);
    }
    json_t *d = one_dump("exit");
    cr_assert_eq(num(d, "total.fallbacks"), spun, "nothing lost");
    json_decref(d);
}

Test(preload, unwritable_output_directory)
{
    result r;
    const char *argv[] = {SHIM_APP, "rc", "2", "9", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_OUTPUT=/nonexistent/dir/x.json", NULL}, argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 9);
    cr_assert_str_eq(r.out, "hello from the app\n");
    cr_assert_eq(lines(r.err, "FBCOUNT_OUTPUT"), 1, "%s", r.err);
    json_t *d = one_dump("exit"); /* kept: written to the default name instead */
    cr_assert_eq(op_count(d, "ops", "vkt_dot"), 2);
    json_decref(d);
}

Test(preload, never_writes_through_a_symlink)
{
    char target[128], link[128];
    snprintf(target, sizeof target, "%s/target", tmpdir);
    snprintf(link, sizeof link, "%s/out.json", tmpdir);
    FILE *f = fopen(target, "w");
    fputs("precious", f);
    fclose(f);
    cr_assert_eq(symlink(target, link), 0);
    result r;
    const char *argv[] = {SHIM_APP, "rc", "1", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", "FBCOUNT_OUTPUT=out.json", NULL}, argv);
    char buf[32] = "";
    f = fopen(target, "r");
    cr_assert(fgets(buf, sizeof buf, f));
    fclose(f);
    cr_assert_str_eq(buf, "precious");
    struct stat st;
    cr_assert_eq(lstat(link, &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "the link is left alone");
    cr_assert_eq(lines(r.err, "FBCOUNT_OUTPUT"), 1, "one warning: %s", r.err);
    json_t *d = one_dump("exit"); /* at the default name */
    cr_assert_eq(op_count(d, "ops", "vkt_dot"), 1);
    json_decref(d);
}

Test(preload, disabled_and_none)
{
    result r;
    const char *argv[] = {SHIM_APP, "rc", "1", NULL};
    run(&r, true, (const char *[]){"FBCOUNT=0", NULL}, argv);
    cr_assert_str_eq(r.err, "");
    json_t *d[2];
    cr_assert_eq(dumps(d, 2, NULL), 0);
    run(&r, true, (const char *[]){"FBCOUNT_OUTPUT=none", NULL}, argv);
    cr_assert_eq(dumps(d, 2, NULL), 0);
    cr_assert(strstr(r.err, "fbcount: 1 fallback"), "%s", r.err);
}

/* Each bad value: one warning naming the variable, the default, an unchanged program. */
Test(preload, bad_values_warn_once_and_use_the_default)
{
    static const char *bad[] = {
        "FBCOUNT=maybe",
        "FBCOUNT_DEPTH=abc",
        "FBCOUNT_DEPTH=1",
        "FBCOUNT_MODE=bogus",
        "FBCOUNT_SIGNAL=XYZ",
        "FBCOUNT_SIGNAL=KILL",
        "FBCOUNT_ALLOW=/nonexistent/allow",
        "FBCOUNT_OP_PREFIX=,,",
        "FBCOUNT_OUTPUT=%q.json",
        "FBCOUNT_QUIET=2",
        "FBCOUNT_CONTRACT=1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char var[64];
        snprintf(var, sizeof var, "%.*s", (int)strcspn(bad[i], "="), bad[i]);
        result r;
        const char *argv[] = {SHIM_APP, "mix", "1", "4", NULL};
        const char *env[] = {bad[i], strcmp(var, "FBCOUNT_QUIET") ? "FBCOUNT_QUIET=1" : NULL, NULL};
        run(&r, true, env, argv);
        cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 4, "%s: status %#x", bad[i],
                  r.status);
        cr_assert_str_eq(r.out, "mix done 1\n", "%s", bad[i]);
        char needle[80];
        snprintf(needle, sizeof needle, "fbcount: %s=", var);
        cr_assert_eq(lines(r.err, needle), 1, "%s: %s", bad[i], r.err);
        if (strcmp(var, "FBCOUNT_QUIET"))
            cr_assert_eq(lines(r.err, "\n"), 1, "%s: one line: %s", bad[i], r.err);
        json_t *d = one_dump("exit");
        cr_assert_eq(num(d, "total.fallbacks"), 5, "%s", bad[i]);
        cr_assert_eq(num(d, "config.depth"), 64);
        cr_assert_eq(op_count(d, "ops", "vkt_dot"), 2, "%s", bad[i]);
        json_decref(d);
        remove_dir();
        cr_assert_eq(mkdir(tmpdir, 0700), 0);
    }
}

Test(preload, depth_and_prefix)
{
    result r;
    const char *argv[] = {SHIM_APP, "mix", "1", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", "FBCOUNT_DEPTH=4", NULL}, argv);
    json_t *d = one_dump("exit");
    size_t i;
    json_t *st;
    json_array_foreach(json_object_get(d, "stacks"), i, st)
        cr_assert_leq(json_array_size(json_object_get(st, "frames")), 4);
    cr_assert_eq(op_count(d, "ops", "vkt_add"), 2, "the op frame is the fourth");
    json_decref(d);
    remove_dir();
    cr_assert_eq(mkdir(tmpdir, 0700), 0);
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", "FBCOUNT_OP_PREFIX=nothing_, site_", NULL},
        argv);
    d = one_dump("exit");
    cr_assert_eq(op_count(d, "ops", "site_beta"), 2);
    cr_assert_eq(op_count(d, "ops", "site_alpha"), 1);
    /* The site is the first frame outside the op's module: here past main, in libc. */
    json_t *site = json_array_get(json_object_get(op(d, "ops", "site_beta"), "sites"), 0);
    cr_assert(strstr(json_string_value(json_object_get(site, "module")), "libc"));
    json_decref(d);
}

Test(preload, warn_mode_prints_each_op_site_once)
{
    result r;
    const char *argv[] = {SHIM_APP, "mix", "3", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", "FBCOUNT_MODE=warn", NULL}, argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    cr_assert_eq(lines(r.err, "fallback: vkt_dot at site_alpha"), 1, "%s", r.err);
    cr_assert_eq(lines(r.err, "fallback: vkt_dot at site_gamma"), 1, "%s", r.err);
    cr_assert_eq(lines(r.err, "fallback: vkt_add at site_beta"), 1, "%s", r.err);
    cr_assert_eq(lines(r.err, "fallback: (unknown) at site_raw"), 1, "%s", r.err);
    /* The short stack starts at the user's frame, the backend's frames left out. */
    cr_assert(strstr(r.err, "#0 site_alpha ("), "a short stack: %s", r.err);
    cr_assert(strstr(r.err, "#1 main ("), "a short stack: %s", r.err);
    cr_assert(!strstr(r.err, "vkt_dot ("), "no backend frame: %s", r.err);
    json_t *d = one_dump("exit");
    cr_assert_eq(num(d, "total.fallbacks"), 15);
    json_decref(d);
}

static void write_allow(const char *text)
{
    char p[128];
    snprintf(p, sizeof p, "%s/allow", tmpdir);
    FILE *f = fopen(p, "w");
    fputs(text, f);
    fclose(f);
}

Test(preload, abort_mode_dumps_then_aborts_at_a_disallowed_op)
{
    write_allow("# fallbacks we live with\nvkt_dot   # no shader for f32 dot yet\nvkt_add\n");
    char allow[160];
    snprintf(allow, sizeof allow, "FBCOUNT_ALLOW=%s/allow", tmpdir);
    result r;
    const char *argv[] = {SHIM_APP, "mix", "2", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", "FBCOUNT_MODE=abort", allow, NULL}, argv);
    cr_assert(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT, "status %#x", r.status);
    cr_assert_eq(lines(r.err, "has no reason"), 1, "%s", r.err);
    cr_assert_eq(lines(r.err, "(unknown) is not allowed"), 1, "%s", r.err);
    json_t *d = one_dump(NULL);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(d, "abort"), "op")),
                     "(unknown)");
    cr_assert_eq(op_count(d, "ops", "vkt_dot"), 4);
    cr_assert_eq(op_count(d, "ops", "vkt_add"), 4);
    cr_assert_eq(op_count(d, "ops", "(unknown)"), 1);
    json_decref(d);
}

Test(preload, abort_mode_runs_through_when_all_allowed)
{
    write_allow("vkt_dot # a\nvkt_add # b\n(unknown) # c\n");
    char allow[160];
    snprintf(allow, sizeof allow, "FBCOUNT_ALLOW=%s/allow", tmpdir);
    result r;
    const char *argv[] = {SHIM_APP, "mix", "2", "3", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", "FBCOUNT_MODE=abort", allow, NULL}, argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 3, "status %#x %s", r.status, r.err);
    cr_assert_eq(lines(r.err, "fallback: "), 4, "each (op, site) once: %s", r.err);
}
