/* test_capture.c - the capture's frame-pointer fast path against libunwind on the same
 * stacks: equal where it answers, declining where a frame keeps no frame pointer. Built from
 * capture.c and modmap.c directly: the methods are internal to the shim. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "chain.h"
#include "nofp.h"
#include <dlfcn.h>

#include "record.h"

fbc_process fbc_proc; /* modmap.c names the main program by it */
const char *fbc_process_exe(void)
{
    return fbc_proc.exe;
}

#define MAX 40

typedef struct {
    fbc_unwinder how;
    int max, n;
    uintptr_t ra; /* the return address into the innermost test frame: where methods align */
    uintptr_t f[FBC_MAX_DEPTH];
} probe;

/* One call site for every method, so the frames above it are the same for all. */
__attribute__((noinline)) static int capture_one(void *arg)
{
    probe *p = arg;
    p->ra = (uintptr_t)__builtin_return_address(0);
    p->n = fbc_capture_with(p->how, p->f, p->max);
    return 0;
}

__attribute__((noinline)) static int descend(int depth, int (*leaf)(void *), void *arg)
{
    int r = depth > 0 ? descend(depth - 1, leaf, arg) : leaf(arg);
    return r + depth * 0; /* not a tail call: each level keeps its frame */
}

typedef struct {
    int fp_depth;
    probe *p;
} mixed;

static int then_fp(void *arg)
{
    mixed *m = arg;
    return descend(m->fp_depth, capture_one, m->p);
}

static int call_nofp(void *arg)
{
    return nofp_plain(3, then_fp, arg) + nofp_call(6, then_fp, arg) * 0;
}

/* The methods' own leading frames differ; from the test's innermost frame outward, the
 * frames both hold must be equal, and there must be some. */
static bool same_stack(const probe *a, const probe *b)
{
    int i = 0, j = 0;
    while (i < a->n && a->f[i] != a->ra)
        i++;
    while (j < b->n && b->f[j] != b->ra)
        j++;
    int m = a->n - i < b->n - j ? a->n - i : b->n - j;
    return a->ra == b->ra && m > 0 && !memcmp(a->f + i, b->f + j, (size_t)m * sizeof *a->f);
}

static probe run(fbc_unwinder how, int depth, int max)
{
    probe p = {how, max, 0, 0, {0}};
    descend(depth, capture_one, &p);
    return p;
}

Test(capture, step_and_backtrace_agree)
{
    probe a = run(FBC_UNWIND_STEP, 40, MAX), b = run(FBC_UNWIND_BACKTRACE, 40, MAX);
    cr_assert_eq(a.n, MAX);
    cr_assert_eq(b.n, MAX);
    cr_assert(same_stack(&a, &b), "libunwind's two walks differ");
}

Test(capture, fp_walk_equals_libunwind)
{
    for (int depth = 8; depth <= 60; depth += 13) {
        int max = depth - 4;
        probe first = run(FBC_UNWIND_FP, depth, max), step = run(FBC_UNWIND_STEP, depth, max + 3),
              fp = run(FBC_UNWIND_FP, depth, max);
        cr_assert_eq(step.n, max + 3);
        /* The first fast walk may decline (nothing learnt yet); the one after libunwind's
         * walk answers, and with libunwind's frames. (Here the capture's own frames are
         * counted, and libunwind's walk has two more of them: it is asked for more.) */
        cr_assert_eq(fp.n, max, "depth %d: the fast path declined a frame-pointer chain", depth);
        cr_assert(same_stack(&fp, &step), "depth %d: frames differ", depth);
        if (first.n >= 0)
            cr_assert(same_stack(&first, &step));
    }
}

Test(capture, frames_without_frame_pointer_are_not_walked)
{
    for (int round = 0; round < 3; round++) {
        probe p[3] = {{FBC_UNWIND_STEP, 24, 0, 0, {0}},
                      {FBC_UNWIND_FP, 24, 0, 0, {0}},
                      {FBC_UNWIND_AUTO, 24, 0, 0, {0}}};
        /* Standard frames outside the nofp chain too, so a walk that skipped it would
         * still fill its depth, with the wrong frames. */
        for (int k = 0; k < 3; k++)
            descend(30, call_nofp, &(mixed){4, &p[k]});
        cr_assert_gt(p[0].n, 14);
        /* Whatever the fast path returns must be libunwind's; the automatic capture always is. */
        if (p[1].n >= 0)
            cr_assert(same_stack(&p[1], &p[0]), "round %d: walked a frame without a frame pointer",
                      round);
        cr_assert_gt(p[2].n, 14);
        cr_assert(same_stack(&p[2], &p[0]), "round %d: the automatic capture differs", round);
    }
}

