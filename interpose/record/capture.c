/* capture.c - return addresses of the current stack, outermost frames of this library
 * skipped.
 *
 * Fast path: a frame-pointer walk (a few ns a frame against libunwind's ~25), taken only
 * where every frame stepped through is known to keep a standard frame: rbp = CFA - 16, the
 * caller's rbp saved there and the return address above it. That is learnt per return
 * address from libunwind itself (its CFI-driven unw_step walk, compared register by
 * register), never assumed; reads stay inside the thread's stack and move strictly outward,
 * so a wrong guess cannot fault or loop. Any frame not known good sends the capture to
 * libunwind: unw_backtrace with its per-thread cache where the chain holds a frame known not
 * to keep a frame pointer, the full unw_step walk (which teaches the verdicts) where it
 * holds one never seen. libunwind is loaded at the first capture (libunwind.c); where it cannot
 * be, frame pointers are followed without verdicts, as on a cramped stack.
 *
 * Memo: a thread that calls from the very stack it called from last time (a decode loop's
 * scheduler call, every token) is given that stack again instead of a walk, once each return
 * address of the last walk is found again at the place it was read from, starting at the
 * first frame outside this library, which the frame-pointer walk reaches through this
 * library's own frames. After milliseconds of device work libunwind's cache and the
 * processor's are cold, and that walk was most of what recording such a call cost. Each
 * frame's CFA follows from its pc and the stack pointer below it, so the same return
 * addresses at the same places, from the same first place, are the same walk. */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record.h"

/* Verdicts per return address: pc << 1 | good, inserted once, never changed (until a module
 * is unloaded). Lock-free: a reader sees a slot empty or complete. */
#define VERDICTS 8192
#define CRAMPED (64 * 1024) /* stack left below which libunwind is not called */
static uintptr_t verdict[VERDICTS];
static unsigned nverdicts;
static unsigned generation; /* the module map's, when the verdicts were last valid */

enum { V_UNKNOWN, V_GOOD, V_BAD };
static __thread uintptr_t stack_lo __attribute__((tls_model("initial-exec")));
static __thread uintptr_t stack_hi __attribute__((tls_model("initial-exec")));

/* A thread's last walk from an anchor (the first frame outside this library: where its
 * return address lay, and the address). Slots are taken by the unw_step walk, which knows
 * each caller's stack pointer, only where an anchor repeats: a stack that differs the time
 * after costs that walk over unw_backtrace's, so after a miss it is tried again only after
 * twice as many calls from the anchor each time (at most 64). */
typedef struct {
    unsigned generation;
    uintptr_t anchor, pc0;
    int n;
    bool whole, slots;  /* the walk ended at the stack's end (not at its max); slots known */
    volatile bool busy; /* a capture on this thread is using it */
    unsigned misses, skip;
    uintptr_t ip[FBC_MAX_DEPTH], slot[FBC_MAX_DEPTH];
} memo;
static __thread memo *mine __attribute__((tls_model("initial-exec")));
static pthread_key_t memo_key;
static pthread_once_t memo_once = PTHREAD_ONCE_INIT;
static unsigned long reused; /* calls given a memo (relaxed): fbc_capture_reused */

static int slow_walk(uintptr_t *frames, int max, uintptr_t lo, uintptr_t hi, memo *m);

void fbc_capture_init(void)
{
    const fbc_unw *u = fbc_unwind();
    if (u)
        u->set_caching_policy(*u->local_as, UNW_CACHE_PER_THREAD);
}

static size_t slot_of(uintptr_t pc)
{
    return (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 40) & (VERDICTS - 1);
}

static int lookup(uintptr_t pc)
{
    for (size_t i = slot_of(pc), k = 0; k < VERDICTS; i = (i + 1) & (VERDICTS - 1), k++) {
        uintptr_t v = __atomic_load_n(&verdict[i], __ATOMIC_ACQUIRE);
        if (v == 0)
            return V_UNKNOWN;
        if (v >> 1 == pc)
            return v & 1 ? V_GOOD : V_BAD;
    }
    return V_UNKNOWN;
}

static void learn(uintptr_t pc, bool good)
{
    if (pc == 0 || pc >> 62 || __atomic_load_n(&nverdicts, __ATOMIC_RELAXED) >= VERDICTS / 2)
        return;
    uintptr_t v = pc << 1 | good;
    for (size_t i = slot_of(pc), k = 0; k < VERDICTS; i = (i + 1) & (VERDICTS - 1), k++) {
        uintptr_t cur = __atomic_load_n(&verdict[i], __ATOMIC_ACQUIRE);
        if (cur == 0 && __atomic_compare_exchange_n(&verdict[i], &cur, v, false, __ATOMIC_ACQ_REL,
                                                    __ATOMIC_ACQUIRE)) {
            __atomic_add_fetch(&nverdicts, 1, __ATOMIC_RELAXED);
            return;
        }
        if (cur >> 1 == pc)
            return; /* another thread learnt it first (the same verdict: it is the code's) */
    }
}

