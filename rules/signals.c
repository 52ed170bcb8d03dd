/* signals.c - see signals.h. */
#include "signals.h"

#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct {
    const char *name; /* "SIGHUP": a static string for fbr_signal_name */
    int sig;
    int census; /* usable as the census signal */
} table[] = {
    {"SIGHUP", SIGHUP, 0},       {"SIGINT", SIGINT, 0},       {"SIGQUIT", SIGQUIT, 0},
    {"SIGILL", SIGILL, 0},       {"SIGTRAP", SIGTRAP, 0},     {"SIGABRT", SIGABRT, 0},
    {"SIGBUS", SIGBUS, 0},       {"SIGFPE", SIGFPE, 0},       {"SIGKILL", SIGKILL, 0},
    {"SIGUSR1", SIGUSR1, 1},     {"SIGSEGV", SIGSEGV, 0},     {"SIGUSR2", SIGUSR2, 1},
    {"SIGPIPE", SIGPIPE, 0},     {"SIGALRM", SIGALRM, 0},     {"SIGTERM", SIGTERM, 0},
    {"SIGSTKFLT", SIGSTKFLT, 0}, {"SIGCHLD", SIGCHLD, 0},     {"SIGCONT", SIGCONT, 0},
    {"SIGSTOP", SIGSTOP, 0},     {"SIGTSTP", SIGTSTP, 0},     {"SIGTTIN", SIGTTIN, 0},
    {"SIGTTOU", SIGTTOU, 0},     {"SIGURG", SIGURG, 1},       {"SIGXCPU", SIGXCPU, 0},
    {"SIGXFSZ", SIGXFSZ, 0},     {"SIGVTALRM", SIGVTALRM, 0}, {"SIGPROF", SIGPROF, 0},
    {"SIGWINCH", SIGWINCH, 1},   {"SIGIO", SIGIO, 0},         {"SIGPWR", SIGPWR, 0},
    {"SIGSYS", SIGSYS, 0},
};
#define NTABLE (sizeof table / sizeof *table)

static int parse_number(const char *s, long *out)
{
    char *end;
    if (!*s || *s == '-' || *s == '+')
        return -1;
    long v = strtol(s, &end, 10);
    if (*end || v < 0 || v > 1000)
        return -1;
    *out = v;
    return 0;
}

int fbr_signal_parse(const char *value, int *sig)
{
    if (!value)
        return -1;
    if (!strcasecmp(value, "none")) {
        *sig = 0;
        return 0;
    }
    const char *name = strncasecmp(value, "SIG", 3) ? value : value + 3;
    for (size_t i = 0; i < NTABLE; i++)
        if (!strcasecmp(name, table[i].name + 3)) {
            if (!table[i].census)
                return -1;
            *sig = table[i].sig;
            return 0;
        }
    long n;
    if (!strncasecmp(name, "RTMIN", 5) || !strncasecmp(name, "RTMAX", 5)) {
        bool min = !strncasecmp(name, "RTMIN", 5);
        const char *rest = name + 5;
        n = 0;
        if (*rest && ((min && *rest != '+') || (!min && *rest != '-')))
            return -1;
        if (*rest && parse_number(rest + 1, &n) != 0)
            return -1;
        n = min ? SIGRTMIN + n : SIGRTMAX - n;
    } else if (parse_number(name, &n) != 0) {
        return -1;
    }
    if (n >= SIGRTMIN && n <= SIGRTMAX) {
        *sig = (int)n;
        return 0;
    }
    for (size_t i = 0; i < NTABLE; i++)
        if (table[i].sig == n && table[i].census) {
            *sig = (int)n;
            return 0;
        }
    return -1;
}

const char *fbr_signal_name(int sig)
{
    for (size_t i = 0; i < NTABLE; i++)
        if (table[i].sig == sig)
            return table[i].name;
    /* Real-time signals: glibc reserves the first few, so SIGRTMIN is a call, not a constant. */
    static const char *const rt[] = {"SIGRTMIN",    "SIGRTMIN+1",  "SIGRTMIN+2",  "SIGRTMIN+3",
                                     "SIGRTMIN+4",  "SIGRTMIN+5",  "SIGRTMIN+6",  "SIGRTMIN+7",
                                     "SIGRTMIN+8",  "SIGRTMIN+9",  "SIGRTMIN+10", "SIGRTMIN+11",
                                     "SIGRTMIN+12", "SIGRTMIN+13", "SIGRTMIN+14", "SIGRTMIN+15"};
    if (sig >= SIGRTMIN && sig - SIGRTMIN < 16)
        return rt[sig - SIGRTMIN];
    return "SIG?";
}
