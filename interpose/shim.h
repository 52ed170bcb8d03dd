/* shim.h - what the parts of libfbcount share; nothing here is exported.
 *
 * Prefix fbc_ for internal names (hidden by -fvisibility=hidden), fbcount_ for the public API
 * (fbcount.h). Recording keeps raw addresses only; names are found at dump time.
 */
#ifndef FBC_SHIM_H
#define FBC_SHIM_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <uthash.h>

#define FBC_EXPORT __attribute__((visibility("default")))
#define FBC_MAX_DEPTH 256
#define FBC_MAX_PREFIXES 16
#define FBC_MAX_SHAPES 8 /* distinct result shapes kept per stack; more are counted, not listed */
#define FBC_MAX_RANK 8

/* ---- config.c: the FBCOUNT_ environment, read once ---------------------------------- */
typedef enum { FBC_MODE_COUNT, FBC_MODE_WARN, FBC_MODE_ABORT } fbc_mode;

typedef struct {
    bool enabled;     /* process-wide recording (FBCOUNT; default: on when preloaded) */
    int depth;        /* FBCOUNT_DEPTH */
    int nprefix;      /* FBCOUNT_OP_PREFIX, split on commas */
    char *prefix[FBC_MAX_PREFIXES];
    char output[1024]; /* FBCOUNT_OUTPUT template; "" means none */
    int signal;       /* FBCOUNT_SIGNAL; 0 means none */
    fbc_mode mode;    /* FBCOUNT_MODE */
    bool quiet;       /* FBCOUNT_QUIET */
    char **allow;     /* FBCOUNT_ALLOW ops */
    size_t nallow;
} fbc_config;

extern fbc_config fbc_cfg;
void fbc_config_load(bool preloaded);
bool fbc_allowed(const char *op);
bool fbc_has_prefix(const char *name);
const char *fbc_mode_name(fbc_mode m);
/* One line on stderr, "fbcount: ..."; never touches stdout. */
void fbc_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- process.c: facts about this process, cached so a signal handler can use them ----- */
typedef struct {
    int pid, ppid;
    char host[256];
    char exe[4096];
    char name[256];     /* %e */
    char argv[16384];   /* NUL-separated, from /proc/self/cmdline */
    size_t argv_len;
    bool forked;        /* a fork child: its file name must differ from the parent's */
} fbc_process;

extern fbc_process fbc_proc;
void fbc_process_load(void);

/* ---- modmap.c: the loaded modules, append-only so a crash handler can read them -------- */
typedef struct {
    uintptr_t base, start, end; /* dlpi_addr and the span of the PT_LOAD segments */
    const char *path;
    char build_id[41];
    bool file;                  /* a real file (not the vdso) */
} fbc_module;

void fbc_modmap_refresh(void);
size_t fbc_modmap_count(void);                /* async-signal-safe */
const fbc_module *fbc_modmap_at(size_t i);    /* async-signal-safe */
long fbc_modmap_find(uintptr_t ip);           /* index or -1; async-signal-safe */
void fbc_modmap_self(uintptr_t *start, uintptr_t *end); /* this library's span */
void fbc_modmap_fork(int phase); /* 0 prepare, 1 parent, 2 child */

/* ---- table.c: stacks deduplicated by hash ------------------------------------------- */
typedef enum { FBC_FALLBACK = 0, FBC_HOST = 1 } fbc_kind;

typedef struct {
    int dtype, rank;
    int64_t dims[FBC_MAX_RANK];
    uint64_t count;
} fbc_shape;

typedef struct fbc_entry {
    UT_hash_handle hh;
    struct fbc_entry *next; /* publication order, walked without the lock by the crash dump */
    uint64_t count, bytes, max_bytes;
    fbc_shape *shapes;
    size_t nshapes;
    uint32_t kind, nframes; /* the key starts here: kind, nframes, frames (no padding between) */
    uintptr_t frames[];
} fbc_entry;

typedef struct {
    fbc_entry *hash;
    fbc_entry *head, *tail;
    size_t n;
} fbc_table;

/* A captured event, ready to be counted. */
typedef struct {
    uint32_t kind, nframes;
    uintptr_t frames[FBC_MAX_DEPTH];
    size_t nbytes;
    bool has_shape;
    fbc_shape shape;
} fbc_event;

