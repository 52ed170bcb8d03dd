/* base.h - the bottom layer of libfbcount: configuration, facts about the process, file names
 * and atomic writes, the async-signal-safe writer, the module map, descriptors and the
 * backend's accessors. Nothing here calls a layer above (interpose/meson.build lists the
 * order: hooks -> triggers -> dump -> record -> base -> rules).
 *
 * Prefix fbc_ for internal names (hidden by -fvisibility=hidden); fbcount_ for the public API.
 */
#ifndef FBC_BASE_H
#define FBC_BASE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allow.h"
#include "attrib.h"
#include "backend.h"
#include "contract.h" /* the variables, the modes */
#include "decimal.h"  /* fbr_fmt_u64 */

#define FBC_EXPORT __attribute__((visibility("default")))
#define FBC_MAX_DEPTH 256

/* ---- config.c: the FBCOUNT_ environment, read once ---------------------------------- */
typedef enum {
#define FBC_MODE_ENUM(id, name, what) FBC_MODE_##id = FBR_MODE_##id,
    FBR_MODES(FBC_MODE_ENUM)
#undef FBC_MODE_ENUM
} fbc_mode; /* rules/contract.h's, under the shim's prefix */
static inline const char *fbc_mode_name(fbc_mode m)
{
    return fbr_mode_name((fbr_mode)m);
}

typedef struct {
    /* The fields load reads first, beside the defaults' pointers, which the loader writes
     * anyway (early.h). With no variable set, load reads only these and writes nothing. */
    bool any;             /* some FBCOUNT variable (or an attach's) was set: the rest was parsed */
    int enabled;          /* FBCOUNT: 1 on, 0 off, -1 unset (on when preloaded) */
    bool all_processes;   /* FBCOUNT_ALL_PROCESSES: dump even without a backend */
    fbr_names prefixes;   /* FBCOUNT_OP_PREFIX: the vkt row's op prefixes, when set */
    fbr_names py_backend; /* FBCOUNT_PY_BACKEND: the vkt row's Python packages, when set */
    bool prefixes_set, py_backend_set;
    int depth;            /* FBCOUNT_DEPTH */
    int signal;           /* FBCOUNT_SIGNAL; 0 means none */
    int interval_ms;      /* FBCOUNT_INTERVAL; 0 means no checkpoints */
    int signal_wait_ms;   /* FBCOUNT_SIGNAL_WAIT */
    fbc_mode mode;        /* FBCOUNT_MODE */
    bool quiet;           /* FBCOUNT_QUIET */
    bool clock_monotonic; /* FBCOUNT_CLOCK=monotonic: never the CPU's counter */
    /* An attached census (fbcount attach): when it began, UTC ISO 8601 ("" when the census
     * began with the process) and CLOCK_MONOTONIC then. */
    char attached_at[21];
    uint64_t attached_ns;
    char backend_files[4096]; /* FBCOUNT_BACKEND: descriptor files, ':'-separated */
    char exits[4096];         /* FBCOUNT_EXIT: declared exits LIB:SYMBOL[:op=P], ','-separated */
    char torch_adapter[1024]; /* FBCOUNT_TORCH_ADAPTER: the adapter to use, "" for the usual */
    char output[1024];        /* FBCOUNT_OUTPUT template; "" means none */
    char metrics[1024];       /* FBCOUNT_METRICS path; "" means none */
    char run_log[1024];       /* FBCOUNT_RUN_LOG: set by `fbcount run` */
    char allow_path[4096];    /* FBCOUNT_ALLOW, made absolute at load; "" when unset */
} fbc_config;

extern fbc_config fbc_cfg;
/* Reads the environment (secure_getenv: nothing under AT_SECURE). Each bad value is named in
 * one warning and its default is used. Allocates nothing that outlives it. */
void fbc_config_load(bool preloaded);
/* Whether rows beyond the built-in ones can be in force: FBCOUNT_EXIT or FBCOUNT_BACKEND. */
bool fbc_config_declares(void);
/* Reads the configuration again from vars instead of the environment: "NAME=VALUE" lines,
 * the FBCOUNT_ variables `fbcount attach` would have set (the process's own environment is
 * not read, and recording is on unless FBCOUNT=0). Returns -1 when vars does not fit. */
