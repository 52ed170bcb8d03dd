/* config.c - the FBCOUNT_ environment (the variables of rules/contract.h). A bad value is
 * named in one warning and the default is used: the program under the shim must never fail
 * because of it. Variables are read as secure_getenv reads them, by the shim's own loop over
 * the environment (it runs before libc is ready, early.h): in a setuid or setgid program
 * (AT_SECURE) they are all ignored, so another user cannot make it write files as its owner.
 * An attach hands the same variables over as text (fbc_config_attach). */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "base.h"
#include "early.h"
#include "signals.h"

/* What a process with no FBCOUNT variable runs with, written by no code: load writes nothing
 * here then (early.h). */
// clang-format off
#define DEFAULTS                                                                           \
    {.enabled = -1, .depth = 64, .prefixes = {.n = 1, .name = {FBR_DEFAULT_OP_PREFIX}},    \
     .py_backend = {.n = 1, .name = {FBR_DEFAULT_PY_BACKEND}}, .output = FBR_DEFAULT_OUTPUT,    \
     .signal = SIGUSR1, .signal_wait_ms = 2000}
// clang-format on

fbc_config fbc_cfg = DEFAULTS;

/* An attach's variables ("NAME=VALUE" lines, each ended by a NUL), read instead of the
 * environment once set; a process that was not started with them has none of its own. */
static char attach_vars[16384];
/* Read by every process at load: in .data, whose pages the loader's reads have mapped, not
 * alone on a page of .bss (early.h). */
static size_t attach_len __attribute__((section(".data")));

void fbc_warn(const char *fmt, ...)
{
    char line[1024] = "fbcount: ";
    size_t p = strlen(line);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line + p, sizeof line - p - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t len = p + ((size_t)n < sizeof line - p - 2 ? (size_t)n : sizeof line - p - 2);
    line[len++] = '\n';
    /* One write, so lines from several threads or processes do not interleave. */
    if (write(2, line, len) < 0)
        return;
}

FBC_EARLY static const char *env_named(const char *name)
{
    if (!attach_len) /* secure_getenv's rule, by a look of the shim's own (early.h) */
        return getauxval(AT_SECURE) ? NULL : fbc_early_getenv(name);
    size_t nl = strlen(name);
    for (size_t i = 0; i < attach_len; i += strlen(attach_vars + i) + 1)
        if (!strncmp(attach_vars + i, name, nl) && attach_vars[i + nl] == '=')
            return attach_vars + i + nl + 1;
    return NULL;
}

/* A variable of the contract's (rules/contract.h), by its id. */
#define ENV(id) env_named(fbr_var_names[FBR_VAR_##id])
#define NAME(id) fbr_var_names[FBR_VAR_##id]

/* Every process under `fbcount run` parses its variables at load: the few its environment
 * sets (FBCOUNT_OUTPUT, FBCOUNT_RUN_LOG, FBCOUNT_QUIET) by early.h's rules, with loops of
 * the shim's own rather than the C library's string functions. */
FBC_EARLY static bool parse_bool(fbr_var id, bool def)
{
    const char *var = fbr_var_names[id];
    static const struct {
        const char *word;
        bool value;
    } words[] = {{"1", true},  {"yes", true}, {"on", true},   {"true", true},
                 {"0", false}, {"no", false}, {"off", false}, {"false", false}};
    const char *v = env_named(var);
    if (!v)
        return def;
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (fbc_early_same(v, words[i].word, true))
            return words[i].value;
    fbc_warn("%s=%.64s is not 0 or 1; using %d", var, v, def);
    return def;
}

FBC_EARLY static void parse_depth(void)
{
    const char *v = ENV(DEPTH);
    if (!v)
        return;
    char *end;
    errno = 0;
    long d = strtol(v, &end, 10);
    if (errno || end == v || *end || d < 2 || d > FBC_MAX_DEPTH) {
        fbc_warn("%s=%.64s is not a stack depth (2..%d); using 64", NAME(DEPTH), v, FBC_MAX_DEPTH);
        return;
    }
    fbc_cfg.depth = (int)d;
}

