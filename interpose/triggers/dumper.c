/* dumper.c - the one thread that writes dumps: snapshots the census signal asks for, the
 * final dump a termination signal asks for, checkpoints every FBCOUNT_INTERVAL, and work
 * that needs a full stack (symbolizing for the warn and abort modes and the in-process API).
 *
 * Handlers wake it with sem_post, the one waking call POSIX allows in a signal handler; no
 * pipe, so a daemon that closes every descriptor cannot cut it off or have its own file
 * written into. It starts only once the process uses a backend: a process that never does
 * (a shell, `ls`, a setuid helper under `fbcount run`) runs no thread of the shim's, and
 * glibc's setuid broadcast reaches this thread like any other (its mask leaves glibc's own
 * signals open). */
#include <errno.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "triggers.h"

#define WARM_NS (500ull * 1000000u) /* how often the dumper looks for stacks to name */

static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t job_cond = PTHREAD_COND_INITIALIZER;
static struct {
    void (*fn)(void *);
    void *arg;
    int state; /* 0 free, 1 queued, 2 done */
} job;

static void serve_job(void)
{
    pthread_mutex_lock(&job_lock);
    if (job.state == 1) {
        pthread_mutex_unlock(&job_lock);
        job.fn(job.arg);
        pthread_mutex_lock(&job_lock);
        job.state = 2;
        pthread_cond_broadcast(&job_cond);
    }
    pthread_mutex_unlock(&job_lock);
}

/* Work no one waits for (naming new stacks ahead of need, warn mode's messages) runs at
 * SCHED_IDLE: it takes a core only where the program leaves one idle. A program whose
 * threads fill every core (an OpenMP region, at::parallel_for on all of them) otherwise waits
 * at its barrier for the thread this one pushed off its core: warn mode's first messages
 * made a torch process's parallel ops 10x slower on a 16-core machine. What someone waits
 * for (termination dumps, snapshots, checkpoints, abort and error modes' verdicts) runs at
 * the normal policy. Where the policy cannot be changed both ways, everything runs at the
 * normal. */
static bool idle_now;
static int may_idle = -1; /* whether this thread can come back from SCHED_IDLE (once) */

/* Leaving SCHED_IDLE is allowed only with CAP_SYS_NICE or where RLIMIT_NICE admits the
 * thread's nice value: most unprivileged processes (RLIMIT_NICE 0) and containers without the
 * capability cannot. A thread that went idle there would stay idle, and the dumps someone
 * waits for (a termination signal's, with its bounded wait) would starve behind the program:
 * it never goes idle then. */
static bool can_come_back(void)
{
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3];
    if (syscall(SYS_capget, &hdr, caps) == 0 && (caps[0].effective & (1u << CAP_SYS_NICE)))
        return true;
    struct rlimit rl;
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, 0); /* this thread's, on Linux */
    return errno == 0 && getrlimit(RLIMIT_NICE, &rl) == 0 &&
           (rl.rlim_cur == RLIM_INFINITY || (rlim_t)(20 - nice) <= rl.rlim_cur);
}

static void background_policy(bool on)
{
    if (on == idle_now)
        return;
    if (on && may_idle < 0)
        may_idle = can_come_back();
    if (on && !may_idle)
        return;
    struct sched_param p = {0};
    if (pthread_setschedparam(pthread_self(), on ? SCHED_IDLE : SCHED_OTHER, &p) == 0)
        idle_now = on;
}

/* What no one waits for starts here: drain's before, and warm's once it has work. */
static void background(void)
{
    background_policy(true);
}

static uint64_t last_events = (uint64_t)-1;
static unsigned warmed; /* fbc_stacks_made when the names were last looked up */

/* Names new stacks ahead of need: a dump on SIGTERM (or a snapshot) then formats names it
 * already has instead of reading line tables while the program waits to die. */
static void warm(void)
{
    unsigned made = __atomic_load_n(&fbc_stacks_made, __ATOMIC_RELAXED);
    if (made == warmed || !fbc_output_read())
        return;
    background();
    warmed = made;
    fbc_report *r = fbc_report_build_process(true); /* attributes: names ops and sites */
    for (size_t i = 0; r && i < r->nstacks; i++)
        fbc_fc_warm(r->stacks[i].e); /* what the frame table will need */
    fbc_report_free(r);
}