int fbc_config_attach(const char *vars);
/* Whether FBCOUNT_ALLOW allows op (short or long name, rules/opname.h). The file is read at
 * the first call, and each entry that names no op of the process is warned about once. */
bool fbc_allowed(const char *op);
/* One line on stderr, "fbcount: ..."; one write(2), never stdio. */
void fbc_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- process.c: facts about this process, cached so a signal handler can use them ----- */
typedef struct {
    /* What load writes first (early.h: one page with the start of argv), the large buffers
     * last. */
    int load_state;           /* fbc_load's once (init.c) */
    int name_state;           /* fbc_process_name's once */
    bool preloaded;           /* LD_PRELOAD names the shim: its definitions see every call */
    bool on;                  /* process-wide recording (FBCOUNT; on when preloaded); atomic */
    bool used;                /* the shim's first use has run (init.c); atomic */
    bool backend_at_load;     /* a module defined a built-in exit at load (init.c) */
    uint64_t modules_at_load; /* the modules' generation then (fbc_modules_generation) */
    int pid, ppid;
    uint64_t start_ticks; /* the time-stamp counter at load, 0 where none */
    char id[33];          /* this census: random hex, new in every process image */
    size_t argv_len;
    /* Made later, at the first use or when a census needs them. */
    uint64_t start_ns;   /* CLOCK_MONOTONIC at start (fbc_process_start_ns) */
    uint64_t start_unix; /* the same as Unix time (fbc_process_start_time) */
    char name[256];      /* %e (fbc_process_name) */
    char parent_id[33];  /* the census a fork child came from; "" otherwise */
    long rank;           /* MPI/Slurm rank, -1 when none */
    bool forked;         /* a fork child: its file name must differ from the parent's */
    char host[256];
    char argv[16384]; /* NUL-separated, as /proc/self/cmdline gives it */
    char exe[4096];   /* filled by fbc_process_exe(), at the first use */
} fbc_process;

extern fbc_process fbc_proc;
/* At load: the pid, the parent, the census id, the start's counter reading (early.h). */
void fbc_process_load(void);
/* The executable's path (/proc/self/exe), read at the first call, which also makes the
 * facts only a census needs (host, rank): the first use of the shim makes them, before any
 * dump can be written (a crash handler reads them). */
const char *fbc_process_exe(void);
/* The program's name for %e, made at the first call (async-signal-safe once the shim was
 * used). */
const char *fbc_process_name(void);
/* The start (the shim's load) as CLOCK_MONOTONIC ns, and as UTC ISO 8601 text, made at the
 * first call from the counter reading taken at load. Async-signal-safe. */
uint64_t fbc_process_start_ns(void);
void fbc_process_start_time(char out[21]);

/* A fork child: new pid and census id, the parent's id kept as parent_id, its line in the
 * run log. Allocation-free. */
void fbc_process_forked(void);
/* This process's line in `fbcount run`'s log (FBCOUNT_RUN_LOG), for its "N processes
 * watched": "ID PID NAME", by early.h's rules (no stdio, no C library call). */
void fbc_process_log(void);
/* One lock of the shim's around fork: 0 prepare (takes it), 1 parent and child after it
 * (releases it), 2 a child of a fork that ran no handlers (makes it anew). */
void fbc_mutex_fork(pthread_mutex_t *m, int phase);
/* A lock a layer above makes at run time (a reader's table's), handled from then on at every
 * fork as the shim's own are, the handler-less _Fork's child included. At most 8. */
void fbc_mutex_fork_register(pthread_mutex_t *m);
/* The registered locks' phase, as fbc_mutex_fork's: triggers/fork.c calls it in each path. */
void fbc_mutex_fork_registered(int phase);
/* pthread_create as the C library defines it, past the shim's own (hooks/threadwrap.c):
 * the shim's threads are no program's work. */
int fbc_thread_create(pthread_t *t, const pthread_attr_t *attr, void *(*start)(void *), void *arg);

