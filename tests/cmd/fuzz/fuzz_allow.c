/* fuzz_allow.c - libFuzzer target: any bytes through the allow-file parser the shim and the
 * command share (rules/allow.c) must give a list or one clean line, never a crash, leak or
 * hang; and a list it gives must answer for every op it holds. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "allow.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void count_warning(void *ctx, long line, const char *op)
{
    (void)line;
    (*(size_t *)ctx) += strlen(op) > 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    size_t warnings = 0;
    fbr_allow *a =
        fbr_allow_parse((const char *)data, size, count_warning, &warnings, err, sizeof err);
    if (!a) {
        /* A refusal is one line naming the line number (or memory). */
        if (!strchr(err, '\n') && (strncmp(err, "line ", 5) == 0 || strstr(err, "memory")))
            return 0;
        __builtin_trap();
    }
    /* Every op the parser accepted is found again, with a reason that is one line. */
    char op[256];
    const char *s = (const char *)data, *end = s + size;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
        size_t i = 0;
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
        size_t o = 0;
        while (i < n && s[i] != ' ' && s[i] != '\t' && s[i] != '#' && s[i] != '\r' &&
               o < sizeof op - 1)
            op[o++] = s[i++];
        op[o] = '\0';
        if (o && op[0] != '#' && !fbr_allow_has(a, op))
            __builtin_trap();
        if (o && strchr(fbr_allow_reason(a, op), '\n'))
            __builtin_trap();
        s += n + 1;
    }
    fbr_allow_free(a);
    return 0;
}
