/* clock.c - CLOCK_MONOTONIC, and the clock that times a fallback when the backend does not say
 * when it began.
 *
 * Such an event needs two reads, at the entry to host_result and at its end. Two reads of
 * CLOCK_MONOTONIC cost 52-55 ns on a KVM guest whose clock source is kvm-clock (measured on
 * the 2-core test VM, with the loop that fbcount-bench-overhead runs), more than the 40 ns
 * an event may spend on its time. Two reads of the CPU's time-stamp counter cost 22-23 ns
 * there (rdtscp: 42-44 ns, so plain rdtsc). The counter is used when the CPU says it is
 * invariant (same rate in every power state, on every core), and its rate is measured
 * against CLOCK_MONOTONIC over the process's own life, from the shim's first use to the
 * first timed event at least 1 ms later; events before that read CLOCK_MONOTONIC. The same
 * counter, read at load, dates the process's start without the clock (early.h).
 *
 * The kernel may refuse the counter as the system clock (tsc=unstable on this VM's command
 * line), a judgement about one monotonic clock across all CPUs and suspend; a fallback's
 * time is two reads by one thread microseconds apart. What matters there is the rate, and,
 * for a thread moved to another CPU between the reads, that the CPUs' counters agree: the
 * kernel checks and aligns them at boot on bare metal, and a hypervisor gives all vCPUs one
 * offset (the two vCPUs here agreed). A reading that went back counts as 0 ns. Plain rdtsc
 * may also be reordered by a few ns against the code around it, which is far below an
 * event's microseconds. FBCOUNT_CLOCK=monotonic keeps to CLOCK_MONOTONIC, and the dump says
 * which clock ran. */
#include <time.h>

#include "base.h"

#if defined(__x86_64__) /* (the conversion needs unsigned __int128) */
#include <cpuid.h>
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

static uint64_t fbc_clock_mult; /* ns per tick, 32.32 fixed point; 0: monotonic */
static bool
    usable; /* an invariant counter, not refused by config (relaxed: threads race to calibrate) */
static bool paired;           /* tsc0 and mono0 were read (at the first use) */
static uint64_t tsc0, mono0;  /* a matched pair read at the first use */
#define CALIBRATE_NS 1000000u /* the shortest window the rate is measured over */

uint64_t fbc_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The raw counter (CLOCK_MONOTONIC ns on a machine without one). */
static inline uint64_t fbc_clock_ticks(void)
{
#if HAVE_TSC
    return __rdtsc();
#else
    return fbc_now_ns();
#endif
}

/* A counter reading and the CLOCK_MONOTONIC time it was taken at: the counter read between
 * two clock reads, the tightest of four tries, none accepted wider than 2 us (a preemption
 * in between). An error of 1 us at each end of the 1 ms window is 0.2% in the rate. */
static bool read_pair(uint64_t *ticks, uint64_t *ns)
{
    uint64_t best = 2000;
    bool got = false;
    for (int i = 0; i < 4; i++) {
        uint64_t a = fbc_now_ns(), t = fbc_clock_ticks(), b = fbc_now_ns();
        if (b >= a && b - a < best) {
            best = b - a;
            *ticks = t;
            *ns = a + (b - a) / 2;
            got = true;
        }
    }
    return got;
}

static bool invariant_counter(void)
{
#if HAVE_TSC
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return false;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1;
#else
    return false;
#endif
}

/* dt ticks in dn ns: a rate of 50 MHz..20 GHz. */
static bool plausible(uint64_t dt, uint64_t dn)
{
    return dt >= dn / 20 && dt <= dn * 20;
}

void fbc_clock_init(bool monotonic_only)
{
    fbc_clock_mult = 0;
    bool got = HAVE_TSC && read_pair(&tsc0, &mono0);
    __atomic_store_n(&paired, got, __ATOMIC_RELEASE);
    usable = got && !monotonic_only && invariant_counter();
}

/* The start's reading is turned into time by a rate of its own, measured whether or not
 * events use the counter: a counter without the invariant flag (common in guests) still
 * runs at one rate in practice, and an estimate of the start is better than none. */
uint64_t fbc_clock_ns_at(uint64_t ticks)
{
#if HAVE_TSC
    uint64_t t0, n0, t1, n1;
    if (__atomic_load_n(&paired, __ATOMIC_ACQUIRE))
        t0 = tsc0, n0 = mono0;
    else if (!read_pair(&t0, &n0))
        return fbc_now_ns();
    do /* a dump within 1 ms of the first use (or with none) waits out the window */
        if (!read_pair(&t1, &n1))
            return n0;
    while (n1 - n0 < CALIBRATE_NS);
    uint64_t dt = t1 - t0, dn = n1 - n0;
    if (t1 <= t0 || ticks > t0 || !plausible(dt, dn))
        return n0; /* the counter went back, or ran at no plausible rate: the first use */
    uint64_t back = (uint64_t)(((unsigned __int128)(t0 - ticks) * dn) / dt);
    return back < n0 ? n0 - back : 1;
#else
    (void)ticks;
    return fbc_now_ns();
#endif
}

/* Measures the rate: the pair read now against the pair read at start. A counter that went
 * back (reset under the process), a pair that could not be read, or a rate outside
 * 50 MHz..20 GHz ends the attempt for good, and the monotonic clock stays. Threads that race
 * here compute nearly the same rate; any wins. */
__attribute__((noinline)) static uint64_t calibrate(void)
{
#if HAVE_TSC
    uint64_t ticks, ns;
    if (!read_pair(&ticks, &ns) || ticks <= tsc0 || ns <= mono0) {
        __atomic_store_n(&usable, false, __ATOMIC_RELAXED);
        return 0;
    }
    uint64_t dt = ticks - tsc0, dn = ns - mono0;
    if (!plausible(dt, dn)) {
        __atomic_store_n(&usable, false, __ATOMIC_RELAXED);
        return 0;
    }
    uint64_t mult = (uint64_t)(((unsigned __int128)dn << 32) / dt);
    __atomic_store_n(&fbc_clock_mult, mult, __ATOMIC_RELAXED);
    return mult;
#else
    return 0;
#endif
}

/* The event that finds the window long enough calibrates first and then starts on the
 * counter, so its own time does not include the calibration. */
fbc_stamp fbc_clock_start(void)
{
    uint64_t mult = __atomic_load_n(&fbc_clock_mult, __ATOMIC_RELAXED);
    if (mult)
        return (fbc_stamp){fbc_clock_ticks(), mult};
    uint64_t now = fbc_now_ns();
    if (__atomic_load_n(&usable, __ATOMIC_RELAXED) && now - mono0 >= CALIBRATE_NS &&
        (mult = calibrate()))
        return (fbc_stamp){fbc_clock_ticks(), mult};
    return (fbc_stamp){now, 0};
}

uint64_t fbc_clock_since(fbc_stamp s)
{
#if HAVE_TSC
    if (s.mult) {
        uint64_t t = fbc_clock_ticks();
        return t > s.t ? (uint64_t)(((unsigned __int128)(t - s.t) * s.mult) >> 32) : 0;
    }
#endif
    uint64_t t = fbc_now_ns();
    return t > s.t ? t - s.t : 0;
}

const char *fbc_clock_name(void)
{
    return __atomic_load_n(&fbc_clock_mult, __ATOMIC_RELAXED) ? "tsc" : "monotonic";
}
