// app.cc - calls the declared exits of odd.h and checks every result against its own
// arithmetic; prints what it did (the output must not change under the shim) and exits 1
// on any difference. The lines marked SITE-* are where the census must say the calls came from.
//   app shapes N        every odd shape N times
//   app ints N          odd_ints N times
//   app dl LIB N        dlopen LIB (RTLD_LOCAL) later, then its caller_run(N) through dlsym
//   app threads LIB N   8 threads call odd_ints N times each while LIB is dlopen-ed and
//                       closed again and again (each load rescans the modules)
//   app sleep US N      odd_sleep(US) N times
//   app coro N          odd_ints N times from a coroutine whose stack ends at an unmapped page
//   app loader N        what the loader reads from its caller's return address: dlopen of
//                       $ORIGIN/libcaller.so (this program's folder), then caller_run(N), and
//                       dlsym(RTLD_NEXT) against RTLD_DEFAULT for a symbol of the shim
#include <dlfcn.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include <pthread.h>
#include <setjmp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "odd.h"

static int bad;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::fprintf(stderr, "app: " __VA_ARGS__);                                             \
            std::fputc('\n', stderr);                                                              \
            bad = 1;                                                                               \
        }                                                                                          \
    } while (0)

__attribute__((noinline)) static int jump(int value)
{
    jmp_buf env;
    int back = setjmp(env);
    if (!back)
        odd_jump(&env, value); // SITE-JUMP
    return back;
}

static void shapes(long n)
{
    for (long i = 0; i < n; i++) {
        double m = odd_mixed(1, 2, 3, 4, 5, 6, 7 + i, 8, 1, 2, 3, 4, 5, 6, 7, 8 + i); // SITE-MIXED
        double want = (double)(1 + 4 + 9 + 16 + 25 + 36 + 7 * (7 + i) + 64) + 0.5 + 0.5 + 0.375 +
                      8 + 20 + 48 + 112 + 32 * (8 + i);
        CHECK(m == want, "odd_mixed: %g, not %g", m, want);
        odd_pair_t p = odd_pair(i, 100); // SITE-PAIR
        CHECK(p.a == 3 * i && p.b == 93, "odd_pair: %ld %ld", p.a, p.b);
        odd_dpair_t d = odd_dpair(2.0 * i, 8.0); // SITE-DPAIR
        CHECK(d.x == 3.0 * i && d.y == 2.0, "odd_dpair: %g %g", d.x, d.y);
        odd_big_t big = {{1, 2, 3, 4, 5, i}};
        odd_big_t r = odd_big(big, 3, 0.5); // SITE-BIG
        CHECK(r.v[0] == 1 && r.v[3] == 6 && r.v[5] == (long)(3.0 * i * 0.5), "odd_big: %ld %ld %ld",
              r.v[0], r.v[3], r.v[5]);
        double s = odd_sum(3, 1, 0.5, 2, 0.25, (int)i, 0.125); // SITE-SUM
        CHECK(s == 3.875 + (double)i, "odd_sum: %g", s);
        long many =
            odd_many(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, // SITE-MANY
                     17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, i);
        long want_many = 0;
        for (long k = 0; k < 35; k++)
            want_many += (k + 1) * (k + 1);
        want_many += i * 36;
        CHECK(many == want_many, "odd_many: %ld, not %ld", many, want_many);
        odd_huge_t huge;
        long want_huge = i;
        for (long k = 0; k < 64; k++) {
            huge.v[k] = k * 3 - i;
            want_huge += huge.v[k] * (k + 1);
        }
        long h = odd_huge(huge, i); // SITE-HUGE
        CHECK(h == want_huge, "odd_huge: %ld, not %ld", h, want_huge);
        int back = jump(7 + (int)i);
        CHECK(back == 7 + i, "odd_jump: setjmp returned %d", back);
        try {
            odd_throw((int)i); // SITE-THROW
            CHECK(false, "odd_throw returned");
        } catch (const std::runtime_error &e) {
            char want_msg[64];
            std::snprintf(want_msg, sizeof want_msg, "odd_throw %ld", i);
            CHECK(!std::strcmp(e.what(), want_msg), "odd_throw: '%s'", e.what());
        }
    }
    std::printf("shapes %ld: calls %ld\n", n, odd_calls());
}

static long ints(long n)
{
    long s = 0;
    for (long i = 0; i < n; i++)
        s += odd_ints(i); // SITE-INTS
    return s;
}