/* Seconds as a decimal number in [lo, hi], in milliseconds; def when unset or bad. */
FBC_EARLY static int parse_seconds(fbr_var id, double lo, double hi, int def, const char *what)
{
    const char *var = fbr_var_names[id], *v = env_named(var);
    if (!v)
        return def;
    char *end;
    errno = 0;
    double s = strtod(v, &end);
    if (errno || end == v || *end || !isfinite(s) || s < lo || s > hi) {
        fbc_warn("%s=%.64s is not %s (seconds, %g to %g); using %s", var, v, what, lo, hi,
                 def ? "the default" : "none");
        return def;
    }
    return (int)(s * 1000 + 0.5);
}

/* The names' text is moved into static storage: read at load, it must not hold a heap block
 * in a process that never uses it. A list too long for it keeps its heap copy. */
FBC_EARLY static void parse_names(fbr_var id, const char *def, fbr_names *out, char *keep,
                                  size_t cap)
{
    const char *var = fbr_var_names[id], *v = env_named(var);
    if (!v) {
        *out = (fbr_names){.n = 1, .name = {def}}; /* the default: nothing to parse or keep */
        return;
    }
    if (fbr_names_parse(v, def, out) != 0)
        fbc_warn("%s=%.64s is not a list of 1..%d names; using %s", var, v, FBR_MAX_NAMES, def);
    size_t used = 0;
    for (int i = 0; i < out->n; i++) {
        size_t end = (size_t)(out->name[i] - out->storage) + strlen(out->name[i]) + 1;
        used = end > used ? end : used;
    }
    if (!out->storage || used > cap)
        return;
    memcpy(keep, out->storage, used);
    for (int i = 0; i < out->n; i++)
        out->name[i] = keep + (out->name[i] - out->storage);
    free(out->storage);
    out->storage = NULL;
}

/* A copy of v into out, which has room for it. */
FBC_EARLY static void copy(char *out, const char *v)
{
    while ((*out++ = *v++))
        __asm__(""); /* a loop of the shim's own, not strcpy (early.h) */
}

/* A path template: FBR_OUTPUT_ESCAPES only, short enough to expand; or none. */
FBC_EARLY static void parse_output(void)
{
    const char *v = ENV(OUTPUT);
    if (!v)
        return;
    if (fbc_early_same(v, FBR_OUTPUT_NONE, false)) {
        fbc_cfg.output[0] = '\0';
        return;
    }
    bool ok = *v && fbc_early_strlen(v) < sizeof fbc_cfg.output - 64;
    for (const char *p = v; ok && *p; p++)
        if (*p == '%') {
            p++;
            ok = false;
            for (const char *k = FBR_OUTPUT_ESCAPES; *k && *p; k++)
                ok |= *k == *p;
        }
    if (!ok) {
        char escapes[3 * sizeof FBR_OUTPUT_ESCAPES], *e = escapes;
        for (const char *k = FBR_OUTPUT_ESCAPES; *k; k++) {
            *e++ = '%';
            *e++ = *k;
            *e++ = k[1] ? ' ' : '\0';
        }
        fbc_warn("%s=%.64s is not a path template (%s) of at most %zu bytes, or '%s'; using %s",
                 NAME(OUTPUT), v, escapes, sizeof fbc_cfg.output - 65, FBR_OUTPUT_NONE,
                 FBR_DEFAULT_OUTPUT);
        return;
    }
    copy(fbc_cfg.output, v);
}

FBC_EARLY static void parse_path(fbr_var id, char *out, size_t cap)
{
    const char *var = fbr_var_names[id], *v = env_named(var);
    if (!v || !*v)
        return;
    if (fbc_early_strlen(v) >= cap) {
        fbc_warn("%s is longer than %zu bytes; ignored", var, cap - 1);
        return;
    }
    copy(out, v);
}

FBC_EARLY static void parse_signal(void)
{
    const char *v = ENV(SIGNAL);
    int sig;
    if (!v)
        return;
    if (fbr_signal_parse(v, &sig) == 0) {
        fbc_cfg.signal = sig;
        return;
    }
    fbc_warn("FBCOUNT_SIGNAL=%.64s is not a census signal (USR1, USR2, WINCH, URG, RTMIN+N, a "
             "number of one of them, or none; signals that end or stop a program keep their "
             "meaning); using USR1",
             v);
}

