/* record.h - recording: the stack of each event (capture.c), the result's shape, and the
 * counts, in per-thread shards of the process census (shard.c, stacks.c) and in the scopes
 * open on the thread or the process (scope.c). Raw addresses only: names are found at dump
 * time (dump/). Uses base/ only. */
#ifndef FBC_RECORD_H
#define FBC_RECORD_H

#include <uthash.h>

#include "base.h"

#define FBC_MAX_SHAPES 8 /* distinct result shapes kept per stack; more are counted, not listed */
#define FBC_MAX_RANK 8

/* What an event is: an op that left the GPU, an op run on the host because its input was
 * there, bytes that crossed between devices, or a split of a scheduler's graph computed on
 * the host (ggml: its nodes, the bytes they wrote and the time the split took). */
typedef enum {
    FBC_FALLBACK = 0,
    FBC_HOST = 1,
    FBC_TRANSFER = 2,
    FBC_SPLIT = 3,
    FBC_KINDS = 4
} fbc_kind;

typedef struct {
    int dtype, rank;
    int64_t dims[FBC_MAX_RANK];
    uint64_t count;
    uint64_t bytes; /* the bytes of the calls of this shape, by the calls' own rule */
} fbc_shape;

/* A stack deduplicated by its key: kind, nframes, npy, the backend (FBC_BACKEND_ID), the op
 * when the backend's reader named it (an interned string, fbc_record_op; 0 when the stack
 * names it), the origin of the work (an interned fbc_origin, 0 for none: origin.c), then
 * nframes native return addresses followed by npy interned Python frames (fbc_pyframe
 * pointers), innermost first. */
typedef struct fbc_entry {
    UT_hash_handle hh;
    struct fbc_entry *next; /* publication order, walked without the lock by the crash dump */
    int verdict;            /* FBCOUNT_MODE's answer for this stack (hooks/modes.c), 0 unknown */
    uint64_t born;          /* when it was first counted: the process's count of new stacks */
    uint64_t count, bytes, max_bytes, ns, max_ns;
    fbc_shape *shapes;
    size_t nshapes;
    uint32_t kind, nframes, npy, backend; /* the key starts at kind (no padding inside it) */
    uintptr_t op;
    uintptr_t origin;
    uintptr_t frames[];
} fbc_entry;

/* "fallback", "host_op", "transfer": a kind as the dump names it. */
const char *fbc_kind_name(fbc_kind k);

/* An event's backend: the backend module (base/backend.c's index) and the row's exit. */
#define FBC_BACKEND_ID(bmod, exit) ((uint32_t)(bmod) | (uint32_t)(exit) << 16)
#define FBC_BACKEND_BMOD(id) ((id)&0xffffu)
#define FBC_BACKEND_EXIT(id) ((id) >> 16)

typedef struct {
    fbc_entry *hash;
    fbc_entry *head, *tail;
    size_t n;
} fbc_table;

/* A Python frame, interned for the life of the process (pyframes.c). */
typedef struct {
    const char *file, *function;
    int line;
} fbc_pyframe;

#define FBC_MAX_PY 128

/* A captured event, ready to be counted. */
typedef struct {
    uint32_t kind, nframes, npy, backend;
    uintptr_t op;
    uintptr_t origin;
    uintptr_t frames[FBC_MAX_DEPTH + FBC_MAX_PY];
    size_t nbytes;  /* the bytes of every tensor of the call (its arguments, or its result) */
    size_t largest; /* the bytes of its largest single tensor; 0: nbytes is one tensor's */
    uint64_t ns;
    bool has_shape;
    fbc_shape shape;
} fbc_event;

/* ---- stacks.c: stacks deduplicated by hash -------------------------------------------- */
/* Counts ev in t; returns the entry, *fresh set when the stack was new. NULL when out of
 * memory. The caller holds whatever lock guards t. */
