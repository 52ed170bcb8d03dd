/* test_field.c - the ways real runs end and the ways real programs misbehave, under the
 * preloaded shim: every termination signal writes the census and the program still dies by
 * it; the program's own handlers keep their meaning; SIGKILL loses at most one checkpoint
 * interval; exec, _Fork and late fallbacks lose nothing; and the shim never harms the program
 * (file-size limits, daemons that close every descriptor, setuid, tiny thread stacks, two
 * RTLD_LOCAL backends, devices and FIFOs as files, recovered faults, overflows). */
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner.h"

TestSuite(field, .init = make_dir, .fini = remove_dir, .timeout = 90);

static const char *quiet[] = {"FBCOUNT_QUIET=1", NULL};

static void signal_case(int sig, const char *name)
{
    result r;
    char num_[16];
    snprintf(num_, sizeof num_, "%d", sig);
    const char *argv[] = {SHIM_FIELD, "signal", "6", num_, NULL};
    run(&r, true, NULL, argv);
    cr_assert(WIFSIGNALED(r.status) && WTERMSIG(r.status) == sig, "%s: status %#x %s", name,
              r.status, r.err);
    json_t *d = one_dump("signal");
    cr_assert_eq(num(d, "total.fallbacks"), 6, "%s", name);
    cr_assert_eq(num(d, "signal"), sig);
    cr_assert_str_eq(json_string_value(json_object_get(d, "signal_name")), name);
    cr_assert(strstr(r.err, name) && strstr(r.err, "6 fallbacks"), "summary: %s", r.err);
    json_decref(d);
    json_t *all[4];
    int n = dumps(all, 4, NULL);
    for (int i = 0; i < n; i++)
        json_decref(all[i]);
    cr_assert_eq(n, 1, "%s: only the signal dump", name);
}

Test(field, each_termination_signal_writes_the_census_and_kills)
{
    static const struct {
        int sig;
        const char *name;
    } sigs[] = {
        {SIGINT, "SIGINT"},   {SIGTERM, "SIGTERM"}, {SIGHUP, "SIGHUP"},       {SIGQUIT, "SIGQUIT"},
        {SIGXCPU, "SIGXCPU"}, {SIGALRM, "SIGALRM"}, {SIGVTALRM, "SIGVTALRM"}, {SIGPROF, "SIGPROF"},
        {SIGUSR2, "SIGUSR2"}, {SIGXFSZ, "SIGXFSZ"},
    };
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        signal_case(sigs[i].sig, sigs[i].name);
        remove_dir();
        make_dir();
    }
}

Test(field, a_closed_pipe_kills_with_the_census_written)
{
    result r;
    const char *argv[] = {SHIM_FIELD, "pipe", "4", NULL};
    run(&r, true, quiet, argv);
    cr_assert(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGPIPE, "status %#x", r.status);
    json_t *d = one_dump("signal");
    cr_assert_eq(num(d, "total.fallbacks"), 4);
    json_decref(d);
}

Test(field, the_programs_own_handler_and_sig_ign_keep_their_meaning)
{
    result r;
    const char *own[] = {SHIM_FIELD, "own-term", "3", NULL};
    run(&r, true, quiet, own);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 3, "status %#x", r.status);
    json_t *d = one_dump("exit");
    cr_assert_eq(num(d, "total.fallbacks"), 3);
    json_decref(d);
    remove_dir();
    make_dir();
    const char *ign[] = {SHIM_FIELD, "ignore-term", "2", NULL};
    run(&r, true, quiet, ign);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status %#x", r.status);
    d = one_dump("exit");
    cr_assert_eq(num(d, "total.fallbacks"), 3);
    json_decref(d);
}

Test(field, sigaction_reports_the_programs_view)
{
    result r;
    const char *argv[] = {SHIM_FIELD, "views", "2", NULL};
    run(&r, true, quiet, argv);
    cr_assert_str_eq(r.out, "default 5 own 1\n", "the program sees its own dispositions");
    cr_assert(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGTERM, "status %#x", r.status);
    json_t *d = one_dump("signal");
    cr_assert_eq(num(d, "total.fallbacks"), 3, "the default set again is the shim's again");
    json_decref(d);
}