FBC_EARLY static void parse_mode(void)
{
    const char *v = ENV(MODE);
    fbr_mode m;
    if (!v)
        return;
    if (fbr_mode_parse(v, &m)) {
        fbc_cfg.mode = (fbc_mode)m;
        return;
    }
    char names[96];
    fbc_warn("%s=%.64s is not %s; using count", NAME(MODE), v,
             fbr_mode_list(", ", " or ", names, sizeof names));
}

/* A command of another build than the shim's may hand it settings it reads otherwise: said
 * once. */
FBC_EARLY static void parse_contract(void)
{
    const char *v = ENV(CONTRACT);
    char *end;
    if (v && (strtol(v, &end, 10) != FBR_CONTRACT_VERSION || *end))
        fbc_warn("%s=%.16s: this libfbcount speaks version %d of fbcount's settings; the "
                 "fbcount that started it is of another build",
                 NAME(CONTRACT), v, FBR_CONTRACT_VERSION);
}

FBC_EARLY static void parse_clock(void)
{
    const char *v = ENV(CLOCK);
    if (!v || !strcmp(v, "auto"))
        return;
    if (!strcmp(v, "monotonic"))
        fbc_cfg.clock_monotonic = true;
    else
        fbc_warn("FBCOUNT_CLOCK=%.64s is not auto or monotonic; using auto", v);
}

static void no_reason(void *ctx, long line, const char *op)
{
    fbc_warn("FBCOUNT_ALLOW=%.200s line %ld: '%.64s' has no reason (write '%.64s  # why')",
             (const char *)ctx, line, op, op);
}

/* The grammar and the file checks are the command's too (rules/allow.h): a FIFO, a device or
 * a directory is refused without blocking, and a bad line allows nothing. warn: name entries
 * without a reason. NULL when nothing is allowed (said in a warning). */
static fbr_allow *read_allow(const char *path, bool warn)
{
    char err[600];
    bool unreadable;
    fbr_allow *a =
        fbr_allow_load(path, warn ? no_reason : NULL, (void *)path, err, sizeof err, &unreadable);
    if (!a)
        fbc_warn("FBCOUNT_ALLOW=%.500s; allowing nothing", err);
    return a;
}

static bool allow_bad; /* the file was refused at load: nothing is allowed, nothing read again */

/* At load the file is checked as every other variable is (its warnings now, once) and let go:
 * the list is read again at its first use, so a process that never uses it keeps nothing.
 * The path is made absolute, so a program that changes directory first still finds it. */
FBC_EARLY static void parse_allow(void)
{
    const char *v = ENV(ALLOW);
    if (!v)
        return;
    char *path = fbc_cfg.allow_path;
    size_t cap = sizeof fbc_cfg.allow_path;
    if (v[0] != '/' && getcwd(path, cap) && strlen(path) + strlen(v) + 2 <= cap) {
        strcat(path, "/");
        strcat(path, v);
    } else if (strlen(v) < cap) {
        strcpy(path, v);
    } else {
        fbc_warn("FBCOUNT_ALLOW is longer than %zu bytes; allowing nothing", cap - 1);
        allow_bad = true;
        return;
    }
    fbr_allow *a = read_allow(path, true);
    allow_bad = !a;
    fbr_allow_free(a);
}

/* Whether any FBCOUNT variable is set: most processes have none, and one look through the
 * environment then stands for the twenty the variables below would take. */
static void parse_all(bool preloaded);

FBC_EARLY static bool any_set(void)
{
    extern char **environ;
    static const char prefix[] FBC_EARLY_CONST = "FBCOUNT";
    for (char **e = environ; e && *e; e++)
        if (fbc_early_prefix(*e, prefix))
            return true;
    return false;
}

FBC_EARLY bool fbc_config_declares(void)
{
    return fbc_cfg.any && (fbc_cfg.exits[0] || fbc_cfg.backend_files[0]);
}

FBC_EARLY void fbc_config_load(bool preloaded)
{
    if (any_set())
        parse_all(preloaded);
}