fbc_entry *fbc_table_add(fbc_table *t, const fbc_event *ev, bool *fresh);
/* ev's entry in t, or NULL. The caller holds whatever lock guards t. */
fbc_entry *fbc_table_find(fbc_table *t, const fbc_event *ev);
/* Adds the duration of an event counted before, to its entry e. */
void fbc_entry_time(fbc_entry *e, uint64_t ns);
void fbc_table_clear(fbc_table *t);
/* The key's length in bytes for a stack of nframes + npy words. */
size_t fbc_key_len(uint32_t nframes, uint32_t npy);

/* The word hash of a stack key: several times faster than uthash's byte-wise default on
 * 64-frame keys, and it runs on every recorded event. */
static inline unsigned fbc_hash_words(const void *key, size_t len)
{
    const uint64_t *w = key;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ len;
    for (size_t i = 0; i < len / 8; i++) {
        h ^= w[i];
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return (unsigned)(h ^ (h >> 29));
}

/* ---- shard.c: the process census, one table per recording thread -------------------- */
typedef struct fbc_shard {
    fbc_table table; /* written by its thread under lock; read by dumps under lock */
    pthread_mutex_t lock;
    struct fbc_shard *next; /* the list only grows at its head; walked lock-free by crashes */
    int in_use;             /* claimed by a live thread (atomic) */
} fbc_shard;

/* Guards the shard list's growth and the module map's refresh. */
extern pthread_mutex_t fbc_global_lock;

/* Bumped whenever a fork child drops the entries it inherited: an entry pointer kept across
 * a call is stale once it changed. */
extern unsigned fbc_shards_epoch;
/* The calling thread's shard, taking over one a finished thread left or making one; NULL
 * when out of memory. Also stored in fbc_t.shard. */
fbc_shard *fbc_shard_claim(void);
fbc_shard *fbc_shards_first(void); /* async-signal-safe walk start */
uint64_t fbc_shards_events(void);  /* events counted so far (relaxed, lock-free) */
/* 0 prepare (locks all), 1 parent (unlocks), 2 child (empties, unlocks). */
void fbc_shards_fork(int phase);
/* A child of a fork that ran no fork handlers (_Fork): the parent's shards are left behind,
 * unlocked or not, and the child starts an empty list. Allocation- and lock-free. */
void fbc_shards_abandon(void);

/* ---- capture.c: return addresses of the current stack --------------------------------- */
int fbc_capture(uintptr_t *frames, int max);
void fbc_capture_init(void);
/* The capture by one chosen method, for tests: AUTO is fbc_capture; FP the frame-pointer walk
 * alone (-1 where it declines); STEP libunwind's unw_step walk; BACKTRACE unw_backtrace. */
typedef enum { FBC_UNWIND_AUTO, FBC_UNWIND_FP, FBC_UNWIND_STEP, FBC_UNWIND_BACKTRACE } fbc_unwinder;
int fbc_capture_with(fbc_unwinder how, uintptr_t *frames, int max);
/* How many captures were answered by a thread's memo of its last walk (the same return
 * addresses at the same places): for tests and the benchmarks' accounts. */
unsigned long fbc_capture_reused(void);

/* ---- pyframes.c: the calling thread's Python stack ------------------------------------ */
/* Writes the calling thread's Python frames, innermost first, as interned fbc_pyframe
 * pointers (bit 0: the frame a C-level evaluation began with) into out; returns how many.
 * 0 outside Python, and for a Python it cannot read (named once in a warning). */
int fbc_py_capture(uintptr_t *out, int max);

/* ---- origin.c: where a thread's work came from ------------------------------------- */
/* A thread that works for another (autograd's device thread running a backward that a
 * caller's loss.backward() started) or that the program started has no frame of the user's
 * own where it falls back: its events carry the stack of the code the work came from, taken
 * once (raw frames, Python's too) and interned for the life of the process. */
typedef enum {
    FBC_ORIGIN_NONE = 0,
    FBC_ORIGIN_BACKWARD = 1,
    FBC_ORIGIN_THREAD = 2,
    FBC_ORIGIN_FORWARD = 3 /* where a backward's node was made: never an event's own origin */
} fbc_origin_kind;
typedef struct fbc_origin {
    UT_hash_handle hh;
    /* A backward's origin refined by the node it ran (fbc_origin_refine): the node's name as
     * its library gives it, and the stack of the forward op that made it (NULL: unknown). */
    const char *node;
    const struct fbc_origin *forward;
    uint32_t kind, nframes, npy, pad; /* the key starts at kind, as an entry's */
    uintptr_t frames[];               /* nframes native, then npy fbc_pyframe pointers */
} fbc_origin;
/* The calling thread's stack as an origin of kind (interned); NULL when out of memory or
 * when no frame could be taken. */
const fbc_origin *fbc_origin_take(fbc_origin_kind kind);
/* A backward begins on the calling thread (o: its caller's stack, may be NULL): until the
 * matching fbc_origin_end, events of threads that are in no backward of their own carry it. */
void fbc_origin_begin(const fbc_origin *o);
void fbc_origin_end(const fbc_origin *o);
/* The calling thread was started by code whose stack is o (set once, at its start). */
void fbc_origin_thread(const fbc_origin *o);
/* The origin an event of the calling thread carries now: the backward in progress when the
 * thread is in none of its own, else the stack that started the thread; 0 for none. */
uintptr_t fbc_origin_now(void);
/* The calling thread begins running node (a backward's unit of work, autograd's Node *);
 * returns the node it ran before, to be given back to fbc_origin_node_leave when it ends. */
void *fbc_origin_node_enter(void *node);
void fbc_origin_node_leave(void *previous);
/* The node the calling thread is running (NULL: none). */
void *fbc_origin_node(void);
/* o (a backward's origin) with the node it ran and the forward stack that made the node
 * (either may be NULL), interned: an event keeps it for the life of the process. o itself
 * where both are NULL or out of memory. */
const fbc_origin *fbc_origin_refine(const fbc_origin *o, const char *node,
                                    const fbc_origin *forward);
/* The origins' lock across fork() (fbc_mutex_fork's phases). */
void fbc_origin_fork(int phase);
/* "backward", "thread": a kind as the dump names it (NULL for none). */
const char *fbc_origin_name(uint32_t kind);

/* ---- libunwind.c: libunwind, loaded at the first capture ------------------------------ */
/* Whether addr lies in the libunwind the shim loaded (none loaded yet: false). */
bool fbc_unwind_owns(const void *addr);
#ifdef UNW_LOCAL_ONLY /* the files that include <libunwind.h> */
/* field, the function (or variable) as <libunwind.h> declares it */
#define FBC_UNW_ENTRIES(X)                                                                         \
    X(getcontext, unw_tdep_getcontext)                                                             \
    X(init_local, unw_init_local)                                                                  \
    X(step, unw_step)                                                                              \
    X(get_reg, unw_get_reg)                                                                        \
    X(set_caching_policy, unw_set_caching_policy)                                                  \
    X(flush_cache, unw_flush_cache)                                                                \
    X(backtrace, unw_backtrace)                                                                    \
    X(local_as, unw_local_addr_space)
typedef struct {
#define FBC_UNW_FIELD(field, fn) __typeof__(fn) *field;
    FBC_UNW_ENTRIES(FBC_UNW_FIELD)
#undef FBC_UNW_FIELD
} fbc_unw;
/* libunwind's functions, loaded at the first call; NULL when it cannot be loaded (said once
 * in a warning). Called through these pointers, never through a wrapper of the shim's:
 * unw_getcontext must see its caller's own frame. */
const fbc_unw *fbc_unwind(void);
#endif

/* ---- unwpipe.c: libunwind's memory-validation pipe ---------------------------------- */
/* libunwind made a pipe (its pipe2, interposed): its ends are moved above the shim's floor
 * and remembered. */
void fbc_unwpipe_adopt(int fds[2]);
/* Whether libunwind may run now: its pipe is intact (re-made where the program closed it);
 * false when the program has reused one of its numbers. */
bool fbc_unwpipe_ready(void);

/* ---- scope.c: the in-process censuses open on a thread or on the process ------------- */
typedef struct fbc_scope {
    fbc_table table;
    struct fbc_scope *up; /* the enclosing scope of the same thread */
    uint64_t total[FBC_KINDS], bytes[FBC_KINDS], ns[FBC_KINDS];
    bool all_threads;
} fbc_scope;

/* Opens a scope on the calling thread (NULL when out of memory); closes the innermost one. */
fbc_scope *fbc_scope_push(void);
fbc_scope *fbc_scope_pop(void);
/* The process-wide scope: every thread's events, until ended. NULL/-1 when one is open. */
fbc_scope *fbc_scope_open_all(void);
fbc_scope *fbc_scope_close_all(void);
void fbc_scope_free(fbc_scope *s);
bool fbc_scope_any_all(void); /* a process-wide scope is open (relaxed) */
/* Counts ev in every scope open on this thread and in the process-wide one. */
void fbc_scope_add(const fbc_event *ev);
/* Adds ns to ev's stack (counted before) in the same scopes, once the event's call is over. */
void fbc_scope_time(const fbc_event *ev, uint64_t ns);
/* 0 prepare (takes the process-wide scope's lock), 1 parent and child after it, 2 anew. */
void fbc_scope_fork(int phase);

/* ---- record.c: one event ------------------------------------------------------------ */
enum { FBC_T_UNSET = 0, FBC_T_OFF = 1, FBC_T_ON = 2 };

typedef struct {
    int state;               /* the one read the wrappers make when recording is off */
    int busy;                /* the shim's own code runs for an event: exits do not record */
    struct fbc_scope *scope; /* innermost scope open on this thread */
    struct fbc_shard *shard; /* this thread's part of the process census */
    int in_loader;           /* inside a loader entry's own work (hooks/declared.c) */
} fbc_thread;

extern __thread fbc_thread fbc_t __attribute__((tls_model("initial-exec")));
extern unsigned fbc_stacks_made; /* distinct stacks added to the process census (relaxed) */

/* What an event left in the process census: its entry, and whether its stack was new. */
typedef struct {
    fbc_entry *entry;
    bool fresh;
    unsigned epoch; /* the census's (fork clears a child's): entry is stale once it changed */
} fbc_recorded;

#define FBC_MAX_NEST 4 /* exit calls in progress at once on one thread that record */

/* An exit call that records begins at frame (the address of its frame on this thread's
 * stack): returns the event it fills, NULL when FBC_MAX_NEST calls are in progress already
 * or out of memory. Calls whose frames lie at or below frame have ended, by returning, by an
 * exception or by a longjmp, and are forgotten: so a call that never returned leaves
 * nothing behind. */
fbc_event *fbc_record_enter(uintptr_t frame);
/* The call begun last returned. */
void fbc_record_leave(void);
/* Whether [lo, hi) lies within the calling thread's own stack (not another stack it runs on,
 * such as a coroutine's or a signal's): false when that stack cannot be known. */
bool fbc_record_on_stack(uintptr_t lo, uintptr_t hi);
/* Captures the calling thread's stack into ev (fn: the exit's own definition, the innermost
 * frame) and resets the rest: a fallback of backend 0, no op, no bytes, no shape. */
void fbc_record_capture(fbc_event *ev, uintptr_t fn);
/* Makes ev the event of a call made within outer's (captured on this thread, still in
 * progress): fn (the call's own definition, the innermost frame), then outer's frames, and
 * resets the rest as fbc_record_capture does. The stack walk a nested call would repeat is
 * not made again. */
void fbc_record_within(fbc_event *ev, uintptr_t fn, const fbc_event *outer);
/* Counts ev as it stands (with ev->ns) in the process census (when on) and in every scope
 * open on this thread and on the process. */
fbc_recorded fbc_record_count(const fbc_event *ev);
/* Adds ns to an event counted before its call ran (r from fbc_record_count), in the process
 * census and the scopes: a call that ends by an exception keeps its count, without time. */
void fbc_record_time(const fbc_event *ev, fbc_recorded r, uint64_t ns);
/* An op name a reader found, interned for the life of the process (names in a backend's
 * memory may go away with it); NULL when out of memory. */
const char *fbc_record_op(const char *name);
/* 0 prepare (takes the op names' lock), 1 parent and child after it, 2 anew. */
void fbc_record_fork(int phase);

#endif
