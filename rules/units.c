/* units.c - see units.h. */
#include "units.h"

#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *fbr_bytes(uint64_t n, char *buf, size_t len)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (n < 1024) {
        snprintf(buf, len, "%" PRIu64 " B", n);
        return buf;
    }
    double v = (double)n;
    int u = 0;
    while (v >= 1024.0 && u < 6) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, len, v < 10.0 ? "%.1f %s" : "%.0f %s", v, unit[u]);
    return buf;
}

int fbr_parse_count(const char *s, uint64_t *out)
{
    if (!s || !isdigit((unsigned char)*s))
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

typedef struct {
    const char *suffix;
    double mult;
} unit;

/* A non-negative number followed by one of the suffixes (blanks between allowed): its value
 * times the suffix's multiplier in *v and the suffix's index in *which; -1 otherwise. */
static int parse_scaled(const char *s, const unit *units, size_t n, bool nocase, double *v,
                        size_t *which)
{
    if (!s || !(isdigit((unsigned char)*s) || *s == '.'))
        return -1;
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (errno || end == s || !isfinite(x) || x < 0)
        return -1;
    while (*end == ' ')
        end++;
    for (size_t i = 0; i < n; i++)
        if (!(nocase ? strcasecmp : strcmp)(end, units[i].suffix)) {
            *v = x * units[i].mult;
            *which = i;
            return 0;
        }
    return -1;
}

int fbr_parse_bytes(const char *s, uint64_t *out)
{
    static const unit units[] = {
        {"", 1},
        {"B", 1},
        {"K", 1024.0},
        {"KiB", 1024.0},
        {"KB", 1e3},
        {"M", 1048576.0},
        {"MiB", 1048576.0},
        {"MB", 1e6},
        {"G", 1073741824.0},
        {"GiB", 1073741824.0},
        {"GB", 1e9},
        {"T", 1099511627776.0},
        {"TiB", 1099511627776.0},
        {"TB", 1e12},
    };
    double b;
    size_t i;
    if (parse_scaled(s, units, sizeof units / sizeof units[0], true, &b, &i) != 0)
        return -1;
    /* 2^64 itself does not fit; anything at or above it is an error, not a wrap. */
    if (b >= 18446744073709551616.0)
        return -1;
    if (i < 2 && b != floor(b))
        return -1; /* a fraction of a byte */
    *out = (uint64_t)b;
    return 0;
}

/* Three significant digits without an exponent: 1.23, 12.3, 123. */
static void three(char *buf, size_t len, double x, const char *unit)
{
    snprintf(buf, len, x < 9.995 ? "%.2f %s" : x < 99.95 ? "%.1f %s" : "%.0f %s", x, unit);
}

const char *fbr_duration(uint64_t ns, char *buf, size_t len)
{
    double v = (double)ns;
    if (ns < 1000)
        snprintf(buf, len, "%" PRIu64 " ns", ns);
    else if (v < 999.5e3)
        three(buf, len, v / 1e3, "\u00b5s");
    else if (v < 999.5e6)
        three(buf, len, v / 1e6, "ms");
    else if (v < 60e9)
        three(buf, len, v / 1e9, "s");
    else if (v < 3600e9)
        three(buf, len, v / 60e9, "min");
    else
        three(buf, len, v / 3600e9, "h");
    return buf;
}

int fbr_parse_duration(const char *s, uint64_t *ns)
{
    static const unit units[] = {
        {"", 1e9},   {"s", 1e9},    {"ns", 1},   {"us", 1e3},   {"\u00b5s", 1e3},
        {"ms", 1e6}, {"min", 60e9}, {"m", 60e9}, {"h", 3600e9},
    };
    double t;
    size_t i;
    if (parse_scaled(s, units, sizeof units / sizeof units[0], false, &t, &i) != 0 || t >= 9.2e18)
        return -1;
    *ns = (uint64_t)(t + 0.5);
    return 0;
}

size_t fbr_dtype_size(const char *dtype)
{
    static const struct {
        const char *name;
        size_t size;
    } named[] = {{"bool", 1},          {"Bool", 1}, {"Byte", 1},     {"Char", 1},
                 {"Short", 2},         {"Half", 2}, {"BFloat16", 2}, {"Int", 4},
                 {"Float", 4},         {"Long", 8}, {"Double", 8},   {"ComplexFloat", 8},
                 {"ComplexDouble", 16}};
    if (!dtype)
        return 0;
    for (size_t i = 0; i < sizeof named / sizeof *named; i++)
        if (!strcmp(dtype, named[i].name))
            return named[i].size;
    size_t n = strlen(dtype), d = n;
    while (d && dtype[d - 1] >= '0' && dtype[d - 1] <= '9')
        d--;
    if (d == n || d == 0 || n - d > 3)
        return 0;
    unsigned long bits = strtoul(dtype + d, NULL, 10);
    return bits && bits % 8 == 0 ? bits / 8 : 0;
}
