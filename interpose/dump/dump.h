/* dump.h - a census made readable: names for addresses (symbolize.c), attribution to an op
 * and a site (rules/attrib.h), the attributed report (report.c), and the fbcount/1 files:
 * the full dump (write.c), the emergency dump a fatal signal writes (emergency.c) and the
 * exit summary (summary.c). Uses record/ and base/; never called from the counting path or
 * from a signal handler, except emergency.c. */
#ifndef FBC_DUMP_H
#define FBC_DUMP_H

#include <stdio.h>

#include "record.h"
#include "dwname.h"     /* rules/: inline chains and the cache of named frames */
#include "symbolizer.h" /* rules/: the debug-information policies */

/* ---- symbolize.c: names for addresses -------------------------------------------------- */
typedef struct {
    const char *symbol; /* NULL when unknown */
    const char *file;   /* absolute where the compilation directory is known */
    int line;
    long module; /* fbc_modmap index or -1 */
    uintptr_t offset;
    bool inlined; /* a function inlined into the next frame of its chain */
} fbc_frame_info;

/* The core's longest chain (rules/dwname.h): the same for an address live or afterwards. */
#define FBC_MAX_INLINE FBR_MAX_CHAIN

typedef struct {
    const char *op, *site; /* never NULL: "(unknown)" */
    const char *site_file, *site_module;
    int site_line;
    const char *site_inlined_in; /* the user's functions the site is inlined in (FBR_INLINED_IN);
                                    NULL for none */
    bool site_python;            /* the site is a line of Python code */
    int origin;                  /* fbc_origin_kind: the site is where the work came from */
    const char *node, *forward;  /* a backward's node and its forward's site (FBR_NODE) */
    long site_frame;             /* the site's native frame, in the origin's stack where
                                    origin is set, else in the entry's; -1 for none */
    const fbc_bmod *backend;     /* the backend whose exit recorded the stack (NULL: unknown) */
} fbc_attrib;

/* The debug-information policy the shim names frames by (rules/symbolizer.h), written into
 * every dump whose frames it named. */
extern const fbr_debuginfo fbc_debuginfo;

/* Callers hold fbc_sym_lock; the strings live as long as the process. first: the innermost
 * frame, looked up as is (the others at ip - 1, inside the call). */
void fbc_symbolize(uintptr_t ip, bool first, fbc_frame_info *out);
/* Adds file:line to a frame (a line table can take 0.4 s to load: only where needed). */
void fbc_symbolize_line(uintptr_t ip, bool first, fbc_frame_info *out);
/* A C++ name as it was written, by the demangler of the C++ runtime the program has loaded
 * (a C program has no C++ names, and needs none); name itself otherwise. free() the result
 * when it differs from name. */
const char *fbc_demangle(const char *name);
/* The frames at ip, innermost first: the functions inlined there (each at its line), then
 * the function the symbol table names (at the line that called the innermost). Fills at
 * most max; returns how many (1 where nothing was inlined). */
int fbc_symbolize_chain(uintptr_t ip, bool first, fbc_frame_info *out, int max);
/* Attributes entry e by its backend's row (rules/backend.h), naming its frames only as far as
 * needed; infos has room for e->nframes. Returns how many leading infos were filled. */
unsigned fbc_attribute(const fbc_entry *e, fbc_frame_info *infos, fbc_attrib *out);
/* The row e was recorded under; libvkt's for a stack of no known backend. */
const fbr_backend *fbc_entry_row(const fbc_entry *e);
extern pthread_mutex_t fbc_sym_lock;

/* ---- framecache.c: each distinct frame's JSON, formatted once per dump ----------------- */
typedef struct fbc_framecache fbc_framecache;
fbc_framecache *fbc_fc_new(void); /* NULL when out of memory */
void fbc_fc_free(fbc_framecache *c);
/* Whether the frame at ip of stack e is named in full (its inline chain, each function at
 * its line): the program's own code, not the backend's (its row's modules, the module
 * whose exit recorded e and a plugin of the backend's that called that exit), the
 * interpreter's or the system's runtime, whose frames are named by their symbol tables. */
bool fbc_fc_full(const fbc_entry *e, uintptr_t ip);
/* The index of the first frame object of ip (a frame of stack e) in the dump's frame table,
 * naming it (fbc_fc_full) and formatting it the first time (taking fbc_sym_lock); *count
 * frames follow from there (an inlined chain). -1 when out of memory. */