static void checkpoint(void)
{
    uint64_t n = fbc_shards_events();
    if (n == last_events || fbc_final_done())
        return; /* nothing new since the last one: the file on disk is still current */
    last_events = n;
    fbc_dump_req req = {.reason = "checkpoint", .checkpoint = true, .patient = true};
    fbc_dump_write(&req, NULL, NULL, 0);
}

static void *loop(void *arg)
{
    void (*first)(void);
    memcpy(&first, &arg, sizeof first);
    if (first)
        first();
    uint64_t next =
        fbc_cfg.interval_ms ? fbc_now_ns() + (uint64_t)fbc_cfg.interval_ms * 1000000u : 0;
    for (;;) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        uint64_t until = next ? next : now + WARM_NS;
        if (until > now + WARM_NS)
            until = now + WARM_NS;
        if (until > now) {
            uint64_t d = until - now;
            ts.tv_sec += (time_t)(d / 1000000000u);
            ts.tv_nsec += (long)(d % 1000000000u);
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            fbc_req_wait(&ts);
        }
        int sig = __atomic_load_n(&fbc_req_terminate, __ATOMIC_ACQUIRE);
        if (sig && !__atomic_load_n(&fbc_terminate_done, __ATOMIC_ACQUIRE)) {
            fbc_terminate_serve(sig);
            continue;
        }
        serve_job();
        fbc_snapshot_serve();
        if (next && fbc_now_ns() >= next) {
            checkpoint();
            next = fbc_now_ns() + (uint64_t)fbc_cfg.interval_ms * 1000000u;
        }
        fbc_dumper_drain(
            background); /* its work and warm's at SCHED_IDLE, only when there is some */
        warm();
        background_policy(false);
    }
    return NULL;
}

void fbc_dumper_start(void (*first)(void))
{
    if (!fbc_req_open())
        return;
    sigset_t all, old;
    sigfillset(&all); /* glibc keeps its own (cancellation, setxid) open */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    void *arg;
    memcpy(&arg, &first, sizeof arg);
    int rc = fbc_thread_create(&t, &at, loop, arg);
    pthread_attr_destroy(&at);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        fbc_req_close();
        fbc_warn("no dumper thread (%s): snapshots, checkpoints and termination dumps are off",
                 strerror(rc));
        return;
    }
    pthread_setname_np(t, "fbcount");
}

typedef struct {
    void (*fn)(void *);
    void *arg;
} big_call;

static void *run_call(void *p)
{
    big_call *c = p;
    c->fn(c->arg);
    return NULL;
}

void fbc_run_big(void (*fn)(void *), void *arg)
{
    if (!fbc_dumper_running()) {
        /* No dumper (a scope in a process that never preloaded the shim): a thread of its
         * own, with the default stack, for this one call. */
        big_call c = {fn, arg};
        pthread_t t;
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        int rc = fbc_thread_create(&t, NULL, run_call, &c);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (rc == 0)
            pthread_join(t, NULL);
        else
            fn(arg);
        return;
    }
    pthread_mutex_lock(&job_lock);
    while (job.state != 0)
        pthread_cond_wait(&job_cond, &job_lock);
    job.fn = fn;
    job.arg = arg;
    job.state = 1;
    pthread_mutex_unlock(&job_lock);
    fbc_dumper_wake();
    pthread_mutex_lock(&job_lock);
    while (job.state != 2)
        pthread_cond_wait(&job_cond, &job_lock);
    job.state = 0;
    pthread_cond_broadcast(&job_cond);
    pthread_mutex_unlock(&job_lock);
}

void fbc_dumper_after_fork(void)
{
    fbc_req_after_fork();
    pthread_mutex_init(&job_lock, NULL);
    pthread_cond_init(&job_cond, NULL);
    job.state = 0;
    last_events = (uint64_t)-1;
    warmed = 0;
    idle_now = false; /* the child's dumper starts anew, at the forking thread's policy */
}