static ucontext_t coro_main, coro_ctx;
static long coro_n, coro_sum;

static void coro(void)
{
    for (long i = 0; i < coro_n; i++)
        coro_sum += odd_ints(i); // SITE-CORO
}

/* odd_ints from a coroutine whose stack is the top of a mapping with an unmapped page above:
 * nothing may read past it. */
static long coro_run(long n)
{
    long page = sysconf(_SC_PAGESIZE), size = 16 * page;
    char *m = (char *)mmap(nullptr, (size_t)(size + page), PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED || mprotect(m + size, (size_t)page, PROT_NONE)) {
        std::perror("app: mmap");
        std::exit(2);
    }
    coro_n = n;
    getcontext(&coro_ctx);
    coro_ctx.uc_stack.ss_sp = m;
    coro_ctx.uc_stack.ss_size = (size_t)size;
    coro_ctx.uc_link = &coro_main;
    makecontext(&coro_ctx, coro, 0);
    swapcontext(&coro_main, &coro_ctx);
    munmap(m, (size_t)(size + page));
    return coro_sum;
}

typedef long (*run_fn)(long);

static void *open_caller(const char *lib, run_fn *run)
{
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        std::fprintf(stderr, "app: %s\n", dlerror());
        std::exit(2);
    }
    *run = (run_fn)dlsym(h, "caller_run");
    return h;
}

static long per_thread;

static void *worker(void *)
{
    long s = ints(per_thread);
    CHECK(s == per_thread * per_thread, "a thread's sum: %ld", s);
    return nullptr;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    long n = argc > 2 ? std::atol(argv[argc - 1]) : 0;
    if (!std::strcmp(mode, "shapes") && argc == 3) {
        shapes(n);
    } else if (!std::strcmp(mode, "ints") && argc == 3) {
        long s = ints(n);
        CHECK(s == n * n, "sum %ld", s);
        std::printf("ints %ld: %ld, calls %ld\n", n, s, odd_calls());
    } else if (!std::strcmp(mode, "sleep") && argc == 4) {
        long us = std::atol(argv[2]);
        for (long i = 0; i < n; i++)
            odd_sleep(us); // SITE-SLEEP
        std::printf("sleep %ld x %ld us: calls %ld\n", n, us, odd_calls());
    } else if (!std::strcmp(mode, "coro") && argc == 3) {
        long s = coro_run(n);
        CHECK(s == n * n, "coro: sum %ld", s);
        std::printf("coro %ld: %ld, calls %ld\n", n, s, odd_calls());
    } else if (!std::strcmp(mode, "dl") && argc == 4) {
        run_fn run;
        void *h = open_caller(argv[2], &run);
        long s = run ? run(n) : -1;
        CHECK(s == n * n, "caller_run: %ld", s);
        std::printf("dl %ld: %ld, calls %ld\n", n, s, odd_calls());
        dlclose(h);
    } else if (!std::strcmp(mode, "threads") && argc == 4) {
        per_thread = n;
        pthread_t t[8];
        for (auto &th : t)
            pthread_create(&th, nullptr, worker, nullptr);
        for (int k = 0; k < 200; k++) {
            run_fn run;
            void *h = open_caller(argv[2], &run);
            CHECK(run && run(3) == 9, "caller_run in the loop");
            dlclose(h);
        }
        for (auto &th : t)
            pthread_join(th, nullptr);
        std::printf("threads 8 x %ld: calls %ld\n", n, odd_calls());
    } else if (!std::strcmp(mode, "loader") && argc == 3) {
        run_fn run;
        void *h = open_caller("$ORIGIN/libcaller.so", &run);
        long s = run ? run(n) : -1;
        CHECK(s == n * n, "caller_run: %ld", s);
        /* From this program, RTLD_NEXT searches the modules after it: a preloaded shim too. */
        bool same = dlsym(RTLD_NEXT, "fbcount_dump") == dlsym(RTLD_DEFAULT, "fbcount_dump");
        CHECK(same, "dlsym(RTLD_NEXT) did not search from this program");
        std::printf("loader %ld: %ld, RTLD_NEXT %s\n", n, s, same ? "from here" : "elsewhere");
        dlclose(h);
    } else {
        std::fprintf(stderr, "usage: app shapes|ints|coro|loader N, app dl|threads LIB N, "
                             "app sleep US N\n");
        return 2;
    }
    return bad;
}