FBC_EARLY static void parse_all(bool preloaded)
{
    fbc_cfg.any = true;
    fbc_cfg.enabled = parse_bool(FBR_VAR_ENABLED, preloaded);
    fbc_cfg.all_processes = parse_bool(FBR_VAR_ALL_PROCESSES, false);
    parse_depth();
    static char prefixes[1024], py_backend[1024];
    parse_names(FBR_VAR_OP_PREFIX, FBR_DEFAULT_OP_PREFIX, &fbc_cfg.prefixes, prefixes,
                sizeof prefixes);
    parse_names(FBR_VAR_PY_BACKEND, FBR_DEFAULT_PY_BACKEND, &fbc_cfg.py_backend, py_backend,
                sizeof py_backend);
    fbc_cfg.prefixes_set = ENV(OP_PREFIX) != NULL;
    fbc_cfg.py_backend_set = ENV(PY_BACKEND) != NULL;
    parse_path(FBR_VAR_BACKEND, fbc_cfg.backend_files, sizeof fbc_cfg.backend_files);
    parse_path(FBR_VAR_EXIT, fbc_cfg.exits, sizeof fbc_cfg.exits);
    parse_path(FBR_VAR_TORCH_ADAPTER, fbc_cfg.torch_adapter, sizeof fbc_cfg.torch_adapter);
    parse_output();
    parse_path(FBR_VAR_METRICS, fbc_cfg.metrics, sizeof fbc_cfg.metrics);
    parse_path(FBR_VAR_RUN_LOG, fbc_cfg.run_log, sizeof fbc_cfg.run_log);
    parse_signal();
    fbc_cfg.interval_ms = parse_seconds(FBR_VAR_INTERVAL, 0.01, 86400, 0, "an interval");
    fbc_cfg.signal_wait_ms = parse_seconds(FBR_VAR_SIGNAL_WAIT, 0, 60, 2000, "a wait");
    parse_mode();
    fbc_cfg.quiet = parse_bool(FBR_VAR_QUIET, false);
    parse_clock();
    parse_allow();
    parse_contract();
}

int fbc_config_attach(const char *vars)
{
    size_t n = strlen(vars);
    if (n + 2 > sizeof attach_vars)
        return -1;
    memcpy(attach_vars, vars, n + 1);
    for (size_t i = 0; i < n; i++)
        if (attach_vars[i] == '\n')
            attach_vars[i] = '\0';
    attach_len = n + 1;
    fbc_cfg = (fbc_config)DEFAULTS;
    allow_bad = false;
    parse_all(true);
    return 0;
}

static fbr_allow *allow; /* NULL allows nothing */
static pthread_once_t allow_once = PTHREAD_ONCE_INIT;

static void unknown(void *ctx, long line, const char *name, const char *const *close, size_t n)
{
    char hint[300] = "";
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(hint);
        snprintf(hint + len, sizeof hint - len, "%s%s",
                 i ? ", " : "; closest: ", fbr_op_short(close[i], &fbc_cfg.prefixes));
    }
    fbc_warn("FBCOUNT_ALLOW=%.200s line %ld: '%.64s' names no op of this process%s",
             (const char *)ctx, line, name, hint);
}

/* Read again, quietly: its warnings were given at load. Each entry that names no op the
 * process's modules export is warned about now, once. */
static void load_allow(void)
{
    const char *path = fbc_cfg.allow_path;
    if (!(allow = read_allow(path, false)))
        return;
    fbr_allow_set_prefixes(allow, &fbc_cfg.prefixes);
    const char **known;
    size_t n = fbc_opnames(&fbc_cfg.prefixes, &known);
    if (n) {
        /* The name of a stack without an op frame is a name an allow file may use too. */
        const char **all = realloc(known, (n + 1) * sizeof *all);
        if (all) {
            known = all;
            known[n++] = strdup(FBR_UNKNOWN);
            if (!known[n - 1])
                n--;
        }
        fbr_allow_unknown(allow, known, n, unknown, (void *)path);
    }
    fbc_opnames_free(known, n);
}

bool fbc_allowed(const char *op)
{
    if (!fbc_cfg.allow_path[0] || allow_bad)
        return false;
    pthread_once(&allow_once, load_allow);
    return fbr_allow_has(allow, op);
}
