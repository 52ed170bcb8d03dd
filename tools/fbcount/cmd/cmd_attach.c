/* cmd_attach.c - fbcount attach and fbcount detach: a census of a process that was started
 * without the shim. As memray attach does, gdb's batch mode loads libfbcount.so into the
 * process (dlopen) and calls its attach entry with the variables `fbcount run` would have put
 * in the environment (fbcount_attach, interpose/fbcount.h); detach calls fbcount_detach,
 * which writes the census and puts everything back.
 *
 * Everything that can be checked without touching the process is checked first, each refusal
 * one line with its own exit code: no such process, another user's process, ptrace_scope, a
 * static or non-x86-64 program, a process that runs the shim already (snapshot then), gdb
 * missing. gdb runs a bounded while (--timeout) and is killed past it: the kernel detaches
 * a tracer's tracees when it dies, and a process left stopped is continued. When the library
 * loads but the attach entry refuses, the script unloads it again (nothing was armed).
 */
#include <errno.h>
#include <fcntl.h>
#include <elf.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend.h" /* rules/: declared exits and descriptor files */
#include "choice.h"
#include "backend_args.h"
#include "cli.h"
#include "readfile.h"
#include "run_dir.h"
#include "shim.h"
#include "table.h"

/* The rows attach and detach share (neither takes --version). */
// clang-format off
#define TIMEOUT_HELP_ROWS                                                                      \
    {'t', false, "timeout", "S", "seconds gdb may take before it is killed (default 30)", NULL,  \
     NULL},                                                                                    \
    {'h', true, "help", NULL, "this text", NULL, NULL}
// clang-format on

static const fbx_opt detach_options[] = {TIMEOUT_HELP_ROWS};
#define NDETACH (sizeof detach_options / sizeof *detach_options)

static const fbx_opt attach_options[] = {
    {'m', false, "mode", "%s", "FBCOUNT_MODE for the census (default count)", fbs_mode_values,
     NULL},
    {'a', false, "allow", "FILE", "FBCOUNT_ALLOW: ops allowed to fall back", NULL, NULL},
    {'x', false, "exit", "LIB:SYMBOL[:op=PREFIX]",
     "FBCOUNT_EXIT: also count every call of SYMBOL into LIB\n(repeatable)", NULL, NULL},
    {'b', false, "backend", "FILE", "FBCOUNT_BACKEND: a backend descriptor file (repeatable)", NULL,
     NULL},
    {'o', true, "output", "DIR",
     "where dumps go (default ./fbcount-PID); made as fbcount\nrun makes it", NULL, NULL},
    TIMEOUT_HELP_ROWS,
};
#define NATTACH (sizeof attach_options / sizeof *attach_options)

static const char attach_about[] =
    "usage: fbcount attach [options] PID\n\n"
    "Loads libfbcount.so into the running process PID, which was started without it,\n"
    "through gdb (gdb -p PID --batch), and starts its census: the fallbacks it makes from\n"
    "now on are counted, as under fbcount run. The census is written on `fbcount detach\n"
    "PID`, when the process exits or ends by a termination signal, and on `fbcount\n"
    "snapshot PID`. Needs gdb and the right to trace PID (the same user, or CAP_SYS_PTRACE;\n"
    "/proc/sys/kernel/yama/ptrace_scope 0, or privilege).\n\n";

static const char detach_about[] =
    "usage: fbcount detach [options] PID\n\n"
    "Ends what `fbcount attach PID` started: the process writes its census (reason\n"
    "\"detach\"), its calls go to the backend directly again and its signal actions are put\n"
    "back; the library stays loaded, doing nothing. Prints the census.\n\n";

static void help(bool detach)
{
    fputs(detach ? detach_about : attach_about, stdout);
    if (detach)
        fbx_put_options(stdout, detach_options, NDETACH, 28);
    else
        fbx_put_options(stdout, attach_options, NATTACH, 28);
    fputs(
        detach
            ? "\n"
            : "\nA process that runs the shim already (preloaded, or attached) is not "
              "attached again:\na snapshot is taken instead, and the exit status says so (15).\n\n",
        stdout);
}

