/* demo.c - see demo.h. */
#include "demo.h"

#include <stdio.h>
#include <stdlib.h>

int demo_long(const char *prog, const char *flag, const char *s, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "%s: %s expects an integer in [%ld, %ld], got '%s'\n", prog, flag, lo, hi,
                s);
        return -1;
    }
    *out = v;
    return 0;
}

int demo_number(const char *prog, const char *flag, const char *s, double lo, double hi,
                const char *what, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || !(v > lo && v < hi)) {
        fprintf(stderr, "%s: %s expects %s, got '%s'\n", prog, flag, what, s);
        return -1;
    }
    *out = v;
    return 0;
}

vkt_ctx *demo_ctx(const char *prog, const char *device)
{
    vkt_ctx *ctx = NULL;
    if (vkt_ctx_create(device, &ctx) != VKT_OK) {
        fprintf(stderr, "%s: %s\n", prog, vkt_last_error());
        return NULL;
    }
    return ctx;
}
