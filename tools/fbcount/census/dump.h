/* dump.h - reading one census dump (schema fbcount/1, interpose/dump-format.md).
 *
 * The reader validates the whole document up front so that every later stage can trust
 * it: a dump that loads has every required field with the right type and every count in
 * [0, 2^53]. It streams the stacks, the bulk of a large dump, one at a time and interns
 * their frames and strings, so its memory follows the distinct frames, not the file.
 * Rows are plain records owned by the dump; they live until fbd_free().
 */
#ifndef FBCOUNT_DUMP_H
#define FBCOUNT_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

typedef struct fbd_dump fbd_dump;

/* Why a load failed: the file cannot be read, it is not a valid dump, or memory ran out
 * (the command maps each to its exit code, cli.h). */
typedef enum { FBD_OK = 0, FBD_EREAD, FBD_EINVALID, FBD_ENOMEM } fbd_status;

/* Largest dump the reader accepts. The file is read whole, then its stacks are streamed
 * out of it, so this bounds the reader's memory to about the file plus its distinct
 * frames; the shim's dumps stay far below it. */
#define FBD_MAX_FILE_BYTES ((size_t)2 << 30)
/* Counts and byte totals are JSON numbers; above 2^53 they are no longer exact. */
#define FBD_MAX_COUNT (UINT64_C(1) << 53)

/* What a recorded call was: a fallback, host-resident work, bytes that crossed between
 * devices (a transfer), or a split of a scheduler's graph computed on the host (ggml: named
 * by its nodes, timed as a whole). Each kind has its rows (ops, host_ops, transfers,
 * splits) and its tables. */
typedef enum {
    FBD_FALLBACK = 0,
    FBD_HOST = 1,
    FBD_TRANSFER = 2,
    FBD_SPLIT = 3,
    FBD_NKINDS
} fbd_kind;

typedef struct {
    const char *site, *file, *module; /* file and module may be NULL */
    long line;                        /* 0 when unknown */
    bool python;                      /* a Python site: file and line are the script's */
    const char *origin;               /* "backward", "thread": where a thread's work came from */
    const char *inlined_in;           /* the functions the site is inlined in, or NULL */
    const char *node, *forward;       /* a backward's node and its forward's site, or NULL */
    uint64_t count, bytes, ns;
    uint64_t max_bytes, max_ns; /* 0 in dumps from before they were written */
} fbd_site;

typedef struct {
    const char *dtype;
    const int64_t *dims;
    size_t ndims;
    uint64_t count;
    uint64_t bytes; /* the bytes of the calls of this shape, by the ops' rule */
    bool has_bytes; /* false in dumps from before shapes carried them */
} fbd_shape;

/* backend is the backend whose exit recorded a row or stack ("vkt" where the dump does not
 * say); bytes_known is false for a backend that cannot read sizes: its bytes are 0 and
 * mean "unknown"; split_timed is true where the backend times whole splits, never a node
 * (ggml's fallbacks and host-resident ops): ns is 0, the time is in the splits' rows. */
typedef struct {
    const char *op, *backend;
    uint64_t count, bytes, max_bytes, ns, max_ns;
    bool bytes_known, split_timed;
    const fbd_shape *shapes;
    size_t nshapes;
    const fbd_site *sites;
    size_t nsites;
} fbd_op;

/* A frame, interned: equal frames of one dump are one record. Python frames carry symbol,
 * file and line only; inlined frames share the ip of the frame they were inlined into. */
typedef struct {
    const char *symbol, *module, *file; /* NULL when absent */
    uint64_t ip, offset;
    long line;
    bool has_ip, has_offset, inlined, python;
} fbd_frame;

typedef struct {
    fbd_kind kind;
    const char *op, *site, *backend;
    /* The site's file and line and where it came from (FBR_ORIGIN), as the shim attributed
     * it; NULL and 0 in dumps that do not say (found again from the frames). */
    const char *site_file, *origin;
    const char *site_inlined_in; /* the functions the site is inlined in (FBR_INLINED_IN) */
    const char *node, *forward;  /* a backward's node and its forward's site (FBR_NODE) */
    long site_line;
    bool site_python;
    uint64_t count, bytes, max_bytes, ns, max_ns;
    bool bytes_known, split_timed;
    const fbd_frame *const *frames; /* innermost first */
    size_t nframes;
} fbd_stack;