/* What ptrace_scope 1..3 forbid, for the refusal line. */
static const char *const scope_rule[] = {
    NULL, "only a process's ancestors may trace it (and gdb is not one)",
    "only a process with CAP_SYS_PTRACE may trace", "no process may trace"};

typedef struct {
    bool detach;
    long pid;
    double timeout;
    const char *mode, *allow, *output;
    fbx_backend_args b; /* --exit, --backend */
    char absallow[PATH_MAX];
} attach_opts;

static const char *cmd_name(const attach_opts *o)
{
    return o->detach ? "detach" : "attach";
}

/* ---- the command line ------------------------------------------------------------- */

static int option(void *ctx, int opt, char *arg)
{
    attach_opts *o = ctx;
    char *end;
    switch (opt) {
    case 'm':
        if (fbx_choose("attach", "--mode", arg, fbs_modes, FBR_NMODES) < 0)
            return FBX_USAGE;
        o->mode = arg;
        return FBX_OK;
    case 'a': o->allow = arg; return FBX_OK;
    case 'o': o->output = arg; return FBX_OK;
    case 'x': return fbx_add_exit(&o->b, "attach", arg);
    case 'b': return fbx_add_backend(&o->b, "attach", arg);
    case 't':
        o->timeout = strtod(arg, &end);
        if (*end || end == arg || !(o->timeout > 0) || o->timeout > 3600) {
            fbx_error(cmd_name(o), "--timeout: expected seconds, got '%s'", arg);
            return FBX_USAGE;
        }
        return FBX_OK;
    case 'h':
        help(o->detach);
        fbx_put_exit_codes(stdout, cmd_name(o));
        return -1;
    }
    return FBX_OK; /* fbx_options gives the keys of the table's rows alone */
}

static int parse(attach_opts *o, int argc, char **argv)
{
    int rc = o->detach ? fbx_options(argc, argv, detach_options, NDETACH, false, option, o)
                       : fbx_options(argc, argv, attach_options, NATTACH, false, option, o);
    if (rc != FBX_OK)
        return rc;
    char *end = NULL;
    o->pid = optind + 1 == argc ? strtol(argv[optind], &end, 10) : 0;
    if (optind + 1 != argc || *end || o->pid <= 0 || o->pid > INT_MAX) {
        fbx_error(cmd_name(o), "expected one PID (try --help)");
        return FBX_USAGE;
    }
    if (o->allow && !realpath(o->allow, o->absallow)) {
        fbx_error("attach", "%s: cannot open allow file: %s", o->allow, strerror(errno));
        return FBX_READ;
    }
    return FBX_OK;
}

/* ---- what can be checked without touching the process ------------------------------ */

static bool has_ptrace_cap(void)
{
    size_t n;
    char *st = fbr_read_file("/proc/self/status", 1 << 20, &n);
    const char *p = st ? strstr(st, "\nCapEff:") : NULL;
    bool yes = p && (strtoull(p + 8, NULL, 16) >> 19 & 1); /* CAP_SYS_PTRACE */
    free(st);
    return yes;
}

/* Whether all four ids of a "Uid:" or "Gid:" line of pid's status are want. */
static bool ids_are(const char *status, const char *key, unsigned long want)
{
    const char *p = status ? strstr(status, key) : NULL;
    if (!p)
        return false;
    p += strlen(key);
    for (int i = 0; i < 4; i++) {
        char *end;
        if (strtoul(p, &end, 10) != want || end == p)
            return false;
        p = end;
    }
    return true;
}

