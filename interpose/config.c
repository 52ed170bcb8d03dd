/* config.c - the FBCOUNT_ environment. A bad value is named in one warning and the default is
 * used: the program under the shim must never fail because of it. */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "shim.h"

#define DEFAULT_OUTPUT "fbcount.%e.%p.json"

fbc_config fbc_cfg = {.enabled = false, .depth = 64, .output = DEFAULT_OUTPUT, .signal = SIGUSR1};
static char *default_prefix = "vkt_";

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

const char *fbc_mode_name(fbc_mode m)
{
    return m == FBC_MODE_WARN ? "warn" : m == FBC_MODE_ABORT ? "abort" : "count";
}

static bool parse_bool(const char *var, bool def)
{
    const char *v = getenv(var);
    if (!v)
        return def;
    if (!strcmp(v, "1") || !strcasecmp(v, "yes") || !strcasecmp(v, "on") || !strcasecmp(v, "true"))
        return true;
    if (!strcmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "off") || !strcasecmp(v, "false"))
        return false;
    fbc_warn("%s=%.64s is not 0 or 1; using %d", var, v, def);
    return def;
}

static void parse_depth(void)
{
    const char *v = getenv("FBCOUNT_DEPTH");
    if (!v)
        return;
    char *end;
    errno = 0;
    long d = strtol(v, &end, 10);
    if (errno || end == v || *end || d < 2 || d > FBC_MAX_DEPTH) {
        fbc_warn("FBCOUNT_DEPTH=%.64s is not a stack depth (2..%d); using 64", v, FBC_MAX_DEPTH);
        return;
    }
    fbc_cfg.depth = (int)d;
}

static void parse_prefix(void)
{
    const char *v = getenv("FBCOUNT_OP_PREFIX");
    fbc_cfg.prefix[0] = default_prefix;
    fbc_cfg.nprefix = 1;
    if (!v)
        return;
    char *copy = strdup(v);
    if (!copy)
        return;
    int n = 0;
    bool bad = false;
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*tok))
            tok++;
        size_t len = strlen(tok);
        while (len && isspace((unsigned char)tok[len - 1]))
            tok[--len] = '\0';
        if (!len)
            continue;
        if (n == FBC_MAX_PREFIXES) {
            bad = true;
            break;
        }
        fbc_cfg.prefix[n++] = tok;
    }
    if (bad || n == 0) {
        fbc_warn("FBCOUNT_OP_PREFIX=%.64s is not a list of 1..%d prefixes; using vkt_", v,
                 FBC_MAX_PREFIXES);
        fbc_cfg.prefix[0] = default_prefix;
        fbc_cfg.nprefix = 1;
        free(copy);
        return;
    }
    fbc_cfg.nprefix = n;
}

static void parse_output(void)
{
    const char *v = getenv("FBCOUNT_OUTPUT");
    if (!v)
        return;
    if (!strcmp(v, "none")) {
        fbc_cfg.output[0] = '\0';
        return;
    }
    bool ok = *v && strlen(v) < sizeof fbc_cfg.output - 64;
    for (const char *p = v; ok && *p; p++)
        if (*p == '%') {
            p++;
            ok = *p && strchr("phen%", *p);
        }
    if (!ok) {
        fbc_warn("FBCOUNT_OUTPUT=%.64s is not a path template (%%p %%h %%e %%n %%%%) or 'none'; "
                 "using %s", v, DEFAULT_OUTPUT);
        return;
    }
    strcpy(fbc_cfg.output, v);
}

static const struct { const char *name; int sig; } signames[] = {
    {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"HUP", SIGHUP}, {"INT", SIGINT}, {"QUIT", SIGQUIT},
    {"TERM", SIGTERM}, {"WINCH", SIGWINCH}, {"URG", SIGURG}, {"PROF", SIGPROF}, {"ALRM", SIGALRM},
    {"TTIN", SIGTTIN}, {"TTOU", SIGTTOU}, {"PWR", SIGPWR}, {"CONT", SIGCONT},
};