/* A module went away: its return addresses prove nothing now. */
static void forget(void)
{
    for (size_t i = 0; i < VERDICTS; i++)
        __atomic_store_n(&verdict[i], 0, __ATOMIC_RELEASE);
    __atomic_store_n(&nverdicts, 0, __ATOMIC_RELAXED);
    const fbc_unw *u = fbc_unwind();
    if (u)
        u->flush_cache(*u->local_as, 0, 0);
}

extern void *__libc_stack_end; /* the loader's: where the main thread's frames begin */

/* The main thread's stack by its start and its limit: glibc's pthread_getattr_np finds it by
 * reading /proc/self/maps, 4 ms in a process that has loaded torch's hundred libraries. Every
 * frame lies below __libc_stack_end, and the walks read only outward from a live frame. */
static bool main_stack(void)
{
    if (syscall(SYS_gettid) != getpid() || !__libc_stack_end)
        return false;
    struct rlimit rl;
    uintptr_t size = getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
                         ? (uintptr_t)rl.rlim_cur
                         : (uintptr_t)1 << 30;
    stack_hi = (uintptr_t)__libc_stack_end;
    stack_lo = stack_hi > size ? stack_hi - size : 1;
    return true;
}

/* The calling thread's stack, once; [1, 1) when it cannot be known (no fast path then). */
static bool stack_bounds(void)
{
    if (__builtin_expect(stack_hi != 0, 1))
        return stack_hi > 1;
    stack_lo = stack_hi = 1;
    if (main_stack())
        return true;
    pthread_attr_t at;
    if (pthread_getattr_np(pthread_self(), &at) != 0)
        return false;
    void *addr;
    size_t size;
    if (pthread_attr_getstack(&at, &addr, &size) == 0 && size) {
        stack_lo = (uintptr_t)addr;
        stack_hi = (uintptr_t)addr + size;
    }
    pthread_attr_destroy(&at);
    return stack_hi > 1;
}

bool fbc_record_on_stack(uintptr_t lo, uintptr_t hi)
{
    return stack_bounds() && lo >= stack_lo && lo <= hi && hi <= stack_hi;
}

/* The full libunwind walk; learns a verdict for every frame it steps through, and where m is
 * given, fills it: each frame's return address was read from just below its caller's stack
 * pointer (checked: a signal frame's is not, and such a walk is kept by no memo). */
static int slow_walk(uintptr_t *frames, int max, uintptr_t lo, uintptr_t hi, memo *m)
{
    const fbc_unw *u = fbc_unwind();
    if (!u || !fbc_unwpipe_ready())
        return 0;
    unw_context_t ctx;
    unw_cursor_t cur;
    if (u->getcontext(&ctx) < 0 || u->init_local(&cur, &ctx) < 0)
        return 0;
    int n = 0;
    bool inside = true, whole = false, slots = m != NULL;
    unw_word_t ip, rbp, slot = 0;
    if (u->get_reg(&cur, UNW_REG_IP, &ip) < 0 || u->get_reg(&cur, UNW_X86_64_RBP, &rbp) < 0)
        return 0;
    while (ip != 0) {
        if (!inside || ip < lo || ip >= hi) {
            inside = false;
            if (m && n < FBC_MAX_DEPTH)
                m->slot[n] = (uintptr_t)slot;
            slots = slots && slot != 0;
            frames[n++] = (uintptr_t)ip;
            if (n == max)
                break;
        }
        if (u->step(&cur) <= 0) {
            whole = true;
            break;
        }
        unw_word_t nip, nsp, nrbp;
        if (u->get_reg(&cur, UNW_REG_IP, &nip) < 0 || u->get_reg(&cur, UNW_REG_SP, &nsp) < 0 ||
            u->get_reg(&cur, UNW_X86_64_RBP, &nrbp) < 0)
            break;
        /* Good: this frame's rbp sits 16 below its CFA (the caller's sp), and holds the
         * caller's rbp with the return address above it. The reads are inside the stack. */
        bool good = rbp % 8 == 0 && rbp + 16 == nsp && ((const uintptr_t *)rbp)[0] == nrbp &&
                    ((const uintptr_t *)rbp)[1] == nip;
        learn((uintptr_t)ip, good);
        slot = nsp - 8;
        if (!m || !fbc_record_on_stack(slot, slot + 8) || *(const uintptr_t *)slot != nip)
            slot = 0;
        ip = nip;
        rbp = nrbp;
    }
    if (m) {
        memcpy(m->ip, frames, (size_t)n * sizeof *frames);
        m->n = n;
        m->whole = whole || ip == 0;
        m->slots = slots && n > 0 && n <= FBC_MAX_DEPTH && m->slot[0] == m->anchor;
    }
    return n;
}

