/* stress.c - many threads falling back, in and out of scopes, while another thread takes
 * process dumps: exact totals at the end. Two waves of threads, so the second takes over the
 * census shards the first left behind; the stack every worker shares must come out of the
 * dump as one stack holding all their counts. Meanwhile a thread sends the census signal
 * (snapshots on the dumper thread, with checkpoints when FBCOUNT_INTERVAL is set) and a thread
 * opens and closes process-wide scopes. A plain program (no Criterion) so that it runs under
 * ThreadSanitizer, whose runtime and Criterion's workers do not mix.
 * Needs FBCOUNT=1; exits 0 when every count is exact. */
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fakevkt.h"
#include "fbcount.h"

#define THREADS 6
#define ROUNDS 2000
#define WAVES 2

static fake_tensor t = {0, 1, {4}};
static int done;

static void some(void *arg)
{
    for (int i = 0; i < *(int *)arg; i++)
        vkt_dot(&t, 4);
    vkt_transpose(&t, 4);
}

static void *worker(void *arg)
{
    uint64_t *bad = arg;
    for (int r = 0; r < ROUNDS; r++) {
        int n = 1 + r % 3;
        fbcount_census *c = fbcount_count(some, &n);
        if (fbcount_census_total(c) != (uint64_t)n || fbcount_census_host_total(c) != 1)
            (*bad)++;
        if (r % 500 == 0 && fbcount_census_op_count(c, "vkt_dot") != (uint64_t)n)
            (*bad)++;
        fbcount_census_free(c);
        vkt_add(&t, 2); /* outside any scope: the process census only */
    }
    return NULL;
}

static void *dumper(void *arg)
{
    const char *path = arg;
    while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE))
        if (fbcount_dump(path) != 0)
            return (void *)1;
    return NULL;
}

static void *signaler(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
        kill(getpid(), SIGUSR1);
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    }
    return NULL;
}

/* Process-wide scopes, open and closed while the workers run: each must be consistent. */
static void *scoper(void *arg)
{
    uint64_t *bad = arg;
    while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
        if (fbcount_scope_begin_all() != 0) {
            (*bad)++;
            break;
        }
        nanosleep(&(struct timespec){0, 2 * 1000 * 1000}, NULL);
        fbcount_census *c = fbcount_scope_end_all();
        uint64_t ops =
            fbcount_census_op_count(c, "vkt_dot") + fbcount_census_op_count(c, "vkt_add");
        if (!c || ops != fbcount_census_total(c))
            (*bad)++;
        fbcount_census_free(c);
    }
    return NULL;
}

int main(void)
{
    char dir[] = "/tmp/fbcount-stress-XXXXXX", path[64];
    if (!mkdtemp(dir))
        return 1;
    snprintf(path, sizeof path, "%s/s.json", dir);
    pthread_t th[THREADS], d, sig, sc;
    uint64_t bad[THREADS] = {0}, scope_bad = 0;
    pthread_create(&d, NULL, dumper, path);
    pthread_create(&sig, NULL, signaler, NULL);
    pthread_create(&sc, NULL, scoper, &scope_bad);
    uint64_t total_bad = 0;
    for (int wave = 0; wave < WAVES; wave++) {
        for (int i = 0; i < THREADS; i++)
            pthread_create(&th[i], NULL, worker, &bad[i]);
        for (int i = 0; i < THREADS; i++)
            pthread_join(th[i], NULL);
    }
    for (int i = 0; i < THREADS; i++)
        total_bad += bad[i];
    __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
    void *dr;
    pthread_join(d, &dr);
    pthread_join(sig, NULL);
    pthread_join(sc, NULL);
    total_bad += scope_bad;
    uint64_t expect = 0;
    for (int r = 0; r < ROUNDS; r++)
        expect += 1 + r % 3 + 1; /* the scope's dots and the add outside it */
    expect *= THREADS * WAVES;
    int rc = fbcount_dump(path);
    FILE *f = fopen(path, "r");
    char *text = calloc(1, 1 << 22);
    size_t len = f && text ? fread(text, 1, (1 << 22) - 1, f) : 0;
    if (f)
        fclose(f);
    char want[64], add_stack[128];
    snprintf(want, sizeof want, "\"fallbacks\":%llu,", (unsigned long long)expect);
    /* Every worker's vkt_add has the same frames; the dump lists that stack once, whole. */
    snprintf(add_stack, sizeof add_stack,
             "\"kind\":\"fallback\",\"op\":\"vkt_add\",\"site\":\"worker\",\"count\":%d,",
             THREADS * WAVES * ROUNDS);
    int add_stacks = 0;
    for (const char *p = text; len && (p = strstr(p, "\"op\":\"vkt_add\",\"site\"")); p++)
        add_stacks++;
    int ok = len && strstr(text, want) && strstr(text, add_stack) && add_stacks == 1 &&
             !total_bad && !dr && rc == 0 && fake_calls() == expect;
    if (!ok)
        fprintf(stderr,
                "stress: expected %s and one stack %s in the dump (found %d vkt_add stacks); "
                "scope errors %llu; backend saw %llu\n",
                want, add_stack, add_stacks, (unsigned long long)total_bad,
                (unsigned long long)fake_calls());
    free(text);
    unlink(path);
    rmdir(dir);
    return ok ? 0 : 1;
}