Test(field, a_storm_of_census_signals_then_sigterm)
{
    result r;
    const char *argv[] = {SHIM_FIELD, "storm", "500", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", "FBCOUNT_OUTPUT=d.%n.json", NULL}, argv);
    cr_assert(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGTERM, "status %#x", r.status);
    json_t *d = one_dump("signal");
    cr_assert_eq(num(d, "total.fallbacks"), 500);
    json_decref(d);
}

Test(field, sigkill_loses_at_most_one_interval)
{
    result r;
    const char *argv[] = {SHIM_FIELD, "kill-later", "5", "700", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", "FBCOUNT_INTERVAL=0.2", NULL}, argv);
    cr_assert(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGKILL);
    json_t *all[4];
    int n = dumps(all, 4, NULL);
    cr_assert_eq(n, 1, "one checkpoint file, replaced at each interval");
    cr_assert_str_eq(json_string_value(json_object_get(all[0], "reason")), "checkpoint");
    cr_assert_eq(num(all[0], "total.fallbacks"), 10, "both halves, the second 700 ms before");
    json_decref(all[0]);
}

Test(field, a_final_dump_removes_the_checkpoint)
{
    result r;
    const char *argv[] = {SHIM_FIELD, "sleepy", "3", "500", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", "FBCOUNT_INTERVAL=0.1", NULL}, argv);
    json_t *all[4];
    int n = dumps(all, 4, NULL);
    cr_assert_eq(n, 1, "the exit dump, no checkpoint left beside it");
    cr_assert_str_eq(json_string_value(json_object_get(all[0], "reason")), "exit");
    cr_assert_gt(num(all[0], "seq"), 1, "checkpoints were written meanwhile");
    json_decref(all[0]);
}

Test(field, two_runs_in_pid_namespaces_keep_both_censuses)
{
    result r;
    const char *argv[] = {"/usr/bin/unshare", "--pid", "--fork", "--kill-child",
                          SHIM_FIELD,         "count", "2",      NULL};
    run(&r, true, quiet, argv);
    if (WIFEXITED(r.status) && WEXITSTATUS(r.status) != 0 && strstr(r.err, "unshare"))
        RUNNER_SKIP("no pid namespaces here: %s", r.err);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s", r.err);
    run(&r, true, quiet, argv);
    json_t *d[4];
    int n = dumps(d, 4, "exit");
    cr_assert_eq(n, 2, "both pid 1, neither overwritten");
    cr_assert_eq(num(d[0], "process.pid"), 1);
    cr_assert_eq(num(d[1], "process.pid"), 1);
    cr_assert_str_neq(json_string_value(json_object_get(json_object_get(d[0], "process"), "id")),
                      json_string_value(json_object_get(json_object_get(d[1], "process"), "id")));
    json_decref(d[0]);
    json_decref(d[1]);
}

/* A setuid-root program linked with libfbcount, run by another user who names a root-only
 * place for its output: the variables are not read under AT_SECURE, nothing is written. */
Test(field, a_setuid_program_ignores_the_variables)
{
    if (geteuid() != 0)
        RUNNER_SKIP("needs root to make a setuid-root program");
    char bin[] = "/tmp/fbcount-suid-XXXXXX", locked[] = "/tmp/fbcount-locked-XXXXXX";
    cr_assert_not_null(mkdtemp(bin));
    cr_assert_not_null(mkdtemp(locked));
    cr_assert_eq(chmod(bin, 0755), 0);
    char prog[128], cmd[512], out[160], var[200];
    snprintf(prog, sizeof prog, "%s/suid", bin);
    snprintf(cmd, sizeof cmd, "cp %s %s && chmod 4755 %s", SHIM_SUID, prog, prog);
    cr_assert_eq(system(cmd), 0);
    snprintf(out, sizeof out, "%s/x.json", locked);
    snprintf(var, sizeof var, "FBCOUNT_OUTPUT=%s", out);
    result r;
    const char *argv[] = {
        "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", prog, NULL};
    run(&r, false, (const char *[]){"FBCOUNT=1", var, NULL}, argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status %#x %s", r.status, r.err);
    cr_assert_str_eq(r.out, "suid ran, its scope counted 1\n");
    cr_assert_neq(access(out, F_OK), 0, "the program wrote where its user cannot");
    snprintf(cmd, sizeof cmd, "rm -rf %s %s", bin, locked);
    cr_assert_eq(system(cmd), 0);
}

Test(field, every_exec_function_writes_the_census_first)
{
    static const char *hows[] = {"execl", "execlp", "execle", "fexecve", "execveat"};
    for (size_t i = 0; i < sizeof hows / sizeof *hows; i++) {
        result r;
        const char *argv[] = {SHIM_FIELD, "exec", "3", hows[i], NULL};
        run(&r, true, quiet, argv);
        cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s: %#x %s", hows[i],
                  r.status, r.err);
        json_t *d[4];
        int n = dumps(d, 4, "exit");
        cr_assert_eq(n, 2, "%s: before and after", hows[i]);
        json_t *before = json_is_true(json_object_get(d[0], "exec")) ? d[0] : d[1];
        json_t *after = before == d[0] ? d[1] : d[0];
        cr_assert_eq(num(before, "total.fallbacks"), 3, "%s", hows[i]);
        cr_assert_eq(num(after, "total.fallbacks"), 1, "%s", hows[i]);
        json_decref(d[0]);
        json_decref(d[1]);
        remove_dir();
        make_dir();
    }
}

Test(field, nothing_of_the_shims_is_left_in_an_execed_environment)
{
    result r;
    const char *argv[] = {SHIM_FIELD, "exec-env", "2", NULL};
    run(&r, true, quiet, argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    cr_assert(strstr(r.out, "LD_PRELOAD="), "env ran: %s", r.out);
    cr_assert_null(strstr(r.out, "FBCOUNT_SEQ"), "%s", r.out);
    cr_assert_eq(lines(r.out, "FBCOUNT"), 1, "only the test's own FBCOUNT_QUIET: %s", r.out);
}

Test(field, a_child_of_underscore_fork_is_a_census_of_its_own)
{
    result r;
    const char *argv[] = {SHIM_FIELD, "_Fork", "3", NULL};
    run(&r, true, quiet, argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status %#x %s", r.status, r.err);
    json_t *d[4];
    cr_assert_eq(dumps(d, 4, "exit"), 2);
    json_t *child = op_count(d[0], "ops", "vkt_add") ? d[0] : d[1];
    json_t *parent = child == d[0] ? d[1] : d[0];
    cr_assert_eq(num(child, "total.fallbacks"), 3);
    cr_assert_eq(op_count(child, "ops", "vkt_dot"), 0);
    cr_assert_eq(num(parent, "total.fallbacks"), 3);
    cr_assert_eq(op_count(parent, "ops", "vkt_add"), 0);
    cr_assert_neq(num(child, "process.pid"), num(parent, "process.pid"));
    json_decref(d[0]);
    json_decref(d[1]);
}

Test(field, fallbacks_in_late_atexit_handlers_and_destructors_count)
{
    result r;
    const char *argv[] = {SHIM_FIELD, "late", "3", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", "RECOVER_DTOR_FALLBACKS=4", NULL}, argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    json_t *d = one_dump("exit");
    cr_assert_eq(num(d, "total.fallbacks"), 3 + 2 + 4, "main, atexit handler, destructor");
    json_decref(d);
}

Test(field, a_file_size_limit_changes_nothing_for_the_program)
{
    result r;
    const char *argv[] = {SHIM_FIELD, "fsize", "2", NULL};
    run(&r, true, quiet, argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status %#x (not SIGXFSZ)",
              r.status);
    cr_assert(strstr(r.err, "cannot write"), "one warning: %s", r.err);
}

Test(field, a_daemon_that_closes_every_descriptor_keeps_its_files)
{
    char file[128];
    snprintf(file, sizeof file, "%s/daemon.log", tmpdir);
    result r;
    const char *argv[] = {SHIM_FIELD, "daemon", "40", file, NULL};
    run(&r, true, quiet, argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status %#x %s", r.status, r.err);
    FILE *f = fopen(file, "r");
    cr_assert_not_null(f);
    char buf[64] = "";
    cr_assert(fgets(buf, sizeof buf, f));
    cr_assert_str_eq(buf, "daemon-ok\n", "its file holds what it wrote, nothing of the shim's");
    cr_assert_null(fgets(buf, sizeof buf, f));
    fclose(f);
    json_t *d = one_dump("exit");
    cr_assert_eq(num(d, "total.fallbacks"), 80);
    json_decref(d);
    json_t *s = one_dump("snapshot");
    cr_assert_eq(num(s, "total.fallbacks"), 40);
    json_decref(s);
}

Test(field, setuid_and_setpriv_still_work)
{
    result r;
    const char *argv[] = {SHIM_FIELD, "setuid", "2", NULL};
    run(&r, true, quiet, argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status %#x", r.status);
    cr_assert_str_eq(r.out, "uid 65534\n");
    /* The census outlives the lost right to write here: it goes to /tmp, named in a warning.
     * Removed, so that the runs of this test leave nothing behind. */
    const char *w = strstr(r.err, "cannot write fbcount.shim-field.");
    int pid = 0;
    cr_assert(w && sscanf(w, "cannot write fbcount.shim-field.%d.json", &pid) == 1, "%s", r.err);
    char moved[96];
    snprintf(moved, sizeof moved, "/tmp/fbcount.shim-field.%d.json", pid);
    cr_expect_eq(access(moved, F_OK), 0, "no census at %s: %s", moved, r.err);
    unlink(moved);
    remove_dir();
    make_dir();
    const char *setpriv[] = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
                             "--clear-groups",   "/bin/true",     NULL};
    run(&r, true, quiet, setpriv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "setpriv: status %#x %s", r.status,
              r.err);
    json_t *d[2];
    cr_assert_eq(dumps(d, 2, NULL), 0, "setpriv uses no backend: no dump, no thread");
}

Test(field, warn_mode_on_a_16k_thread_stack)
{
    result r;
    const char *argv[] = {SHIM_FIELD, "smallstack", "3", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", "FBCOUNT_MODE=warn", NULL}, argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status %#x", r.status);
    cr_assert_eq(lines(r.err, "fallback: vkt_dot at site_a"), 1, "%s", r.err);
}

Test(field, two_rtld_local_backends_each_get_their_own_calls)
{
    char arg[1100];
    snprintf(arg, sizeof arg, "%s:%s", SHIM_FAKE_A, SHIM_FAKE_B);
    result r;
    const char *argv[] = {SHIM_FIELD, "twolocal", "3", arg, NULL};
    run(&r, true, quiet, argv);
    cr_assert_str_eq(r.out, "a 3 b 6\n");
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    json_t *d = one_dump("exit");
    cr_assert_eq(num(d, "total.fallbacks"), 9);
    /* Each backend's tensors read by its own accessors: B's are ten times the size, in its
     * dtype names; both backends are libvkt's row, in two modules. */
    json_t *shapes = json_object_get(op(d, "ops", "vkt_dot"), "shapes");
    cr_assert_eq(json_array_size(shapes), 2, "%s", json_dumps(shapes, 0));
    bool seen_a = false, seen_b = false;
    size_t i;
    json_t *s;
    json_array_foreach(shapes, i, s)
    {
        const char *dt = json_string_value(json_object_get(s, "dtype"));
        json_int_t d0 = json_integer_value(json_array_get(json_object_get(s, "shape"), 0));
        json_int_t count = json_integer_value(json_object_get(s, "count"));
        seen_a |= !strcmp(dt, "f32") && d0 == 16 && count == 3;
        seen_b |= !strcmp(dt, "b32") && d0 == 160 && count == 6;
    }
    cr_assert(seen_a && seen_b, "each backend's own accessors: %s", json_dumps(shapes, 0));
    json_t *b = json_array_get(json_object_get(d, "backends"), 0);
    char *mods = json_dumps(json_object_get(b, "modules"), 0);
    cr_assert(mods && strstr(mods, "libfakeva.so") && strstr(mods, "libfakevb.so"),
              "both modules listed: %s", mods);
    free(mods);
    json_decref(d);
}

Test(field, a_recovering_segv_handler_is_left_alone)
{
    result r;
    const char *argv[] = {SHIM_FIELD, "recover", "7", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", "RECOVER_SEGV=1", NULL}, argv);
    cr_assert_str_eq(r.out, "recovered 7\n", "the handler saw the real fault addresses");
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status %#x", r.status);
    cr_assert_null(strstr(r.err, "fatal signal"), "%s", r.err);
    json_t *d = one_dump("exit");
    cr_assert_eq(num(d, "total.fallbacks"), 7);
    json_decref(d);
}

static int temporaries(void)
{
    DIR *dir = opendir(tmpdir);
    struct dirent *e;
    int n = 0;
    while (dir && (e = readdir(dir)))
        n += strstr(e->d_name, ".tmp") != NULL;
    if (dir)
        closedir(dir);
    return n;
}

Test(field, two_threads_faulting_together_leave_a_whole_dump)
{
    result r;
    const char *argv[] = {SHIM_FIELD, "segv2", "20000", NULL};
    run(&r, true, quiet, argv);
    cr_assert(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGSEGV, "status %#x", r.status);
    json_t *d = one_dump("crash");
    cr_assert_eq(num(d, "total.fallbacks"), 20000);
    json_decref(d);
    cr_assert_eq(temporaries(), 0);
}

Test(field, small_and_missing_alternate_stacks)
{
    result r;
    const char *alt[] = {SHIM_FIELD, "altstack", "2", NULL};
    run(&r, true, quiet, alt);
    cr_assert(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGSEGV, "status %#x", r.status);
    json_t *d = one_dump("crash");
    cr_assert_eq(num(d, "total.fallbacks"), 2);
    json_decref(d);
    remove_dir();
    make_dir();
    const char *over[] = {SHIM_FIELD, "overflow", "3", NULL};
    run(&r, true, quiet, over);
    cr_assert(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGSEGV, "status %#x", r.status);
    d = one_dump("crash");
    cr_assert_eq(num(d, "total.fallbacks"), 3);
    json_decref(d);
    cr_assert_eq(temporaries(), 0);
}

Test(field, many_distinct_stacks_make_a_dump_the_reader_takes)
{
    result r;
    const char *argv[] = {SHIM_FIELD, "stacks", "65536", NULL};
    run(&r, true, quiet, argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    DIR *dir = opendir(tmpdir);
    struct dirent *e;
    long long size = 0;
    while ((e = readdir(dir))) {
        char p[512];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
        if (strstr(e->d_name, ".json") && stat(p, &st) == 0)
            size = st.st_size;
    }
    closedir(dir);
    cr_assert_gt(size, 0);
    cr_assert_lt(size, 64ll << 20, "65,536 stacks in %lld bytes: frames written once", size);
    json_t *d = one_dump("exit");
    cr_assert_eq(num(d, "total.stacks"), 65536);
    json_decref(d);
}

/* Each a file the shim must not write over or read from: a device, a FIFO, a directory. */
Test(field, devices_fifos_and_directories_are_not_files)
{
    static const char *outs[] = {"FBCOUNT_OUTPUT=/dev/null", "FBCOUNT_OUTPUT=/dev/full"};
    for (size_t i = 0; i < 2; i++) {
        struct stat before, after;
        const char *dev = strchr(outs[i], '=') + 1;
        cr_assert_eq(stat(dev, &before), 0);
        result r;
        const char *argv[] = {SHIM_FIELD, "count", "2", NULL};
        run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", outs[i], NULL}, argv);
        cr_assert_eq(stat(dev, &after), 0);
        cr_assert(S_ISCHR(after.st_mode) && after.st_rdev == before.st_rdev, "%s replaced", dev);
        cr_assert_eq(lines(r.err, "FBCOUNT_OUTPUT"), 1, "%s", r.err);
        json_t *d = one_dump("exit");
        json_decref(d);
        remove_dir();
        make_dir();
    }
    char fifo[128];
    snprintf(fifo, sizeof fifo, "%s/fifo", tmpdir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    char allow_fifo[160];
    snprintf(allow_fifo, sizeof allow_fifo, "FBCOUNT_ALLOW=%s", fifo);
    const char *allows[] = {"FBCOUNT_ALLOW=/dev/zero", "FBCOUNT_ALLOW=/dev/urandom", allow_fifo,
                            "FBCOUNT_ALLOW=/tmp"};
    for (size_t i = 0; i < 4; i++) {
        result r;
        const char *argv[] = {SHIM_FIELD, "count", "2", NULL};
        run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", allows[i], NULL}, argv);
        cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s", allows[i]);
        cr_assert_eq(lines(r.err, "FBCOUNT_ALLOW"), 1, "%s: %s", allows[i], r.err);
        cr_assert(strstr(r.err, "allowing nothing"), "%s: %s", allows[i], r.err);
    }
    unlink(fifo);
}

Test(field, a_name_too_long_once_expanded_falls_back_with_a_warning)
{
    char var[1000] = "FBCOUNT_OUTPUT=";
    for (int i = 0; i < 240; i++)
        strcat(var, "%e");
    result r;
    const char *argv[] = {SHIM_FIELD, "count", "2", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", var, NULL}, argv);
    cr_assert_eq(lines(r.err, "FBCOUNT_OUTPUT"), 1, "%s", r.err);
    cr_assert(strstr(r.err, "longer than 2 KiB"), "%s", r.err);
    json_t *d = one_dump("exit");
    cr_assert_eq(num(d, "total.fallbacks"), 2);
    json_decref(d);
}

Test(field, terminating_signals_are_refused_as_the_census_signal)
{
    result r;
    char sig[16];
    snprintf(sig, sizeof sig, "%d", SIGTERM);
    const char *argv[] = {SHIM_FIELD, "signal", "2", sig, NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", "FBCOUNT_SIGNAL=TERM", NULL}, argv);
    cr_assert_eq(lines(r.err, "FBCOUNT_SIGNAL"), 1, "%s", r.err);
    cr_assert(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGTERM, "SIGTERM still ends it");
    json_t *d = one_dump("signal");
    json_decref(d);
}

Test(field, an_inlined_function_is_a_frame_and_the_site)
{
    result r;
    const char *argv[] = {SHIM_FIELD, "inline", "3", NULL};
    run(&r, true, quiet, argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    json_t *d = one_dump("exit");
    cr_assert_eq(site_count(d, "vkt_dot", "helper_inlined"), 3, "the inlined helper is the site");
    json_t *st = json_array_get(json_object_get(d, "stacks"), 0);
    bool inlined = false, caller = false;
    for (size_t i = 0; i < json_array_size(json_object_get(st, "frames")); i++) {
        json_t *f = frame(d, st, i);
        const char *sym = json_string_value(json_object_get(f, "symbol"));
        if (sym && !strcmp(sym, "helper_inlined")) {
            inlined = json_is_true(json_object_get(f, "inlined"));
            const char *file = json_string_value(json_object_get(f, "file"));
            cr_assert(file && file[0] == '/' && strstr(file, "tests/shim/field.c"),
                      "an absolute source path: %s", file);
        }
        if (sym && !strcmp(sym, "site_inl"))
            caller = !json_is_true(json_object_get(f, "inlined")) &&
                     json_integer_value(json_object_get(f, "line")) > 0;
    }
    cr_assert(inlined && caller, "helper_inlined (inlined) then site_inl at the call line");
    json_decref(d);
}

Test(field, metrics_file_written_or_one_warning)
{
    char var[200], path[160];
    snprintf(path, sizeof path, "%s/m.prom", tmpdir);
    snprintf(var, sizeof var, "FBCOUNT_METRICS=%s", path);
    result r;
    const char *argv[] = {SHIM_FIELD, "count", "4", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", var, NULL}, argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "the metrics file");
    char text[8192] = "";
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    cr_assert(
        strstr(text, "fbcount_fallbacks_total{backend=\"vkt\",op=\"vkt_dot\",site=\"site_a\""),
        "%s", text);
    cr_assert(strstr(text, "} 4\n"), "%s", text);
    cr_assert(n > 6 && !strcmp(text + n - 6, "# EOF\n"), "%s", text);
    const char *bad[] = {SHIM_FIELD, "count", "2", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", "FBCOUNT_METRICS=/nonexistent/m.prom", NULL},
        bad);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
    cr_assert_eq(lines(r.err, "FBCOUNT_METRICS"), 1, "%s", r.err);
}

Test(field, times_ranks_and_names)
{
    result r;
    const char *argv[] = {SHIM_FIELD, "count", "3", NULL};
    run(&r, true,
        (const char *[]){"FBCOUNT_QUIET=1", "FBCOUNT_OUTPUT=r%r.%i.json", "PMI_RANK=5", NULL},
        argv);
    json_t *d = one_dump("exit");
    /* The test backend has no clock of its own: the time is the time inside host_result. */
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(d, "config"), "timing")),
                     "host_result");
    cr_assert_gt(num(d, "total.ns"), 0);
    cr_assert_eq(num(d, "process.rank"), 5);
    const char *id = json_string_value(json_object_get(json_object_get(d, "process"), "id"));
    char name[128];
    snprintf(name, sizeof name, "%s/r5.%.8s.json", tmpdir, id);
    cr_assert_eq(access(name, F_OK), 0, "%%r and %%i expanded: %s", name);
    json_decref(d);
    remove_dir();
    make_dir();
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", "OMPI_COMM_WORLD_RANK=two", NULL}, argv);
    cr_assert_eq(lines(r.err, "OMPI_COMM_WORLD_RANK"), 1, "%s", r.err);
    d = one_dump("exit");
    cr_assert_null(json_object_get(json_object_get(d, "process"), "rank"));
    json_decref(d);
}

Test(field, all_processes_writes_for_a_process_without_a_backend)
{
    result r;
    const char *argv[] = {"/bin/true", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", NULL}, argv);
    json_t *d[2];
    cr_assert_eq(dumps(d, 2, NULL), 0, "no backend, no dump");
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", "FBCOUNT_ALL_PROCESSES=1", NULL}, argv);
    json_t *one = one_dump("exit");
    cr_assert_eq(num(one, "total.fallbacks"), 0);
    json_decref(one);
}

static bool invariant_counter(void)
{
#if defined(__x86_64__)
    unsigned a, b, c, d;
    return __get_cpuid(0x80000007u, &a, &b, &c, &d) && ((d >> 8) & 1);
#else
    return false;
#endif
}

/* A backend without its own clock is timed inside host_result, by the CPU's counter where it
 * is invariant (its rate measured against CLOCK_MONOTONIC) or by CLOCK_MONOTONIC when asked:
 * five 20 ms waits are charged at least 100 ms and no more than the program measured around
 * them, whichever clock ran. */
Test(field, the_event_clock_times_a_known_wait)
{
    const char *clocks[][2] = {
        {NULL, "tsc"}, {"FBCOUNT_CLOCK=monotonic", "monotonic"}, {"FBCOUNT_CLOCK=cycles", "tsc"}};
    for (int i = 0; i < 3; i++) {
        result r;
        const char *argv[] = {SHIM_FIELD, "slow", "5", "20000", NULL};
        run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", clocks[i][0], NULL}, argv);
        cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s", r.err);
        cr_assert_eq(lines(r.err, "FBCOUNT_CLOCK"), i == 2, "%s", r.err);
        long long elapsed = 0;
        cr_assert_eq(sscanf(r.out, "elapsed %lld", &elapsed), 1, "%s", r.out);
        json_t *d = one_dump("exit");
        const char *want =
            !strcmp(clocks[i][1], "tsc") && !invariant_counter() ? "monotonic" : clocks[i][1];
        cr_assert_str_eq(json_string_value(json_object_get(json_object_get(d, "config"), "clock")),
                         want);
        json_t *dot = op(d, "ops", "vkt_dot");
        cr_assert_not_null(dot);
        long long ns = num(d, "total.ns"), max = json_integer_value(json_object_get(dot, "max_ns"));
        cr_assert(ns >= 100000000 && ns <= elapsed, "%s: %lld ns charged, %lld elapsed", want, ns,
                  elapsed);
        cr_assert(max >= 20000000 && max <= elapsed, "%s: max %lld ns", want, max);
        json_decref(d);
        remove_dir();
        make_dir();
    }
}

/* libvkt says when a fallback began: its time covers the downloads, the host reference and the
 * upload, so a convolution's fallback is charged more than a 4 x 4 transpose's. */
Test(field, a_fallback_is_charged_its_time)
{
    result r;
    const char *argv[] = {SHIM_TIMING, "3", NULL};
    run(&r, true, (const char *[]){"FBCOUNT_QUIET=1", "VKT_NATIVE_DISABLE=conv,transpose", NULL},
        argv);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s", r.err);
    json_t *d = one_dump("exit");
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(d, "config"), "timing")),
                     "fallback");
    json_t *conv = op(d, "ops", "vkt_conv"), *tr = op(d, "ops", "vkt_transpose");
    cr_assert(conv && tr);
    json_int_t cns = json_integer_value(json_object_get(conv, "ns"));
    json_int_t tns = json_integer_value(json_object_get(tr, "ns"));
    cr_assert_eq(json_integer_value(json_object_get(conv, "count")), 3);
    cr_assert_gt(tns, 0);
    cr_assert_gt(cns, tns, "conv %lld ns, transpose %lld ns", (long long)cns, (long long)tns);
    cr_assert_geq(num(d, "total.ns"), cns + tns);
    json_decref(d);
}

/* The dumper names stacks at SCHED_IDLE and returns to the normal policy for the dumps someone
 * waits for; a process that may not leave SCHED_IDLE (no CAP_SYS_NICE, RLIMIT_NICE 0: most
 * unprivileged ones, containers without the capability) must never enter it, or its
 * termination dump would starve behind the program for good. */
Test(field, the_dumper_never_stays_idle_where_it_cannot_come_back)
{
    const char *out[] = {"FBCOUNT_QUIET=1", NULL};
    const char *plain[] = {SHIM_FIELD, "policy", "6", "1500", NULL};
    const char *confined[] = {"/usr/bin/prlimit",
                              "--nice=0",
                              "setpriv",
                              "--inh-caps=-sys_nice",
                              "--bounding-set=-sys_nice",
                              SHIM_FIELD,
                              "policy",
                              "6",
                              "1500",
                              NULL};
    result r;
    run(&r, true, out, confined);
    if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0)
        RUNNER_SKIP("cannot drop CAP_SYS_NICE here (prlimit/setpriv: %s)", r.err);
    cr_assert(strstr(r.out, "dumper policy 0\n"), "confined: %s %s", r.out, r.err);
    run(&r, true, out, plain);
    cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s", r.err);
    cr_assert(strstr(r.out, "dumper policy 0\n"), "back from naming stacks: %s", r.out);
}