/* The program's ELF header and program headers: a dynamic x86-64 program, or why not. */
static const char *elf_refusal(long pid)
{
    char exe[64];
    snprintf(exe, sizeof exe, "/proc/%ld/exe", pid);
    int fd = open(exe, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == EACCES ? NULL : "its program cannot be read"; /* EACCES: said below */
    Elf64_Ehdr eh;
    const char *why = NULL;
    if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG))
        why = "its program is not an ELF file";
    else if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64)
        why = "its program is not x86-64 (attach redirects x86-64 calls only)";
    else {
        why = "its program is static (no dynamic loader to load the shim)";
        for (unsigned i = 0; i < eh.e_phnum && why; i++) {
            Elf64_Phdr ph;
            if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (Elf64_Off)i * eh.e_phentsize)) !=
                (ssize_t)sizeof ph)
                break;
            if (ph.p_type == PT_INTERP)
                why = NULL;
        }
    }
    close(fd);
    return why;
}

/* The checks that need no tracing, each refusal one line and its own code. */
static int refusal(const attach_opts *o)
{
    const char *cmd = cmd_name(o);
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/status", o->pid);
    size_t n;
    char *status = fbr_read_file(path, 1 << 20, &n);
    if (!status) {
        fbx_error(cmd, "process %ld: no such process", o->pid);
        return FBX_PROCESS;
    }
    bool cap = has_ptrace_cap();
    bool mine = ids_are(status, "\nUid:", (unsigned long)geteuid()) &&
                ids_are(status, "\nGid:", (unsigned long)getegid());
    free(status);
    if (!mine && !cap) {
        fbx_error(cmd,
                  "process %ld belongs to another user (or changed its ids): tracing it "
                  "needs CAP_SYS_PTRACE; nothing was done",
                  o->pid);
        return FBX_OTHER_USER;
    }
    char *scope = fbr_read_file("/proc/sys/kernel/yama/ptrace_scope", 64, &n);
    int level = scope ? atoi(scope) : 0;
    free(scope);
    if (level >= 3 || (level >= 1 && !cap)) {
        fbx_error(cmd,
                  "process %ld: /proc/sys/kernel/yama/ptrace_scope is %d: %s; nothing was "
                  "done",
                  o->pid, level, scope_rule[level > 3 ? 3 : level]);
        return FBX_PTRACE_SCOPE;
    }
    const char *why = o->detach ? NULL : elf_refusal(o->pid);
    if (why) {
        fbx_error(cmd, "process %ld: %s; nothing was done", o->pid, why);
        return FBX_UNSUPPORTED;
    }
    return FBX_OK;
}

