/* The rules both halves share: the allow-file grammar, reading a file that may be anything,
 * attribution, name lists, census signals and how DWARF's file names are read. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "allow.h"
#include "attrib.h"
#include "dwname.h"
#include "readfile.h"
#include "signals.h"
#include "symbolizer.h"

static int warned;
static long warned_line;

static void count_warn(void *ctx, long line, const char *op)
{
    (void)ctx;
    (void)op;
    warned++;
    warned_line = line;
}

static fbr_allow *parse(const char *text, char *err)
{
    warned = 0;
    return fbr_allow_parse(text, strlen(text), count_warn, NULL, err, 256);
}

Test(allow, entries_comments_reasons)
{
    char err[256];
    fbr_allow *a = parse("# header\n\n  vkt_dot   # no GEMM for u8\r\nvkt_sort#why\n"
                         "\t vkt_conv \t# tab\nvkt_dot # again\n",
                         err);
    cr_assert_not_null(a, "%s", err);
    cr_expect_eq(fbr_allow_count(a), 3);
    cr_expect(fbr_allow_has(a, "vkt_dot"));
    cr_expect(fbr_allow_has(a, "vkt_sort"));
    cr_expect(fbr_allow_has(a, "vkt_conv"));
    cr_expect(!fbr_allow_has(a, "vkt"));
    cr_expect_str_eq(fbr_allow_reason(a, "vkt_dot"), "no GEMM for u8");
    cr_expect_str_eq(fbr_allow_reason(a, "vkt_conv"), "tab");
    cr_expect_eq(warned, 0);
    fbr_allow_free(a);
}

Test(allow, missing_reason_warns_and_allows)
{
    char err[256];
    fbr_allow *a = parse("vkt_dot # ok\nvkt_sort\nvkt_pad #   \n", err);
    cr_assert_not_null(a, "%s", err);
    cr_expect(fbr_allow_has(a, "vkt_sort"));
    cr_expect(fbr_allow_has(a, "vkt_pad"));
    cr_expect_eq(warned, 2);
    cr_expect_eq(warned_line, 3);
    fbr_allow_free(a);
}

Test(allow, bad_lines_reject_the_file)
{
    static const char *bad[] = {
        "vkt_dot extra words # why\n", "vkt_dot\tvkt_sort\n", "ok # fine\nvkt_a vkt_b\n",
        "vkt_dot\x1b[2J # escape\n",   "vkt_dot # bell \a\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char err[256];
        fbr_allow *a = parse(bad[i], err);
        cr_expect_null(a, "accepted bad file %zu", i);
        cr_expect(strncmp(err, "line ", 5) == 0, "message '%s'", err);
        fbr_allow_free(a);
    }
    char err[256];
    cr_expect_null(fbr_allow_parse("vkt_dot\0 # x\n", 13, NULL, NULL, err, sizeof err));
    cr_expect(strstr(err, "NUL") != NULL);
    char *long_line = malloc(FBR_ALLOW_MAX_LINE + 10);
    memset(long_line, 'a', FBR_ALLOW_MAX_LINE + 5);
    long_line[FBR_ALLOW_MAX_LINE + 5] = '\0';
    cr_expect_null(parse(long_line, err));
    free(long_line);
    char op[300];
    memset(op, 'v', 290);
    strcpy(op + 290, " # r\n");
    cr_expect_null(parse(op, err));
}

Test(allow, empty_and_null)
{
    char err[256];
    fbr_allow *a = parse("", err);
    cr_assert_not_null(a);
    cr_expect_eq(fbr_allow_count(a), 0);
    fbr_allow_free(a);
    cr_expect(!fbr_allow_has(NULL, "vkt_dot"));
    cr_expect_str_eq(fbr_allow_reason(NULL, "vkt_dot"), "");
}

Test(readfile, refuses_what_is_not_a_regular_file)
{
    size_t len;
    errno = 0;
    cr_expect_null(fbr_read_file("/dev/zero", 1 << 20, &len));
    cr_expect_eq(errno, EINVAL);
    cr_expect_null(fbr_read_file("/dev/urandom", 1 << 20, &len));
    cr_expect_null(fbr_read_file("/tmp", 1 << 20, &len));
    cr_expect_eq(errno, EINVAL);
    char fifo[] = "/tmp/fbr-fifo-XXXXXX";
    int fd = mkstemp(fifo);
    cr_assert_geq(fd, 0);
    close(fd);
    unlink(fifo);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    cr_expect_null(fbr_read_file(fifo, 1 << 20, &len)); /* returns at once: no writer awaited */
    cr_expect_eq(errno, EINVAL);
    unlink(fifo);
    cr_expect_null(fbr_read_file("/nonexistent/allow.txt", 1 << 20, &len));
    cr_expect_eq(errno, ENOENT);
    char buf[128];
    cr_expect_str_eq(fbr_read_error(EINVAL, 1 << 20, buf, sizeof buf), "not a regular file");
    cr_expect_str_eq(fbr_read_error(EFBIG, 1 << 20, buf, sizeof buf),
                     "larger than 1 MiB (the most read)");
}