typedef struct {
    const char *path, *build_id; /* build_id may be NULL */
    uint64_t base, size;
} fbd_module;

/* The dump's totals. unknown[kind]: calls of that kind whose bytes the backend could not
 * read (summed from its rows), counted in the totals with 0 bytes. */
typedef struct {
    uint64_t fallbacks, bytes, max_bytes, host_ops, host_bytes, ns, host_ns;
    uint64_t transfers, transfer_bytes, transfer_ns;
    uint64_t splits, split_bytes, split_ns;
    uint64_t unknown[FBD_NKINDS];
} fbd_total;

/* A backend's own op counters: libvkt's (the top-level "backend"), or a backends[] row's. */
typedef struct {
    bool present;
    uint64_t native, fallback, host;
} fbd_counters;

/* A backend seen in the process (backends[]): its name, where its description came from
 * ("builtin", "file", "declared"), its native modules, its counters, and for a row not built
 * in, the row as descriptor text (rules/backend.h). */
typedef struct {
    const char *name, *source, *descriptor; /* source and descriptor NULL when absent */
    const char *const *modules;
    size_t nmodules;
    fbd_counters counters;
} fbd_backend;

/* Who wrote the dump. id is the census id (a process image), NULL in older dumps. */
typedef struct {
    int64_t pid;
    const char *exe, *host, *id, *parent_id, *start_time; /* host "" when absent; others NULL */
    const char *argv0; /* the program as invoked (argv[0]; NULL when absent) */
    long rank;         /* -1 when absent */
    uint64_t elapsed_ns;
    bool has_elapsed;
} fbd_process;

/* Load and validate the dump at path (a regular file, read without blocking; see
 * rules/readfile.h). On failure returns NULL, sets *st, and writes one line naming the
 * file and the problem ("dump.json: line 3: ...") into err. */
fbd_dump *fbd_load_file(const char *path, fbd_status *st, char *err, size_t errlen);

/* Same as fbd_load_file for a dump already in memory; name is used in messages. */
fbd_dump *fbd_load_buffer(const char *buf, size_t len, const char *name, fbd_status *st, char *err,
                          size_t errlen);

void fbd_free(fbd_dump *d);

const char *fbd_path(const fbd_dump *d);
const char *fbd_reason(const fbd_dump *d);
const char *fbd_exe(const fbd_dump *d);
const char *fbd_host(const fbd_dump *d); /* "" when absent */
const char *fbd_time(const fbd_dump *d); /* "" when absent */
/* When an attached census began counting (UTC), NULL for a census that began with its
 * process. */
const char *fbd_attached_at(const fbd_dump *d);
int64_t fbd_pid(const fbd_dump *d);
uint64_t fbd_seq(const fbd_dump *d);
const fbd_process *fbd_proc(const fbd_dump *d);
/* The signal of a signal or crash dump (0 when none), and its name ("SIGTERM"; the
 * dump's signal_name when present, else derived from the number). */
int fbd_signal(const fbd_dump *d);
const char *fbd_signal_name(const fbd_dump *d);
bool fbd_symbolized(const fbd_dump *d);
fbd_total fbd_totals(const fbd_dump *d);
/* libvkt's counters, the top-level "backend" (present false when the dump has none). */
fbd_counters fbd_backend_stats(const fbd_dump *d);
/* The backends[] rows; none in dumps of shims that knew libvkt only. */
const fbd_backend *fbd_backends(const fbd_dump *d, size_t *n);
/* config.py_backend: the Python packages that count as the backend's (default {"vkt"}). */
const char *const *fbd_py_backends(const fbd_dump *d, size_t *n);
/* Whether the dump carries times (total.ns; absent in dumps of older shims), and what they
 * measure: config.timing, "fallback" or "host_result", NULL when not said. */
bool fbd_has_time(const fbd_dump *d);
const char *fbd_timing(const fbd_dump *d);

/* Op prefixes from config.op_prefix; defaults to {"vkt_"} when the dump has none. */
const char *const *fbd_op_prefixes(const fbd_dump *d, size_t *n);

const fbd_op *fbd_ops(const fbd_dump *d, fbd_kind kind, size_t *n);
const fbd_stack *fbd_stacks(const fbd_dump *d, size_t *n);
const fbd_module *fbd_modules(const fbd_dump *d, size_t *n);

/* The validated top level without its stacks (they were streamed, not kept); owned by d. */
json_t *fbd_json(fbd_dump *d);

#endif