long fbc_fc_index(fbc_framecache *c, const fbc_entry *e, uintptr_t ip, bool first, uint32_t *count);
/* Names e's frames ahead of a dump, as a dump will need them. */
void fbc_fc_warm(const fbc_entry *e);
/* The same for a Python frame (one entry). */
long fbc_fc_python(fbc_framecache *c, const fbc_pyframe *f);
/* Whether the frame at index is CPython's evaluation loop (_PyEval_EvalFrameDefault), in
 * whose place a stack's Python frames are merged. */
bool fbc_fc_is_eval(const fbc_framecache *c, long index);
/* The frame table's JSON array text, in index order; NULL when out of memory. */
const char *fbc_fc_text(fbc_framecache *c, size_t *len);

/* ---- report.c: a census symbolized and attributed ---------------------------------- */
typedef struct {
    const char *site, *file, *module;
    int line;
    bool python;
    uint64_t count, bytes, ns, max_bytes, max_ns;
    int origin; /* fbc_origin_kind: where the work of a thread with no user's frame came from */
    const char *inlined_in;     /* the functions the site is inlined in (FBR_INLINED_IN), or NULL */
    const char *node, *forward; /* a backward's node and its forward's site, or NULL */
} fbc_rsite;

/* A result shape of an op's, with the backend whose accessors read it (its dtype's name). */
typedef struct {
    fbc_shape s;
    const fbc_bmod *backend;
} fbc_rshape;

typedef struct fbc_rop {
    UT_hash_handle hh;
    const char *op;
    const fbc_bmod *backend; /* with op, the row's key: one op of two backends is two rows */
    uint64_t count, bytes, max_bytes, ns, max_ns;
    fbc_rsite *sites;
    size_t nsites;
    fbc_rshape *shapes;
    size_t nshapes;
} fbc_rop;

typedef struct {
    const fbc_entry *e; /* frames are immutable; counts below are the copy taken under the lock */
    uint64_t born;      /* the earliest of its copies' (two threads may each have recorded it) */
    uint64_t count, bytes, max_bytes, ns, max_ns;
    fbc_shape *shapes;
    size_t nshapes;
    fbc_attrib a;
} fbc_rstack;

/* A backend's own op counters (its stats accessor), read when the census was copied. */
typedef struct {
    bool has;
    uint64_t native, fallback, host;
} fbc_counters;

typedef struct fbc_report {
    fbc_rstack *stacks;
    size_t nstacks;
    long first; /* the stack of the first fallback counted, -1 for none */
    fbc_rop *ophash[FBC_KINDS];
    fbc_rop **ops[FBC_KINDS]; /* sorted by bytes, then count */
    size_t nops[FBC_KINDS];
    uint64_t total[FBC_KINDS], bytes[FBC_KINDS], max[FBC_KINDS], ns[FBC_KINDS];
    bool has_backend; /* some backend's counters were read: their sums below */
    uint64_t native, fallback, host;
    fbc_counters counters[FBC_MAX_BMODS]; /* each backend's, by fbc_bmod index */
} fbc_report;

/* The report of one table the caller owns (a scope). NULL when out of memory. */
fbc_report *fbc_report_build(const fbc_table *t);
/* The report of the process census, every shard merged. patient: wait for each shard's lock
 * (false: a shard whose lock stays held for 50 ms, e.g. by a thread a termination signal
 * interrupted mid-event, is copied without it, shapes left out). */
fbc_report *fbc_report_build_process(bool patient);
void fbc_report_free(fbc_report *r);
/* The count (or bytes) of op's rows of kind k, summed over the backends that have it; op may
 * be a short name ("dot" for "vkt_dot", rules/opname.h). */
uint64_t fbc_report_op(const fbc_report *r, fbc_kind k, const char *op, bool bytes);
/* Whether the stacks of a backend carry known sizes (a declared exit's do not). */
bool fbc_report_sizes(const fbc_bmod *b);
/* Whether events of kind k of a backend carry no time of their own, their split's being
 * their time (ggml's nodes: the backend times whole splits). */