Test(readfile, size_cap_and_content)
{
    char path[] = "/tmp/fbr-read-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, "0123456789", 10), 10);
    close(fd);
    size_t len = 0;
    char *s = fbr_read_file(path, 10, &len);
    cr_assert_not_null(s);
    cr_expect_eq(len, 10);
    cr_expect_str_eq(s, "0123456789");
    free(s);
    errno = 0;
    cr_expect_null(fbr_read_file(path, 9, &len));
    cr_expect_eq(errno, EFBIG);
    char err[256];
    bool unreadable;
    cr_expect_null(fbr_allow_load("/dev/zero", NULL, NULL, err, sizeof err, &unreadable));
    cr_expect(unreadable);
    cr_expect_str_eq(err, "/dev/zero: not a regular file");
    unlink(path);
}

Test(attrib, interpreter_modules)
{
    cr_expect(fbr_module_is_interpreter("/usr/lib/x86_64-linux-gnu/libffi.so.8"));
    cr_expect(fbr_module_is_interpreter(
        "/usr/lib/python3.11/lib-dynload/_ctypes.cpython-311-x86_64-linux-gnu.so"));
    cr_expect(fbr_module_is_interpreter(
        "/usr/lib/python3/dist-packages/_cffi_backend.cpython-311-x86_64-linux-gnu.so"));
    cr_expect(fbr_module_is_interpreter("/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0"));
    cr_expect(fbr_module_is_interpreter("/usr/bin/python3.11"));
    cr_expect(fbr_module_is_interpreter("/usr/bin/python3"));
    cr_expect(!fbr_module_is_interpreter("/usr/bin/python_tool"));
    cr_expect(!fbr_module_is_interpreter("/bin/app"));
    cr_expect(!fbr_module_is_interpreter(NULL));
}

Test(names, parse)
{
    fbr_names n;
    cr_expect_eq(fbr_names_parse(" vkt_ , mylib_,, ", "vkt_", &n), 0);
    cr_expect_eq(n.n, 2);
    cr_expect_str_eq(n.name[1], "mylib_");
    fbr_names_free(&n);
    cr_expect_eq(fbr_names_parse(" , ", "vkt_", &n), -1);
    cr_expect_eq(n.n, 1);
    cr_expect_str_eq(n.name[0], "vkt_");
    fbr_names_free(&n);
    cr_expect_eq(fbr_names_parse("a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q", "vkt_", &n), -1);
    cr_expect_str_eq(n.name[0], "vkt_");
    fbr_names_free(&n);
}

Test(signals, census_signals)
{
    int s = -1;
    cr_expect_eq(fbr_signal_parse("USR1", &s), 0);
    cr_expect_eq(s, SIGUSR1);
    cr_expect_eq(fbr_signal_parse("sigusr2", &s), 0);
    cr_expect_eq(s, SIGUSR2);
    cr_expect_eq(fbr_signal_parse("none", &s), 0);
    cr_expect_eq(s, 0);
    cr_expect_eq(fbr_signal_parse("RTMIN+2", &s), 0);
    cr_expect_eq(s, SIGRTMIN + 2);
    cr_expect_eq(fbr_signal_parse("10", &s), 0);
    cr_expect_eq(s, 10);
    static const char *refused[] = {"TERM",    "INT",  "HUP", "QUIT",  "ALRM",    "PIPE",
                                    "SIGSEGV", "KILL", "15",  "TSTP",  "CONT",    "CHLD",
                                    "XCPU",    "-1",   "",    "USR1x", "RTMIN-1", "99"};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
        cr_expect_eq(fbr_signal_parse(refused[i], &s), -1, "accepted %s", refused[i]);
    cr_expect_str_eq(fbr_signal_name(SIGTERM), "SIGTERM");
    cr_expect_str_eq(fbr_signal_name(SIGRTMIN + 3), "SIGRTMIN+3");
    cr_expect_str_eq(fbr_signal_name(0), "SIG?");
}