static void *thread_main(void *arg)
{
    (void)arg;
    for (int i = 0; i < 200; i++) {
        probe a = run(FBC_UNWIND_AUTO, 20 + i % 7, 16),
              b = run(FBC_UNWIND_BACKTRACE, 20 + i % 7, 16);
        if (a.n != 16 || b.n != 16 || !same_stack(&a, &b))
            return (void *)1;
    }
    return NULL;
}

Test(capture, threads_learn_and_walk_alike)
{
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        cr_assert_eq(pthread_create(&t[i], NULL, thread_main, NULL), 0);
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(t[i], &r);
        cr_assert_null(r, "thread %d: the automatic capture differs from unw_backtrace", i);
    }
}

Test(capture, a_module_unloaded_sends_back_to_libunwind)
{
    run(FBC_UNWIND_STEP, 30, 23);
    cr_assert_eq(run(FBC_UNWIND_FP, 30, 20).n, 20);
    void *h = dlopen(SHIM_FAKEDL, RTLD_NOW | RTLD_LOCAL);
    cr_assert_not_null(h, "%s", dlerror());
    fbc_modmap_refresh();
    dlclose(h);
    fbc_modmap_refresh(); /* sees the unload: the verdicts are old news */
    cr_assert_eq(run(FBC_UNWIND_FP, 30, 20).n, -1, "verdicts survived a module unload");
}

typedef struct {
    fbc_unwinder how;
    int max, n;
    uintptr_t f[FBC_MAX_DEPTH];
} take;

__attribute__((noinline)) static int take_one(void *arg)
{
    take *t = arg;
    t->n = fbc_capture_with(t->how, t->f, t->max);
    return 0;
}

typedef int (*chain_fn)(int, int (*)(void *), void *);

__attribute__((noinline)) static take through(chain_fn chain, fbc_unwinder how, int max)
{
    take t = {how, max, 0, {0}};
    chain(5, take_one, &t);
    return t;
}

static void same_as_libunwind(chain_fn chain, int max, const char *what)
{
    take got = through(chain, FBC_UNWIND_AUTO, max), want = through(chain, FBC_UNWIND_STEP, max);
    cr_assert_geq(want.n, max < 8 ? max : 8, "%s: libunwind's walk found %d frames", what, want.n);
    cr_assert_eq(got.n, want.n, "%s: %d frames, libunwind %d", what, got.n, want.n);
    cr_assert_arr_eq(got.f, want.f, (size_t)want.n * sizeof *want.f, "%s: frames differ", what);
}

/* Chains a and b reach the leaf through the same frames at the same places and differ
 * further out: a memo checked at its first frame alone would give b's call a's stack. */
Test(capture, a_stack_walked_before_is_reused_only_where_it_is_the_same)
{
    fbc_modmap_refresh(); /* this test's module stands for the shim's: its frames are left out */
    const char pattern[] = "aaaabbbbababababaaaaaabbaaaaaaaabbbbbbbbbabbbbbbbbbbb";
    unsigned long before = fbc_capture_reused();
    for (size_t i = 0; i + 1 < sizeof pattern; i++) {
        char what[64];
        snprintf(what, sizeof what, "call %zu (%c)", i, pattern[i]);
        same_as_libunwind(pattern[i] == 'a' ? chain_a : chain_b, 24, what);
    }
    cr_assert_geq(fbc_capture_reused() - before, 20, "only %lu of the calls reused a walk",
                  fbc_capture_reused() - before);
    /* A walk cut at 6 frames serves no call that asks for more. */
    for (int i = 0; i < 4; i++)
        same_as_libunwind(chain_a, 6, "cut at 6");
    same_as_libunwind(chain_a, 24, "after the cut ones");
}

/* A key's destructor that captures after the memo's own has run (glibc runs them in no set
 * order, and again while values are set): the capture makes a new memo, never uses the freed
 * one (an AddressSanitizer build of this test finds that). */
static pthread_key_t late_key;

static void capture_through_nofp(void)
{
    probe p = {FBC_UNWIND_AUTO, 24, 0, 0, {0}};
    descend(10, call_nofp, &(mixed){4, &p});
}

static void late(void *arg)
{
    int *rounds = arg;
    capture_through_nofp();
    if (++*rounds < 3)
        pthread_setspecific(late_key, rounds);
}

static void *late_thread(void *arg)
{
    pthread_setspecific(late_key, arg);
    for (int i = 0; i < 5; i++)
        capture_through_nofp();
    return NULL;
}

Test(capture, a_capture_in_a_late_destructor_makes_a_new_memo)
{
    cr_assert_eq(pthread_key_create(&late_key, late), 0);
    int rounds = 0;
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, late_thread, &rounds), 0);
    pthread_join(t, NULL);
    cr_assert_eq(rounds, 3, "the late destructor ran %d times", rounds);
}
