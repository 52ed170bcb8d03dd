/* fuzz_backend.c - libFuzzer target: any bytes through the backend descriptor parser the shim
 * and the command share (rules/backend.c: FBCOUNT_BACKEND's files, `run --backend`, a dump's
 * descriptor) must give a row or one clean line, never a crash, leak or hang; a row it gives
 * must come back the same through its own descriptor text (fbr_backend_format), and the same
 * bytes as a declared exit's spec (FBCOUNT_EXIT) must be taken or refused as cleanly. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A refusal is one line saying what is wrong ("line 3: ...", "no exit"). */
static void clean_refusal(const char *err)
{
    if (!err[0] || strchr(err, '\n') || strlen(err) >= 319)
        __builtin_trap();
}

static void round_trip(const fbr_backend *b)
{
    static char text[FBR_DESCRIPTOR_MAX], again[FBR_DESCRIPTOR_MAX];
    char err[320];
    if (!b->name[0] || b->nexits < 1 || b->nexits > FBR_EXITS_MAX)
        __builtin_trap();
    int n = fbr_backend_format(b, text, sizeof text);
    if (n < 0 || (size_t)n >= sizeof text)
        __builtin_trap(); /* a row the parser took fits its own format */
    fbr_backend back;
    if (fbr_backend_parse(text, (size_t)n, b->source, &back, err, sizeof err) != 0)
        __builtin_trap();
    int m = fbr_backend_format(&back, again, sizeof again);
    if (m != n || memcmp(text, again, (size_t)n))
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[320];
    fbr_backend b;
    if (fbr_backend_parse((const char *)data, size, FBR_FROM_FILE, &b, err, sizeof err) == 0)
        round_trip(&b);
    else
        clean_refusal(err);
    char *spec = malloc(size + 1);
    if (!spec)
        return 0;
    memcpy(spec, data, size);
    spec[size] = '\0';
    if (fbr_backend_declare(spec, &b, err, sizeof err) == 0)
        round_trip(&b);
    else
        clean_refusal(err);
    free(spec);
    return 0;
}