Test(attrib, sites_read_alike_in_every_view)
{
    char out[256], in[256] = "";
    /* lambdas by their enclosing function, with or without its parameters */
    cr_expect_str_eq(
        fbr_function_display("main::{lambda()#1}::operator()() const", out, sizeof out),
        "lambda in main");
    cr_expect_str_eq(fbr_function_display("f(int)::{lambda(long, long)#2}::operator()(long, "
                                          "long) const",
                                          out, sizeof out),
                     "lambda in f");
    cr_expect_str_eq(fbr_function_display("threads::{lambda}::operator()", out, sizeof out),
                     "lambda in threads");
    /* a lambda in a template's arguments is not the function */
    cr_expect_str_eq(fbr_function_display("std::_Function_handler<void (), main::{lambda()#1}>"
                                          "::_M_invoke(std::_Any_data const&)",
                                          out, sizeof out),
                     "std::_Function_handler<void (), main::{lambda()#1}>::_M_invoke(std::_Any_data"
                     " const&)");
    /* OpenMP's outlined regions, raw and demangled */
    cr_expect_str_eq(fbr_function_display("main._omp_fn.0", out, sizeof out),
                     "parallel body in main");
    cr_expect_str_eq(fbr_function_display("void at::internal::invoke_parallel<F>(long, F const&)"
                                          " [clone ._omp_fn.0]",
                                          out, sizeof out),
                     "parallel body in void at::internal::invoke_parallel<F>");
    /* the chain a site is inlined in, and the site whole */
    fbr_inlined_in_add(in, sizeof in, "helper(int)", "/src/app.cpp", 20);
    fbr_inlined_in_add(in, sizeof in, "main", "/src/app.cpp", 31);
    cr_expect_str_eq(in, "helper(int) (app.cpp:20) inlined in main (app.cpp:31)");
    fbr_site inl = {.name = "on_main", .file = "/src/app.cpp", .line = 11, .inlined_in = in};
    cr_expect_str_eq(fbr_site_text(&inl, out, sizeof out),
                     "on_main (app.cpp:11) inlined in helper(int) (app.cpp:20) inlined in main "
                     "(app.cpp:31)");
    fbr_site thread = {.origin = "thread",
                       .name = "main::{lambda()#1}::operator()() const",
                       .file = "/src/app.cpp",
                       .line = 14};
    cr_expect_str_eq(fbr_site_text(&thread, out, sizeof out),
                     "thread started at lambda in main (app.cpp:14)");
    /* the runtimes' thread machinery, raw or demangled; not the callable a thread runs */
    cr_expect(fbr_function_is_runtime("execute_native_thread_routine"));
    cr_expect(fbr_function_is_runtime("start_thread"));
    cr_expect(fbr_function_is_runtime("_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateE"
                                      "St14default_deleteIS1_EEPFvvE"));
    cr_expect(
        fbr_function_is_runtime("std::thread::_M_start_thread(std::unique_ptr<>, void (*)())"));
    cr_expect(
        !fbr_function_is_runtime("_ZNSt6thread11_State_implINS_8_InvokerISt5tupleIJZ4mainEUlvE_"
                                 "EEEEE6_M_runEv"));
    cr_expect(!fbr_function_is_runtime("main"));
    cr_expect(!fbr_function_is_runtime(NULL));
    fbr_site bare = {.name = "f", .inlined_in = ""};
    cr_expect_str_eq(fbr_site_text(&bare, out, sizeof out), "f");
    /* a backward's node, with and without the forward that made it */
    fbr_site node = {.origin = "backward",
                     .node = "EluBackward0",
                     .forward = "layer (model.py:20)",
                     .name = "<module>",
                     .file = "/src/train.py",
                     .line = 37};
    cr_expect_str_eq(fbr_site_text(&node, out, sizeof out),
                     "EluBackward0 of layer (model.py:20), from backward() at <module> "
                     "(train.py:37)");
    node.forward = NULL;
    cr_expect_str_eq(fbr_site_text(&node, out, sizeof out),
                     "EluBackward0, from backward() at <module> (train.py:37)");
}