/* Counts ev in t; returns the entry, *fresh set when the stack was new. NULL when out of memory. */
fbc_entry *fbc_table_add(fbc_table *t, const fbc_event *ev, bool *fresh);
void fbc_table_clear(fbc_table *t);

/* The word hash of a stack key (kind, nframes, frames): several times faster than uthash's
 * byte-wise default on 64-frame keys, and it runs on every recorded event. */
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

/* Guards the shard list's growth and the module map's refresh. */
extern pthread_mutex_t fbc_global_lock;

/* ---- shard.c: the process census, one table per recording thread -------------------- */
typedef struct fbc_shard {
    fbc_table table;        /* written by its thread under lock; read by dumps under lock */
    pthread_mutex_t lock;
    struct fbc_shard *next; /* the list only grows at its head; walked lock-free by crashes */
    int in_use;             /* claimed by a live thread (atomic) */
} fbc_shard;

/* The calling thread's shard, taking over one a finished thread left or making one; NULL
 * when out of memory. Also stored in fbc_t.shard. */
fbc_shard *fbc_shard_claim(void);
fbc_shard *fbc_shards_first(void);     /* async-signal-safe walk start */
size_t fbc_shards_stacks(void);        /* distinct stacks over all shards (with duplicates) */
void fbc_shards_fork(int phase);       /* 0 prepare (locks all), 1 parent, 2 child (empties) */

/* ---- record.c: the hot path behind the wrappers ------------------------------------- */
enum { FBC_T_UNSET = 0, FBC_T_OFF = 1, FBC_T_ON = 2 };

struct fbcount_census;
typedef struct {
    int state;                   /* the one read the wrappers make when recording is off */
    int busy;                    /* recursion guard */
    struct fbcount_census *scope; /* innermost active in-process census */
    struct fbc_shard *shard;     /* this thread's part of the process census */
} fbc_thread;

extern __thread fbc_thread fbc_t __attribute__((tls_model("initial-exec")));
extern bool fbc_process_on;      /* process-wide recording */
void fbc_thread_decide(void);
void fbc_record(fbc_kind kind, const void *out, size_t nbytes, uintptr_t fn);
void fbc_init(void);             /* idempotent; the constructor calls it first */
int fbc_capture(uintptr_t *frames, int max);
void fbc_capture_init(void);
/* The capture by one chosen method, for tests: AUTO is fbc_capture; FP the frame-pointer walk
 * alone (-1 where it declines); STEP libunwind's unw_step walk; BACKTRACE unw_backtrace. */
typedef enum { FBC_UNWIND_AUTO, FBC_UNWIND_FP, FBC_UNWIND_STEP, FBC_UNWIND_BACKTRACE } fbc_unwinder;
int fbc_capture_with(fbc_unwinder how, uintptr_t *frames, int max);
void fbc_capture_forget(void); /* a module went away: its return addresses prove nothing now */

/* ---- wrap.c: the interposed exits and what they forward to --------------------------- */
typedef struct {
    const char *op;
    uint64_t native, fallback, host;
} fbc_stats_entry; /* vkt_stats_entry, as libvkt lays it out */

typedef struct {
    int (*rank)(const void *t);
    const int64_t *(*shape)(const void *t);
    int (*dtype)(const void *t);
    const char *(*dtype_name)(int dtype);
    size_t (*stats)(fbc_stats_entry *entries, size_t cap);
} fbc_backend;

/* libvkt's optional accessors, published once the backend is seen (all NULL before). */
const fbc_backend *fbc_vkt_get(void);

/* ---- census.c (the in-process API) ------------------------------------------------ */
void fbc_census_add(struct fbcount_census *c, const fbc_event *ev);

/* ---- symbolize.c: names for addresses, attribution of a stack ----------------------- */
typedef struct {
    const char *symbol; /* NULL when unknown */
    const char *file;
    int line;
    long module;        /* fbc_modmap index or -1 */
    uintptr_t offset;
} fbc_frame_info;

typedef struct {
    const char *op, *site;       /* never NULL: "(unknown)" */
    const char *site_file, *site_module;
    int site_line;
} fbc_attrib;

/* Callers hold fbc_sym_lock; the strings live until fbc_sym_reset. fbc_attribute names the
 * frames it needs, innermost first, and returns how many leading entries of infos it filled. */