/* ---- clock.c: CLOCK_MONOTONIC, and two cheap reads that time an event ----------------- */
uint64_t fbc_now_ns(void); /* CLOCK_MONOTONIC; async-signal-safe */
typedef struct {
    uint64_t t, mult; /* a counter reading and its ns per tick (32.32), or ns and 0 */
} fbc_stamp;
/* Decides the clock once, after the configuration: the counter unless monotonic_only or
 * the CPU has no invariant one. Its rate is measured later, at the first event 1 ms on. */
void fbc_clock_init(bool monotonic_only);
/* CLOCK_MONOTONIC at an earlier counter reading (the start), through the counter's rate
 * measured over at least 1 ms from the first use (waiting out the rest of it if need be).
 * Async-signal-safe. */
uint64_t fbc_clock_ns_at(uint64_t ticks);
fbc_stamp fbc_clock_start(void);
uint64_t fbc_clock_since(fbc_stamp s); /* ns from s to now, 0 if the clock went back */
const char *fbc_clock_name(void);      /* "tsc" once its rate is known, else "monotonic" */

/* ---- fd.c: the shim's own descriptors, kept out of the application's way ------------- */
/* Moves fd to the lowest free descriptor at or above FBC_FD_FLOOR (close-on-exec) and closes
 * the original: a program that closes or reuses low descriptors never meets ours. Returns the
 * new descriptor, or fd itself when there is none free up there. */
#define FBC_FD_FLOOR 600
int fbc_fd_lift(int fd);
/* pipe2 as the kernel has it: the shim interposes pipe2 (for libunwind's calls), and its own
 * pipes must not go through that. 0 or -1. */
int fbc_pipe2(int fds[2], int flags);

/* ---- writer.c: a JSON/text writer onto a file descriptor, async-signal-safe ---------- */
typedef struct {
    int fd;
    char *buf;
    size_t cap, len;
    bool failed;
    uint64_t written;                                 /* bytes handed on so far */
    bool (*sink)(void *ctx, const char *p, size_t n); /* instead of write(2), when set */
    void *ctx;
} fbc_writer;

void fbc_w_init(fbc_writer *w, int fd, char *buf, size_t cap);
/* A writer that hands its full buffers to sink (false: failed) instead of a descriptor. */
void fbc_w_init_sink(fbc_writer *w, char *buf, size_t cap,
                     bool (*sink)(void *ctx, const char *p, size_t n), void *ctx);
void fbc_w_raw(fbc_writer *w, const char *s, size_t n);
void fbc_w_str(fbc_writer *w, const char *s);
void fbc_w_json(fbc_writer *w, const char *s); /* quoted, escaped, valid UTF-8 */
void fbc_w_u64(fbc_writer *w, uint64_t v);
void fbc_w_num(fbc_writer *w, const char *key, uint64_t v); /* key (e.g. ",\"count\":"), then v */
void fbc_w_i64(fbc_writer *w, int64_t v);
void fbc_w_hex(fbc_writer *w, uint64_t v); /* "0x..." quoted */
void fbc_w_flush(fbc_writer *w);
void fbc_fmt_time(char out[21], uint64_t unix_s); /* UTC ISO 8601, NUL-terminated */

/* ---- output.c: file names and atomic writes, async-signal-safe --------------------- */
extern int fbc_seq;                /* dumps taken so far (atomic) */
extern char fbc_output_tmpl[1024]; /* the template in use (may fall back) */
/* Expands the template for dump number seq into out (FBR_OUTPUT_ESCAPES); a name without
 * %n gets ".<seq>" before its extension from the second dump on. false when no file is
 * wanted or the name does not fit (*toolong set then). */
bool fbc_output_path(const char *tmpl, int seq, char *out, size_t cap, bool *toolong);
/* Whether a dump would be read by anyone: a file (FBCOUNT_OUTPUT not none), the metrics
 * file, or the summary on stderr (not FBCOUNT_QUIET). Where none is, nothing is named. */