static void parse_signal(void)
{
    const char *v = getenv("FBCOUNT_SIGNAL");
    if (!v)
        return;
    if (!strcasecmp(v, "none")) {
        fbc_cfg.signal = 0;
        return;
    }
    const char *name = strncasecmp(v, "SIG", 3) ? v : v + 3;
    for (size_t i = 0; i < sizeof signames / sizeof *signames; i++)
        if (!strcasecmp(name, signames[i].name)) {
            fbc_cfg.signal = signames[i].sig;
            return;
        }
    char *end;
    long n = strtol(v, &end, 10);
    if (end != v && !*end && n > 0 && n <= SIGRTMAX && n != SIGKILL && n != SIGSTOP && n != SIGSEGV &&
        n != SIGBUS && n != SIGFPE && n != SIGILL && n != SIGABRT && n != SIGCHLD) {
        fbc_cfg.signal = (int)n;
        return;
    }
    fbc_warn("FBCOUNT_SIGNAL=%.64s is not a usable signal (USR1, USR2, a number, none); using USR1",
             v);
}

static void parse_mode(void)
{
    const char *v = getenv("FBCOUNT_MODE");
    if (!v)
        return;
    if (!strcmp(v, "count"))
        fbc_cfg.mode = FBC_MODE_COUNT;
    else if (!strcmp(v, "warn"))
        fbc_cfg.mode = FBC_MODE_WARN;
    else if (!strcmp(v, "abort"))
        fbc_cfg.mode = FBC_MODE_ABORT;
    else
        fbc_warn("FBCOUNT_MODE=%.64s is not count, warn or abort; using count", v);
}

/* One op per line, "op  # why"; blank lines and lines starting with '#' are comments. */
static void parse_allow(void)
{
    const char *v = getenv("FBCOUNT_ALLOW");
    if (!v)
        return;
    FILE *f = fopen(v, "re");
    if (!f) {
        fbc_warn("FBCOUNT_ALLOW=%.200s cannot be read (%s); allowing nothing", v, strerror(errno));
        return;
    }
    char line[1024];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        char *op = line;
        while (isspace((unsigned char)*op))
            op++;
        if (!*op || op == hash)
            continue;
        char *end = op;
        while (*end && !isspace((unsigned char)*end) && *end != '#')
            end++;
        bool reason = false;
        if (hash)
            for (char *r = hash + 1; *r; r++)
                reason |= !isspace((unsigned char)*r);
        *end = '\0';
        if (!reason)
            fbc_warn("FBCOUNT_ALLOW=%.200s line %d: '%.64s' has no reason (write 'op  # why')", v,
                     lineno, op);
        char **grown = realloc(fbc_cfg.allow, (fbc_cfg.nallow + 1) * sizeof *grown);
        char *copy = strdup(op);
        if (!grown || !copy) {
            free(copy);
            if (grown)
                fbc_cfg.allow = grown;
            break;
        }
        fbc_cfg.allow = grown;
        fbc_cfg.allow[fbc_cfg.nallow++] = copy;
    }
    fclose(f);
}

void fbc_config_load(bool preloaded)
{
    fbc_cfg.enabled = parse_bool("FBCOUNT", preloaded);
    parse_depth();
    parse_prefix();
    parse_output();
    parse_signal();
    parse_mode();
    fbc_cfg.quiet = parse_bool("FBCOUNT_QUIET", false);
    parse_allow();
}

bool fbc_allowed(const char *op)
{
    for (size_t i = 0; i < fbc_cfg.nallow; i++)
        if (!strcmp(fbc_cfg.allow[i], op))
            return true;
    return false;
}

bool fbc_has_prefix(const char *name)
{
    if (!name)
        return false;
    for (int i = 0; i < fbc_cfg.nprefix; i++)
        if (!strncmp(name, fbc_cfg.prefix[i], strlen(fbc_cfg.prefix[i])))
            return true;
    return false;
}