/* A function of this program's that the symbolizer core names. */
__attribute__((noinline, used)) int named_here(int x);
__attribute__((noinline, used)) int named_here(int x)
{
    return x * 3 + 1;
}

/* This program reported to a session of the shim's policy, at its load base. */
static Dwfl_Module *report_self(Dwfl *dwfl, const char *build_id, char *why, size_t cap)
{
    Dl_info di;
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    cr_assert(n > 0 && dladdr((void *)named_here, &di));
    path[n] = '\0';
    dwfl_report_begin(dwfl);
    Dwfl_Module *m = fbr_report_module(dwfl, "self", path, -1, (GElf_Addr)(uintptr_t)di.dli_fbase,
                                       build_id, why, cap);
    dwfl_report_end(dwfl, NULL, NULL);
    return m;
}

Test(symbolizer, a_frame_is_named_once_and_kept_in_the_cache)
{
    cr_assert_eq(named_here(1), 4);
    Dwfl *dwfl = dwfl_begin(fbr_debuginfo_callbacks(FBR_DEBUGINFO_BUILD_ID));
    char why[512];
    Dwfl_Module *m = report_self(dwfl, NULL, why, sizeof why);
    cr_assert_not_null(m, "%s", why);
    fbr_functions *fns = NULL;
    fbr_chains *cache = NULL;
    const fbr_dw_frame *a = NULL, *b = NULL;
    GElf_Addr at = (GElf_Addr)(uintptr_t)named_here;
    cr_assert_eq(fbr_chain_at(&cache, m, &fns, at, &a), 1);
    cr_assert_str_eq(a[0].symbol, "named_here");
    /* the file, placed in a buffer of the first call's, lives in the cache */
    cr_assert(a[0].file && strstr(a[0].file, "test_rules.c"), "%s", a[0].file);
    cr_assert_eq(fbr_chain_at(&cache, m, &fns, at, &b), 1);
    cr_assert_eq(a, b, "the second lookup is the cache's");
    fbr_chains_free(cache);
    fbr_functions_free(fns);
    dwfl_end(dwfl);
}

Test(symbolizer, a_module_of_another_build_is_refused)
{
    Dwfl *dwfl = dwfl_begin(fbr_debuginfo_callbacks(FBR_DEBUGINFO_STANDARD));
    char why[512];
    cr_assert_null(report_self(dwfl, "00ff", why, sizeof why));
    cr_assert(strstr(why, "build id") && strstr(why, "differs from the recorded 00ff"), "%s", why);
    dwfl_end(dwfl);
    fbr_debuginfo p;
    cr_assert_eq(fbr_debuginfo_parse("build-id", &p), 0);
    cr_assert_eq(p, FBR_DEBUGINFO_BUILD_ID);
    cr_assert_eq(fbr_debuginfo_parse("network", &p), -1);
    cr_assert_str_eq(fbr_debuginfo_name(FBR_DEBUGINFO_STANDARD), "standard");
}

Test(dwname, source_paths_are_absolute_and_folded)
{
    char out[64];
    cr_assert_str_eq(fbr_source_path("../tests/app.c", "/src/build", out, sizeof out),
                     "/src/tests/app.c");
    cr_assert_str_eq(fbr_source_path("./a/./b//c.c", "/src", out, sizeof out), "/src/a/b/c.c");
    cr_assert_str_eq(fbr_source_path("/abs/x.c", "/src", out, sizeof out), "/abs/x.c");
    cr_assert_str_eq(fbr_source_path("rel.c", NULL, out, sizeof out), "rel.c");
    cr_assert_str_eq(fbr_source_path("rel.c", "", out, sizeof out), "rel.c");
    cr_assert_str_eq(fbr_source_path("../../../x", "/a", out, sizeof out), "/x");
    cr_assert_str_eq(fbr_source_path("..", "/", out, sizeof out), "/");
    cr_assert_null(fbr_source_path(NULL, "/src", out, sizeof out));
    /* A component that does not fit is left out, never cut. */
    char small[12];
    cr_assert_str_eq(fbr_source_path("longer_name.c", "/src", small, sizeof small), "/src");
}
