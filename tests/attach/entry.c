/* attach-entry: the shim's attach and detach entries called in-process, as gdb calls them for
 * fbcount attach: the backend (tests/shim/fakevkt.c) is loaded first, RTLD_LOCAL, the shim
 * after it. Checks: nothing is counted before the attach, exactly the calls after it are, a
 * second attach is refused, detach writes the census (reason detach) and puts the calls back
 * (the backend still receives every one, the census no more), a detached shim cannot be
 * attached again and a second detach answers NULL, and nothing is written at exit.
 * usage: attach-entry SHIM FAKEVKT DIR */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakevkt.h"

static int failures;

static void check(int ok, const char *what)
{
    if (!ok) {
        printf("FAIL: %s\n", what);
        failures++;
    }
}

static void *sym(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p) {
        printf("FAIL: %s: %s\n", name, dlerror());
        exit(1);
    }
    return p;
}

/* The number after "fallbacks": in the dump's total. */
static long fallbacks(const char *path)
{
    FILE *f = fopen(path, "r");
    static char text[1 << 20];
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    text[n] = '\0';
    const char *t = strstr(text, "\"total\":{\"fallbacks\":");
    return t ? atol(t + 21) : -1;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: attach-entry SHIM FAKEVKT DIR\n");
        return 2;
    }
    void *be = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
    if (!be) {
        printf("FAIL: %s\n", dlerror());
        return 1;
    }
    int (*dot)(fake_tensor *, size_t) = (int (*)(fake_tensor *, size_t))sym(be, "vkt_dot");
    uint64_t (*calls)(void) = (uint64_t(*)(void))sym(be, "fake_calls");
    fake_tensor t = {0, 2, {16, 32}};
    for (int i = 0; i < 5; i++)
        dot(&t, 2048);
    void *shim = dlopen(argv[1], RTLD_NOW);
    if (!shim) {
        printf("FAIL: %s\n", dlerror());
        return 1;
    }
    int (*attach)(const char *) = (int (*)(const char *))sym(shim, "fbcount_attach");
    const char *(*detach)(void) = (const char *(*)(void))sym(shim, "fbcount_detach");
    check(detach() == NULL, "detach before any attach answers NULL");
    char vars[4200];
    snprintf(vars, sizeof vars, "FBCOUNT_OUTPUT=%s/entry.%%p.%%n.json\nFBCOUNT_QUIET=1\n", argv[3]);
    check(attach(NULL) == 4, "attach(NULL) is refused (FBCOUNT_ATTACH_BAD)");
    check(attach(vars) == 0, "attach");
    check(attach(vars) == 1, "a second attach is refused (FBCOUNT_ATTACH_ALREADY)");
    for (int i = 0; i < 7; i++)
        dot(&t, 2048);
    const char *path = detach();
    check(path && *path, "detach writes a census");
    char saved[4200] = "";
    if (path)
        snprintf(saved, sizeof saved, "%s", path);
    check(fallbacks(saved) == 7, "the census holds the 7 calls after the attach, not the 5 before");
    check(detach() == NULL, "a second detach answers NULL");
    check(attach(vars) == 2, "a detached shim is not attached again (FBCOUNT_ATTACH_DETACHED)");
    for (int i = 0; i < 4; i++)
        dot(&t, 2048);
    check(calls() == 16, "the backend received every call, before, during and after");
    check(fallbacks(saved) == 7, "nothing is counted after the detach");
    printf("%s\n", saved);
    return failures ? 1 : 0;
}
