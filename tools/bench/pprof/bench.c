/* fbcount-bench-pprof: the time to load a census and to write it as a pprof profile (the
 * writer `fbcount report --format pprof` calls), and the sizes of the dump and the profile.
 *   fbcount-bench-pprof DUMP|DIR OUT.pb.gz
 * Prints one JSON object: stacks, dump bytes, load and write seconds (wall and CPU), profile
 * bytes, and the peak resident memory of the whole run. */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "merge.h"
#include "pprof.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* CPU seconds of this process: on a shared machine wall time counts the others' load too. */
static double cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: fbcount-bench-pprof DUMP|DIR OUT.pb.gz\n");
        return 2;
    }
    char err[512];
    fbm_census *c = fbm_census_new();
    double t0 = now(), c0 = cpu();
    fbd_status st = c ? fbm_census_load(c, argv + 1, 1, err, sizeof err) : FBD_EREAD;
    double t1 = now(), c1 = cpu();
    if (st != FBD_OK) {
        fprintf(stderr, "fbcount-bench-pprof: %s\n", c ? err : "out of memory");
        fbm_census_free(c);
        return 3;
    }
    size_t stacks = 0;
    for (size_t i = 0; i < fbm_census_ndumps(c); i++) {
        size_t n;
        fbd_stacks(fbm_census_dump(c, i), &n);
        stacks += n;
    }
    fbpp_status ps = fbpp_write(c, argv[2], err, sizeof err);
    double t2 = now(), c2 = cpu();
    fbm_census_free(c);
    if (ps != FBPP_OK) {
        fprintf(stderr, "fbcount-bench-pprof: %s\n", err);
        return 3;
    }
    struct stat in, out;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    if (stat(argv[1], &in) != 0 || stat(argv[2], &out) != 0) {
        perror("fbcount-bench-pprof: stat");
        return 3;
    }
    printf("{\"stacks\": %zu, \"dump_bytes\": %lld, \"load_s\": %.3f, \"load_cpu_s\": %.3f, "
           "\"write_s\": %.3f, \"write_cpu_s\": %.3f, \"pprof_bytes\": %lld, "
           "\"max_rss_kib\": %ld}\n",
           stacks, (long long)in.st_size, t1 - t0, c1 - c0, t2 - t1, c2 - c1,
           (long long)out.st_size, ru.ru_maxrss);
    return 0;
}