void fbc_symbolize(uintptr_t ip, bool first, fbc_frame_info *out);
unsigned fbc_attribute(const uintptr_t *frames, unsigned n, fbc_frame_info *infos, fbc_attrib *out);
extern pthread_mutex_t fbc_sym_lock;
void fbc_sym_reset(void);

/* ---- writer.c: a JSON/text writer onto a file descriptor, async-signal-safe ---------- */
typedef struct {
    int fd;
    char *buf;
    size_t cap, len;
    bool failed;
} fbc_writer;

void fbc_w_init(fbc_writer *w, int fd, char *buf, size_t cap);
void fbc_w_raw(fbc_writer *w, const char *s, size_t n);
void fbc_w_str(fbc_writer *w, const char *s);
void fbc_w_json(fbc_writer *w, const char *s);       /* quoted, escaped, valid UTF-8 */
void fbc_w_u64(fbc_writer *w, uint64_t v);
void fbc_w_i64(fbc_writer *w, int64_t v);
void fbc_w_hex(fbc_writer *w, uint64_t v);          /* "0x..." quoted */
void fbc_w_flush(fbc_writer *w);
size_t fbc_fmt_u64(char *out, uint64_t v);          /* no NUL; returns length */
void fbc_fmt_time(char out[21]);                    /* UTC ISO 8601, NUL-terminated */

/* ---- output.c: file names and atomic writes, async-signal-safe --------------------- */
extern int fbc_seq;                                 /* dumps taken so far (atomic) */
/* Expands the template for dump number seq into out; false when no file is wanted. */
bool fbc_output_path(const char *tmpl, int seq, char *out, size_t cap);
/* Creates a fresh temporary next to path (never through a symlink); -1 on failure. */
int fbc_output_open(const char *path, char *tmp, size_t cap);
int fbc_output_commit(int fd, const char *tmp, const char *path, bool ok);
extern char fbc_output_tmpl[1024];                  /* the template in use (may fall back) */

/* ---- framecache.c: each distinct frame's JSON, formatted once per dump ----------------- */
typedef struct fbc_framecache fbc_framecache;
fbc_framecache *fbc_fc_new(void);   /* NULL when out of memory; the functions accept NULL */
void fbc_fc_free(fbc_framecache *c);
/* Writes the frame object {"ip":...,"symbol":...} for ip (first: the innermost frame);
 * takes fbc_sym_lock to name a frame it has not seen. */
void fbc_fc_write(fbc_framecache *c, fbc_writer *w, uintptr_t ip, bool first);

/* ---- dump.c: the symbolized census, the exit summary ------------------------------- */
typedef struct fbc_report fbc_report;
fbc_report *fbc_report_build(const fbc_table *t);  /* one table the caller owns */
fbc_report *fbc_report_build_process(void);        /* every shard, merged */
void fbc_report_free(fbc_report *r);
uint64_t fbc_report_total(const fbc_report *r, fbc_kind k, bool bytes);
uint64_t fbc_report_op(const fbc_report *r, fbc_kind k, const char *op, bool bytes);
void fbc_report_text(const fbc_report *r, FILE *out, const char *indent, int top);
/* Writes a dump of the process census; reason exit|snapshot|api. Returns 0 or -1. */
int fbc_dump_process(const char *reason, const char *path, const char *extra_json);
extern pthread_mutex_t fbc_dump_lock;
void fbc_dump_head(fbc_writer *w, const char *reason, int seq); /* async-signal-safe */
void fbc_dump_modules(fbc_writer *w);                            /* async-signal-safe */
void fbc_exit_dump(void);

/* ---- crash.c, snapshot.c, modes.c ------------------------------------------------ */
void fbc_crash_install(void);
extern int fbc_crash_done;      /* set once a final dump was written (atomic) */
void fbc_snapshot_install(void);
int fbc_sigaction_resolve(void); /* the next sigaction, for the crash handler too */
void fbc_snapshot_after_fork(void);
void fbc_snapshot_drain(void);  /* at exit: writes a snapshot the signal asked for */
void fbc_exec_inherit(void);
void fbc_mode_check(const fbc_entry *e);
void fbc_modes_after_fork(void);

#endif
