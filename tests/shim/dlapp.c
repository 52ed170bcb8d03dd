/* dlapp.c - loads a backend with dlopen(RTLD_LOCAL) after start-up and falls back through it:
 * the preloaded shim must still see and forward every host_result call. An optional third
 * argument waits that many milliseconds first (the census dates the start, not the first use). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) static int site_dl(int (*op)(size_t), int n)
{
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += op(10) != 103; /* fakedl returns nbytes % 7 + 100 */
    return bad;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: shim-dlapp LIB N [MS]\n");
        return 2;
    }
    if (argc > 3) {
        long ms = atol(argv[3]);
        struct timespec ts = {ms / 1000, ms % 1000 * 1000000};
        while (nanosleep(&ts, &ts))
            ;
    }
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "shim-dlapp: %s\n", dlerror());
        return 2;
    }
    int (*op)(size_t);
    int (*calls)(void);
    *(void **)&op = dlsym(h, "vkt_dlop");
    *(void **)&calls = dlsym(h, "fake_exit_calls");
    int n = atoi(argv[2]);
    int bad = site_dl(op, n);
    printf("dl calls %d bad %d\n", calls(), bad);
    return bad || calls() != n;
}