/* gdb on PATH, or $FBCOUNT_GDB. */
static bool find_gdb(char *out, size_t len)
{
    const char *env = getenv("FBCOUNT_GDB");
    if (env && *env) {
        snprintf(out, len, "%s", env);
        return access(out, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
        size_t l = strcspn(p, ":");
        snprintf(out, len, "%.*s/gdb", (int)l, p);
        if (l && access(out, X_OK) == 0)
            return true;
        p += l + (p[l] == ':');
    }
    snprintf(out, len, "gdb");
    return false;
}

/* ---- gdb ------------------------------------------------------------------------------ */

/* s as a C string literal's body, for gdb's expression parser. */
static bool quote(char *out, size_t cap, const char *s)
{
    size_t k = 0;
    for (; *s; s++) {
        const char *esc = *s == '\n' ? "\\n" : *s == '"' ? "\\\"" : *s == '\\' ? "\\\\" : NULL;
        size_t add = esc ? 2 : 1;
        if (k + add + 1 > cap)
            return false;
        if (esc)
            memcpy(out + k, esc, 2);
        else
            out[k] = *s;
        k += add;
    }
    out[k] = '\0';
    return true;
}

/* The script: only the thread gdb stopped in runs during the calls (scheduler-locking), so
 * that no other thread meets the redirected exits before the census is on. The shim is
 * loaded RTLD_LOCAL, outside the program's global scope: its references bind as any library's
 * would (the program's malloc, its libc), and it names its own exits by hidden aliases. */
static int write_script(int fd, const attach_opts *o, const char *shim, const char *vars)
{
    static char qshim[2 * PATH_MAX + 2], qvars[2 * 16384 + 2];
    if (!quote(qshim, sizeof qshim, shim) || !quote(qvars, sizeof qvars, vars))
        return -1;
    FILE *f = fdopen(dup(fd), "w");
    if (!f)
        return -1;
    /* Only the C library's symbols are read (gdb starts with auto-solib-add off): dlopen,
     * dlsym, dlerror and dlclose are all the script calls, and a process with hundreds of
     * modules would otherwise cost gdb a third of a second more. */
    fputs("set confirm off\nset pagination off\nsharedlibrary libc\\.so\n"
          "sharedlibrary libdl\\.so\nset scheduler-locking on\n",
          f);
    if (o->detach) {
        /* RTLD_NOLOAD | RTLD_NOW: the handle of the library already there, or 0. */
        fprintf(f,
                "set $h = (void *) dlopen(\"%s\", 6)\n"
                "if $h == 0\n  printf \"fbcount-none\\n\"\nelse\n"
                "  set $f = (const char *(*)(void)) dlsym($h, \"fbcount_detach\")\n"
                "  set $p = $f()\n  call (int) dlclose($h)\n"
                "  if $p == 0\n    printf \"fbcount-none\\n\"\n  else\n"
                "    printf \"fbcount-detached %%s\\n\", $p\n  end\nend\n",
                qshim);
    } else {
        /* RTLD_NOW (2). */
        fprintf(f,
                "set $h = (void *) dlopen(\"%s\", 2)\n"
                "if $h == 0\n  printf \"fbcount-dlopen %%s\\n\", (char *) dlerror()\nelse\n"
                "  set $f = (int (*)(const char *)) dlsym($h, \"fbcount_attach\")\n"
                "  set $r = $f(\"%s\")\n"
                "  if $r != 0\n    call (int) dlclose($h)\n  end\n"
                "  printf \"fbcount-attach %%d\\n\", $r\nend\n",
                qshim, qvars);
    }
    fputs("detach\nquit\n", f);
    return fclose(f) == 0 ? 0 : -1;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A process gdb left stopped (killed while it held it) is continued. */
static void resume(long pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    size_t got = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[got] = '\0';
    const char *rp = strrchr(buf, ')');
    if (rp && (rp[2] == 'T' || rp[2] == 't'))
        kill((pid_t)pid, SIGCONT);
}

/* Runs gdb on script; its standard output into out. Returns 0, or -1 after it timed out
 * (killed) or could not run. */
static int run_gdb(const attach_opts *o, const char *gdb, const char *script, char *out, size_t cap)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    char pid[32];
    snprintf(pid, sizeof pid, "%ld", o->pid);
    pid_t child = fork();
    if (child == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, STDIN_FILENO);
        dup2(p[1], STDOUT_FILENO);
        dup2(null, STDERR_FILENO);
        setpgid(0, 0);
        execl(gdb, gdb, "-iex", "set auto-solib-add off", "-p", pid, "--batch", "-nx", "-x", script,
              (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    if (child < 0) {
        close(p[0]);
        return -1;
    }
    size_t k = 0;
    double end = now_s() + o->timeout;
    bool timed_out = false;
    for (;;) {
        double left = end - now_s();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        struct pollfd pf = {p[0], POLLIN, 0};
        if (poll(&pf, 1, (int)(left * 1000) + 1) <= 0)
            continue;
        ssize_t r = read(p[0], out + k, cap - 1 - k);
        if (r <= 0)
            break;
        k += (size_t)r;
        if (k == cap - 1)
            k = 0; /* only the last lines matter */
    }
    out[k] = '\0';
    close(p[0]);
    if (timed_out) {
        kill(-child, SIGKILL);
        kill(child, SIGKILL);
    }
    int st;
    waitpid(child, &st, 0);
    if (timed_out) {
        usleep(100000);
        resume(o->pid);
        return -1;
    }
    return 0;
}

/* ---- attach and detach ---------------------------------------------------------------- */

/* The variables fbcount run would set, one a line. */
static bool variables(const attach_opts *o, const fbx_run_dir *d, char *vars, size_t cap)
{
    char output[PATH_MAX + 64];
    const fbs_request req = {d->abs,     NULL,         o->mode, o->allow ? o->absallow : NULL,
                             o->b.exits, o->b.backends};
    fbs_setting set[FBR_NVARS];
    int nset = fbs_settings(&req, set, output, sizeof output), n = 0;
    if (nset < 0)
        return false;
    for (int i = 0; i < nset && n >= 0 && (size_t)n < cap; i++)
        n +=
            snprintf(vars + n, cap - (size_t)n, "%s=%s\n", fbr_var_names[set[i].var], set[i].value);
    return n >= 0 && (size_t)n < cap;
}

/* Runs the script; the line gdb's run printed for it ("fbcount-..."), or an error. */
static int inject(const attach_opts *o, const char *shim, const char *vars, char *line, size_t cap)
{
    const char *cmd = cmd_name(o);
    char gdb[PATH_MAX];
    if (!find_gdb(gdb, sizeof gdb)) {
        fbx_error(cmd,
                  "gdb is not installed (%s not found; apt-get install gdb, or set "
                  "FBCOUNT_GDB); nothing was done",
                  gdb);
        return FBX_NOGDB;
    }
    char script[] = "/tmp/fbcount-attach-XXXXXX";
    int fd = mkstemp(script);
    if (fd < 0 || write_script(fd, o, shim, vars) != 0) {
        fbx_error(cmd, "cannot write gdb's script in /tmp: %s", strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(script);
        }
        return FBX_SYSTEM;
    }
    close(fd);
    static char out[65536];
    int rc = run_gdb(o, gdb, script, out, sizeof out);
    unlink(script);
    if (rc != 0) {
        fbx_error(cmd,
                  "process %ld: gdb did not finish within %g s: it was killed, and the "
                  "process goes on%s",
                  o->pid, o->timeout,
                  o->detach ? " (attached still, unless the detach had run)" : "");
        return FBX_INJECT;
    }
    const char *l = strstr(out, "fbcount-");
    if (!l) {
        fbx_error(cmd,
                  "process %ld: gdb could not call into it (its dynamic loader's dlopen "
                  "was not found, or the process ended); it was left as it was",
                  o->pid);
        return FBX_INJECT;
    }
    snprintf(line, cap, "%.*s", (int)strcspn(l, "\n"), l);
    return FBX_OK;
}

/* A process that runs the shim already: a snapshot, through the snapshot command. */
static int snapshot_instead(const attach_opts *o)
{
    fbx_error("attach",
              "process %ld runs libfbcount.so already (%s): not attached again; "
              "taking a snapshot instead",
              o->pid,
              fbs_attached((pid_t)o->pid) ? "attached" : "preloaded or loaded by its program");
    char pid[32];
    snprintf(pid, sizeof pid, "%ld", o->pid);
    char *argv[] = {"snapshot", pid, NULL};
    int rc = fbx_snapshot(2, argv);
    return rc == FBX_OK ? FBX_HAS_SHIM : rc;
}

static const char *const attach_answers[] = {
    [1] = "it is attached already",
    [2] = "it was attached and detached before; its shim "
          "stays loaded and inert, and cannot be attached again",
    [3] = "its shim records already",
    [4] = "the configuration was refused",
    [5] = "it could not keep the attach's state (memfd)"};

static int attach(attach_opts *o)
{
    char shim[PATH_MAX + 256];
    if (fbs_mapped_shim((pid_t)o->pid, shim, sizeof shim)) {
        int sig;
        char why[512];
        if (fbs_probe((pid_t)o->pid, &sig, why, sizeof why) == 0)
            return snapshot_instead(o);
        fbx_error("attach",
                  "process %ld runs libfbcount.so already (preloaded, loaded by its "
                  "program, or attached and detached before) and %s: not attached again",
                  o->pid, why);
        return FBX_HAS_SHIM;
    }
    if (fbs_find(shim, sizeof shim) != 0) {
        fbx_error("attach", "libfbcount.so not found (tried %s); set FBCOUNT_SHIM", shim);
        return FBX_SHIM;
    }
    fbx_run_dir d;
    char given[PATH_MAX];
    if (!o->output)
        snprintf(given, sizeof given, "fbcount-%ld", o->pid);
    int code = fbx_run_dir_make(&d, o->output ? o->output : given, false);
    if (code != 0)
        return code;
    static char vars[16000]; /* what the shim takes (FBC_ATTACH_VARS_MAX) */
    if (!variables(o, &d, vars, sizeof vars)) {
        fbx_error("attach", "the configuration is too long to pass on (16000 bytes at most)");
        fbx_run_dir_undo(&d);
        return FBX_USAGE;
    }
    char line[1024];
    code = inject(o, shim, vars, line, sizeof line);
    int r = -1;
    if (code == FBX_OK && sscanf(line, "fbcount-attach %d", &r) == 1 && r == 0) {
        fprintf(stderr,
                "fbcount: attach: process %ld is counted from now; dumps in %s "
                "(fbcount snapshot %ld, fbcount detach %ld)\n",
                o->pid, d.abs, o->pid, o->pid);
        return FBX_OK;
    }
    if (code == FBX_OK) {
        bool known = r > 0 && (size_t)r < sizeof attach_answers / sizeof *attach_answers;
        fbx_error("attach", "process %ld: %s; it was left as it was", o->pid,
                  known                                  ? attach_answers[r]
                  : !strncmp(line, "fbcount-dlopen", 14) ? line + 15
                                                         : line);
        code = FBX_INJECT;
    }
    if (fbs_attached((pid_t)o->pid)) { /* gdb was killed after the attach had run */
        fprintf(stderr, "fbcount: attach: process %ld is attached nonetheless; dumps in %s\n",
                o->pid, d.abs);
        return code;
    }
    if (!fbx_run_dir_has_dump(&d))
        fbx_run_dir_undo(&d);
    return code;
}

static int detach(attach_opts *o)
{
    char shim[PATH_MAX + 256];
    bool mapped = fbs_mapped_shim((pid_t)o->pid, shim, sizeof shim);
    if (!fbs_attached((pid_t)o->pid) || !mapped) {
        /* A process detached before keeps the shim loaded, inert: attach refuses it too. */
        if (mapped)
            fbx_error("detach",
                      "process %ld is not attached: it runs libfbcount.so (%s), "
                      "preloaded or attached and detached before; nothing was done",
                      o->pid, shim);
        else
            fbx_error("detach",
                      "process %ld is not attached (fbcount attach %ld starts a "
                      "census); nothing was done",
                      o->pid, o->pid);
        return FBX_NOT_ATTACHED;
    }
    char line[PATH_MAX + 64];
    int code = inject(o, shim, "", line, sizeof line);
    if (code != FBX_OK)
        return code;
    if (strncmp(line, "fbcount-detached ", 17)) {
        fbx_error("detach", "process %ld is not attached; nothing was done", o->pid);
        return FBX_NOT_ATTACHED;
    }
    const char *path = line + 17;
    if (!*path) {
        fprintf(stderr,
                "fbcount: detach: process %ld detached; it used no backend, so no "
                "census was written\n",
                o->pid);
        return FBX_OK;
    }
    fprintf(stderr, "fbcount: detach: process %ld detached; census: %s\n", o->pid, path);
    char *paths[] = {(char *)path};
    fbm_census *c = fbx_load("detach", paths, 1, &code);
    if (!c)
        return code;
    fbt_text(stdout, c, FBM_BY_OP, FBM_SORT_BYTES, 0);
    fbm_census_free(c);
    return FBX_OK;
}

static int main_of(bool is_detach, int argc, char **argv)
{
    attach_opts o = {.detach = is_detach, .timeout = 30};
    int code = parse(&o, argc, argv);
    if (code == FBX_OK)
        code = refusal(&o);
    if (code == FBX_OK)
        code = is_detach ? detach(&o) : attach(&o);
    return code < 0 ? FBX_OK : code;
}

int fbx_attach(int argc, char **argv)
{
    return main_of(false, argc, argv);
}

int fbx_detach(int argc, char **argv)
{
    return main_of(true, argc, argv);
}