bool fbc_output_read(void);
/* The checkpoint file of this process: the name of dump 0 with "checkpoint" for %n. */
bool fbc_output_checkpoint_path(const char *tmpl, char *out, size_t cap);
/* Creates a fresh temporary next to path, never through a symlink; -1 with errno on
 * failure. Refuses (EEXIST) when path exists and is not a regular file. */
int fbc_output_open(const char *path, char *tmp, size_t cap);
/* Removes the temporary file a dump being written has open (a process about to die by a
 * signal leaves no half-written file behind). Async-signal-safe. */
void fbc_output_abandon(void);
/* Closes fd and renames tmp to path when ok. replace: path may be replaced (a later state
 * of this census); otherwise an existing file is kept and -1 with EEXIST returned. 0 or -1. */
int fbc_output_commit(int fd, const char *tmp, const char *path, bool ok, bool replace);

/* ---- modmap.c: the loaded modules, append-only so a crash handler can read them -------- */
typedef struct {
    uintptr_t base, start, end; /* dlpi_addr and the span of the PT_LOAD segments */
    const char *path;
    char build_id[41];
    bool file; /* a real file (not the vdso) */
} fbc_module;

void fbc_modmap_refresh(void);
size_t fbc_modmap_count(void);                          /* async-signal-safe */
const fbc_module *fbc_modmap_at(size_t i);              /* async-signal-safe */
long fbc_modmap_find(uintptr_t ip);                     /* index or -1; async-signal-safe */
void fbc_modmap_self(uintptr_t *start, uintptr_t *end); /* this library's span */
/* Bumped whenever a module was unloaded: addresses may now hold other code. */
unsigned fbc_modmap_generation(void);
void fbc_modmap_fork(int phase); /* 0 prepare, 1 parent and child after it, 2 anew */

/* ---- dynsym.c: what the loaded modules export ------------------------------------------ */
/* Whether a loaded module other than the shim defines and exports one of the n functions
 * names; by the modules' hash tables, in one pass over the modules, without the dynamic
 * loader (no allocation, no dlerror); n at most FBR_BACKENDS_MAX * FBR_EXITS_MAX. *gen (when
 * not NULL): the modules' generation then. */
bool fbc_defined_elsewhere(const char *const *names, size_t n, uint64_t *gen);
/* A number that changes whenever a module is loaded or unloaded (0 where unknown). */
uint64_t fbc_modules_generation(void);
/* The function name as the loader would find it next after the shim (the first module past
 * the shim's own that exports it, else the first other module that does), by the modules'
 * hash tables, without the loader's lookup; NULL when no module exports it. */
void *fbc_next_definition(const char *name);
struct dl_phdr_info;
/* The function name the module info describes defines and exports (not an ifunc), by its
 * hash table; NULL when it has none. No call of the loader: no error left for dlerror. */
void *fbc_module_definition(const struct dl_phdr_info *info, const char *name);
/* The functions loaded modules export under one of prefixes, each once, in *out (free with
 * fbc_opnames_free); returns how many. */
size_t fbc_opnames(const fbr_names *prefixes, const char ***out);
void fbc_opnames_free(const char **names, size_t n);

/* ---- backend.c: the backend rows in force, and each module that defines their exits --- */
typedef struct {
    const char *op;
    uint64_t native, fallback, host;
} fbc_stats_entry; /* vkt_stats_entry, as libvkt lays it out (the stats accessor's) */

/* A backend in this process: a row (rules/backend.h) bound to the module that defines its
 * exits. Accessors are that module's own, never the process's: two backends each read their
 * own tensors. Made at the first call of an exit from each module; never freed. */
typedef struct fbc_bmod {
    const fbr_backend *row;
    unsigned index;           /* the event's backend number (FBC_BACKEND_ID) */
    uintptr_t base;           /* the defining module's load base */
    char path[1024];          /* and its file */
    void *acc[FBR_ACC_COUNT]; /* the row's accessors there, NULL where absent */
    int acc_state;            /* 0 not looked up, 1 being looked up, 2 done */
    /* The census's window on the backend's own counters: what they held when it began (an
     * attach; 0 for a backend bound later), and the calls it refused (FBCOUNT_MODE=error),
     * which the backend never ran and so never counted (atomics). */
    uint64_t base_native, base_fallback, base_host, refused;
    const char *(*dtype_name)(int dtype); /* a reader's own names (torch's adapter), or NULL */
    void *reader;   /* what the row's reader keeps for this module (set once) */
    bool sizes;     /* the reader reads sizes of this backend's calls (bytes are known) */
    bool bound;     /* the reader has looked at it (hooks/, under its lock) */
    char note[320]; /* what the reader says of it, for the dump ("adapter ...") */
} fbc_bmod;