/* Both walks start here, from one call site, so the return addresses of this library's own
 * frames are the same for both and the slow walk's verdicts serve the fast one. Returns
 * frames, or -1 (declined: use libunwind's fast path). */
/* libunwind's unw_backtrace frees its per-thread cache from a thread-specific-data
 * destructor that locks a mutex; ThreadSanitizer has retired the thread by then and
 * faults in its interceptor. TSan builds take the unw_step walk instead, which keeps
 * its cache in plain thread-local storage. */
#if defined(__SANITIZE_THREAD__)
#define CAPTURE_NO_BACKTRACE 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CAPTURE_NO_BACKTRACE 1
#endif
#endif
#ifndef CAPTURE_NO_BACKTRACE
#define CAPTURE_NO_BACKTRACE 0
#endif

__attribute__((noinline)) static int walk(fbc_unwinder how, uintptr_t *frames, int max,
                                          uintptr_t lo, uintptr_t hi, uintptr_t *anchor)
{
    if (how == FBC_UNWIND_STEP)
        return slow_walk(frames, max, lo, hi, NULL);
    if (!stack_bounds())
        return -1;
    const uintptr_t *fp = __builtin_frame_address(0); /* this frame: standard by construction */
    /* A thread with little stack left (a 16 KiB thread's stack holds its TLS too) cannot
     * afford libunwind's walk, which takes several KiB: the frame-pointer chain is followed
     * without verdicts there. Its reads stay inside the stack and move outward, so a frame
     * without a frame pointer can only cut the stack short or skip callers, never fault. */
    bool cramped = (uintptr_t)fp - stack_lo < CRAMPED || !fbc_unwind();
    int n = 0, v = V_UNKNOWN;
    bool inside = true;
    for (;;) {
        if ((uintptr_t)fp < stack_lo || (uintptr_t)fp > stack_hi - 16 || (uintptr_t)fp % 8)
            break;
        uintptr_t pc = fp[1];
        const uintptr_t *next = (const uintptr_t *)fp[0];
        if (pc == 0)
            break; /* the end of the chain: libunwind knows where stacks end */
        if (!inside || pc < lo || pc >= hi) {
            if (inside)
                *anchor = (uintptr_t)&fp[1];
            inside = false;
            frames[n++] = pc;
            if (n == max)
                return n;
        }
        if ((!cramped && (v = lookup(pc)) != V_GOOD) || next <= fp)
            break; /* outward only: no loop, no wrong turn into older frames */
        fp = next;
    }
    if (cramped)
        return n;
    if (how == FBC_UNWIND_AUTO && v == V_UNKNOWN &&
        __atomic_load_n(&nverdicts, __ATOMIC_RELAXED) < VERDICTS / 2)
        return slow_walk(frames, max, lo, hi, NULL);
    return -1;
}

/* libunwind's own fast path, with its per-thread cache; kept out of line so its buffer is
 * on the stack only when it runs. */
__attribute__((noinline)) static int backtrace_walk(uintptr_t *frames, int max, uintptr_t lo,
                                                    uintptr_t hi)
{
    void *buf[FBC_MAX_DEPTH + 16];
    if (CAPTURE_NO_BACKTRACE)
        return slow_walk(frames, max, lo, hi, NULL);
    const fbc_unw *u = fbc_unwind();
    if (!u || !fbc_unwpipe_ready())
        return 0;
    /* Four frames of this library sit above the caller (capture, record, the slow path, the
     * wrapper); every frame walked costs, so ask for no more than that. */
    int n = u->backtrace(buf, max + 4);
    int skip = 0;
    while (skip < n && (uintptr_t)buf[skip] >= lo && (uintptr_t)buf[skip] < hi)
        skip++;
    if (n - skip < 1)
        return slow_walk(frames, max, lo, hi, NULL);
    int m = n - skip < max ? n - skip : max;
    for (int i = 0; i < m; i++)
        frames[i] = (uintptr_t)buf[skip + i];
    return m;
}