bool fbc_report_split_timed(const fbc_bmod *b, fbc_kind k);
/* The ops and their sites as text, "indent" before every line; top > 0 limits the ops. */
void fbc_report_text(const fbc_report *r, FILE *out, const char *indent, int top);
/* A site as people read it (rules/attrib.h's fbr_site_text): "train_step (lenet.c:187)"; one a
 * thread's work came from, "from backward() at <module> (train.py:37)", "EluBackward0 of layer
 * (model.py:20), from backward() at ..." or "thread started at main (app.cc:12)". */
void fbc_site_text(const fbc_rsite *s, char *out, size_t cap);
/* A site's members after its name, as every site of a census is written: ,"file","line"
 * (where known), ,"inlined_in" (where inlined), ,"python":true, ,"origin" (fbc_origin_kind,
 * 0 for none), ,"node" and ,"forward" (where known). */
void fbc_site_fields(fbc_writer *w, const char *file, int line, const char *inlined_in, bool python,
                     int origin, const char *node, const char *forward);
/* r's "total", "ops" and "host_ops" members as the dump has them (comma-separated, no
 * braces around them); shapes: with each op's result shapes. */
void fbc_report_json(fbc_writer *w, const fbc_report *r, bool shapes);

/* ---- write.c: the fbcount/1 dump of the process census ---------------------------- */
/* The fallback an abort stopped the program at (FBCOUNT_MODE=abort, or error without an error
 * path), written into the census as typed fields. */
typedef struct {
    const char *op, *site, *file; /* file NULL when unknown */
    int line;
    const char *backend; /* NULL when unknown */
} fbc_abort;

typedef struct {
    const char *reason;     /* FBR_REASON_* */
    const char *path;       /* an explicit file (fbcount_dump), or NULL for the template's */
    const char *extra_json; /* inserted after the totals, e.g. ",\"exec\":true" */
    const fbc_abort *abort; /* the abort dump's record, or NULL */
    int signal;             /* a signal dump's signal, or 0 */
    bool checkpoint;        /* write the checkpoint file, replacing the last one */
    bool always;            /* even in a process that never used a backend (fbcount_dump) */
    bool patient;           /* see fbc_report_build_process */
    /* A final state: the raw census is written first and then replaced by the named one, so
     * a process killed while its frames are named (an MPI launcher ending every rank) still
     * leaves its census. */
    bool raw_first;
    void (*after_raw)(void); /* called once the raw census is written (or could not be) */
    uint64_t started_ns;     /* when the final dump began (CLOCK_MONOTONIC), for raw_census_ns */
} fbc_dump_req;

/* Writes a dump of the process census. Returns 0 or -1 (with a warning on stderr). keep:
 * when not NULL, receives the report (free it), and written the path (cap bytes). */
int fbc_dump_write(const fbc_dump_req *req, fbc_report **keep, char *written, size_t cap);
/* Removes the checkpoint file once a final dump supersedes it. */
void fbc_dump_drop_checkpoint(void);
extern pthread_mutex_t fbc_dump_lock;
/* The parts every dump has before its census, and the module list: shared with the
 * emergency dump, so async-signal-safe. */
void fbc_dump_head(fbc_writer *w, const char *reason, int seq);
void fbc_dump_modules(fbc_writer *w);

/* ---- emergency.c: the raw census, and the dump a fatal signal writes from its handler -- */
/* The whole raw census document into w (reason, signal when not 0, dump number seq): every
 * recorded stack as raw frames (module + offset, "symbolized": false), without a lock or an
 * allocation. Async-signal-safe. */
void fbc_dump_raw(fbc_writer *w, const char *reason, int sig, int seq);
/* The raw census as a file of its own (the template's next name, static buffers): its path,
 * or NULL when none was written. Async-signal-safe; one writer at a time (the caller's). */
const char *fbc_dump_raw_file(const char *reason, int sig);
/* The crash dump: the raw census, from a fatal signal's handler. Writes one line on stderr
 * naming the file. */
void fbc_dump_emergency(int sig);

/* ---- metrics.c: FBCOUNT_METRICS ----------------------------------------------------- */
/* Rewrites the metrics file (when FBCOUNT_METRICS names one) from r. */
void fbc_metrics_write(const fbc_report *r);

/* ---- summary.c: the lines a final dump prints on stderr ---------------------------- */
void fbc_dump_summary(const fbc_report *r, const char *path, int signal);

#endif
