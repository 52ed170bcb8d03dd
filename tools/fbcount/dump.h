/* dump.h - reading one census dump (schema fbcount/1, interpose/dump-format.md).
 *
 * The reader validates the whole document up front so that every later stage can trust
 * it: a dump that loads has every required field with the right type and every count in
 * [0, 2^53]. Rows are plain records owned by the dump; they live until fbd_free().
 */
#ifndef FBCOUNT_DUMP_H
#define FBCOUNT_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

typedef struct fbd_dump fbd_dump;

/* Why a load failed; the values double as the command's exit codes. */
typedef enum { FBD_OK = 0, FBD_EREAD = 3, FBD_EINVALID = 4 } fbd_status;

/* Largest dump the reader accepts, so a hostile file cannot exhaust memory. */
#define FBD_MAX_FILE_BYTES ((size_t)256 << 20)
/* Counts and byte totals are JSON numbers; above 2^53 they are no longer exact. */
#define FBD_MAX_COUNT (UINT64_C(1) << 53)

typedef enum { FBD_FALLBACK = 0, FBD_HOST = 1 } fbd_kind;

typedef struct {
    const char *site, *file, *module; /* file and module may be NULL */
    long line;                        /* 0 when unknown */
    uint64_t count, bytes;
} fbd_site;

typedef struct {
    const char *dtype;
    const int64_t *dims;
    size_t ndims;
    uint64_t count;
} fbd_shape;

typedef struct {
    const char *op;
    uint64_t count, bytes, max_bytes;
    const fbd_shape *shapes;
    size_t nshapes;
    const fbd_site *sites;
    size_t nsites;
} fbd_op;

typedef struct {
    const char *symbol, *module, *file; /* NULL when absent */
    uint64_t ip, offset;
    bool has_ip, has_offset;
    long line;
} fbd_frame;

typedef struct {
    fbd_kind kind;
    const char *op, *site;
    uint64_t count, bytes, max_bytes;
    const fbd_frame *frames; /* innermost first */
    size_t nframes;
} fbd_stack;

typedef struct {
    const char *path, *build_id; /* build_id may be NULL */
    uint64_t base, size;
} fbd_module;

typedef struct {
    uint64_t fallbacks, bytes, max_bytes, host_ops, host_bytes;
} fbd_total;

typedef struct {
    bool present;
    uint64_t native, fallback, host;
} fbd_backend;

/* Load and validate the dump at path. On failure returns NULL, sets *st, and writes one
 * line naming the file and the problem ("dump.json: line 3: ...") into err. */
fbd_dump *fbd_load_file(const char *path, fbd_status *st, char *err, size_t errlen);

/* Same as fbd_load_file for a dump already in memory; name is used in messages. */
fbd_dump *fbd_load_buffer(const char *buf, size_t len, const char *name, fbd_status *st,
                          char *err, size_t errlen);

void fbd_free(fbd_dump *d);

const char *fbd_path(const fbd_dump *d);
const char *fbd_reason(const fbd_dump *d);
const char *fbd_exe(const fbd_dump *d);
const char *fbd_host(const fbd_dump *d); /* "" when absent */
const char *fbd_time(const fbd_dump *d); /* "" when absent */
int64_t fbd_pid(const fbd_dump *d);
uint64_t fbd_seq(const fbd_dump *d);
int fbd_signal(const fbd_dump *d);       /* 0 unless a crash dump names one */
bool fbd_symbolized(const fbd_dump *d);
fbd_total fbd_totals(const fbd_dump *d);
fbd_backend fbd_backend_stats(const fbd_dump *d);

/* Op prefixes from config.op_prefix; defaults to {"vkt_"} when the dump has none. */
const char *const *fbd_op_prefixes(const fbd_dump *d, size_t *n);

const fbd_op *fbd_ops(const fbd_dump *d, fbd_kind kind, size_t *n);
const fbd_stack *fbd_stacks(const fbd_dump *d, size_t *n);
const fbd_module *fbd_modules(const fbd_dump *d, size_t *n);

/* The validated JSON document, for tools that rewrite a dump (symbolize); owned by d. */
json_t *fbd_json(fbd_dump *d);

#endif