/* The stack as it would be without the shim: the walks leave out the shim's frames inside
 * the exit called, and this the ones further out, where a call through the shim is still in
 * progress (a declared exit's entry running its definition, a built-in exit's wrapper around
 * a backend that calls another exit): a site is never the shim's own code. */
static int without_self(uintptr_t *frames, int n, uintptr_t lo, uintptr_t hi)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (frames[i] - lo >= hi - lo)
            frames[k++] = frames[i];
    return n < 0 ? n : k;
}

/* At the thread's end; a capture after it (another key's destructor calling an exit) makes
 * a new memo, which glibc's next round of key destructors frees. */
static void drop(void *m)
{
    mine = NULL;
    free(m);
}

static void make_key(void)
{
    if (pthread_key_create(&memo_key, drop) != 0)
        memo_key = (pthread_key_t)-1;
}

static memo *my_memo(void)
{
    if (!mine) {
        pthread_once(&memo_once, make_key);
        if (memo_key == (pthread_key_t)-1 || !(mine = calloc(1, sizeof *mine)))
            return NULL;
        pthread_setspecific(memo_key, mine);
    }
    return mine;
}

/* Whether m's walk is the one this call would make, as far as max frames: each return
 * address still where it was read from. */
static bool still(const memo *m, int max)
{
    if (!m->slots || (!m->whole && m->n < max))
        return false;
    int n = m->n < max ? m->n : max;
    for (int i = 0; i < n; i++) {
        uintptr_t s = m->slot[i];
        if (!fbc_record_on_stack(s, s + 8) || *(const uintptr_t *)s != m->ip[i])
            return false;
    }
    return true;
}

/* The stack from m, or a walk that refills it; -1 where unw_backtrace is the better walk (a
 * new anchor, or one whose stacks lately differed). pc0 is frames[0]. */
static int from_memo(memo *m, uintptr_t *frames, int max, uintptr_t lo, uintptr_t hi,
                     uintptr_t anchor, unsigned generation)
{
    uintptr_t pc0 = frames[0];
    if (m->generation != generation || m->anchor != anchor || m->pc0 != pc0) {
        m->generation = generation;
        m->anchor = anchor;
        m->pc0 = pc0;
        m->slots = false;
        m->misses = m->skip = 0;
        return -1;
    }
    if (still(m, max)) {
        int n = m->n < max ? m->n : max;
        memcpy(frames, m->ip, (size_t)n * sizeof *frames);
        m->misses = 0;
        __atomic_add_fetch(&reused, 1, __ATOMIC_RELAXED);
        return n;
    }
    if (m->slots) { /* a different stack from the same anchor */
        m->slots = false;
        m->misses += m->misses < 6;
        m->skip = 1u << m->misses;
    }
    if (m->skip > 0) {
        m->skip--;
        return -1;
    }
    return slow_walk(frames, max < FBC_MAX_DEPTH ? max : FBC_MAX_DEPTH, lo, hi, m);
}

/* The thread's memo, unless a capture on this thread is using it already (an exit called
 * from a signal handler that interrupted one). */
static int memo_walk(uintptr_t *frames, int max, uintptr_t lo, uintptr_t hi, uintptr_t anchor,
                     unsigned generation)
{
    memo *m = my_memo();
    if (!m || m->busy)
        return -1;
    m->busy = true;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    int n = from_memo(m, frames, max, lo, hi, anchor, generation);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    m->busy = false;
    return n;
}

unsigned long fbc_capture_reused(void)
{
    return __atomic_load_n(&reused, __ATOMIC_RELAXED);
}

int fbc_capture_with(fbc_unwinder how, uintptr_t *frames, int max)
{
    uintptr_t lo, hi;
    unsigned g = fbc_modmap_generation();
    if (__builtin_expect(g != __atomic_load_n(&generation, __ATOMIC_RELAXED), 0)) {
        forget();
        __atomic_store_n(&generation, g, __ATOMIC_RELAXED);
    }
    fbc_modmap_self(&lo, &hi);
    if (max <= 0)
        return 0;
    int n = -1;
    uintptr_t anchor = 0;
    if (how != FBC_UNWIND_BACKTRACE)
        n = walk(how, frames, max, lo, hi, &anchor);
    if (n < 0 && how == FBC_UNWIND_AUTO && anchor)
        n = memo_walk(frames, max, lo, hi, anchor, g);
    if (n < 0 && (how == FBC_UNWIND_AUTO || how == FBC_UNWIND_BACKTRACE))
        n = backtrace_walk(frames, max, lo, hi);
    return without_self(frames, n, lo, hi);
}

int fbc_capture(uintptr_t *frames, int max)
{
    return fbc_capture_with(FBC_UNWIND_AUTO, frames, max);
}