#define FBC_MAX_BMODS 64

/* Reads the rows in force again (attach: its own FBCOUNT_EXIT and FBCOUNT_BACKEND): the
 * built-in ones (the vkt row with FBCOUNT_OP_PREFIX and FBCOUNT_PY_BACKEND when set),
 * FBCOUNT_BACKEND's files (a file's row replaces a built-in one of its name) and
 * FBCOUNT_EXIT's declared exits. A bad file or spec is named in one warning and left out.
 * No allocation survives it. The functions below read them at their first call. */
void fbc_backends_load(void);
/* Whether the rows have been read (a process that has not asked for them has none but the
 * built-in ones, whose exits the shim defines: tests/shim/check_exits.py). */
bool fbc_backends_read(void);
size_t fbc_rows_count(void);
const fbr_backend *fbc_row_at(size_t i);
/* The row that has symbol as an exit, preferring one whose library names path, then the row
 * read last (a file's or a declared exit's over a built-in); -1 when no row has it. *exit
 * receives the exit's index in the row. */
long fbc_row_for(const char *symbol, const char *path, unsigned *exit);
/* The backend of row `row` in the module that defines fn, made (and its accessors looked up
 * there) the first time; NULL when the table is full or fn lies in no module. */
fbc_bmod *fbc_bmod_bind(long row, const void *fn);
size_t fbc_bmod_count(void);           /* async-signal-safe */
const fbc_bmod *fbc_bmod_at(size_t i); /* async-signal-safe */
/* Whether a backend was seen: some exit was called from, or defined in, a module. */
bool fbc_backend_seen(void);
/* Whether the process has a backend loaded: one seen already, else the modules other than
 * the shim that define an exit of a row (a backend that never fell back, even one dlopen-ed
 * RTLD_LOCAL), each bound when found. The one rule for "this process has a census". */
bool fbc_backend_loaded(void);

/* The accessors, each 0/NULL/false where the backend has none. */
bool fbc_bmod_shape(const fbc_bmod *b, const void *t, int *rank, const int64_t **dims, int *dtype);
const char *fbc_bmod_dtype_name(const fbc_bmod *b, int dtype);
size_t fbc_bmod_stats(const fbc_bmod *b, fbc_stats_entry *entries, size_t cap);
uint64_t fbc_bmod_started(const fbc_bmod *b); /* this thread's fallback began (ns), 0 unknown */
bool fbc_bmod_timed(const fbc_bmod *b);       /* it has a "started" accessor (async-signal-safe) */
bool fbc_bmod_has_stats(const fbc_bmod *b);   /* it has a "stats" accessor */
/* The backend's own op counters (its stats accessor) summed over its ops, over the census's
 * window: from the attach where the census was attached (fbc_backends_window), a refused
 * call counted as the fallback it was. false where it keeps none. */
bool fbc_bmod_counters(const fbc_bmod *b, uint64_t *native, uint64_t *fallback, uint64_t *host);
/* A call the census counted as a fallback that the backend will never run (refused by
 * FBCOUNT_MODE=error, or stopped by abort mode before it ran). */
void fbc_bmod_unrun(const fbc_bmod *b);
/* The census begins now (an attach): the counters of every backend bound so far are its
 * window's start. */
void fbc_backends_window(void);
/* Every op the backends counted, native, fallen back or host-resident: what moves when the
 * process uses a backend at all. */
uint64_t fbc_backends_work(void);
/* 0 prepare (takes the table's lock), 1 parent and child after it, 2 anew. */
void fbc_backends_fork(int phase);

#endif
