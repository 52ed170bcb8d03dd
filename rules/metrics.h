/* metrics.h - a census as metrics text for Prometheus: one formatter for the shim's
 * FBCOUNT_METRICS file and the command's `report --format openmetrics`, so a counter read
 * from a live process and one read from its dumps have the same name and labels.
 *
 * The text is Prometheus' text exposition format (version 0.0.4), the form node_exporter's
 * textfile collector and `promtool check metrics` read, ending with "# EOF" as OpenMetrics
 * asks (a comment to the older format). Families, all counters except the gauge:
 *
 *   fbcount_fallbacks_total          fallbacks (host_result calls)         per op and site
 *   fbcount_fallback_bytes_total     bytes of their results                per op and site
 *   fbcount_fallback_seconds_total   their wall time                       per op and site
 *   fbcount_host_ops_total           host-resident ops (host_resident_op)  per op and site
 *   fbcount_host_op_bytes_total      bytes of their results                per op and site
 *   fbcount_host_op_seconds_total    their wall time                       per op and site
 *   fbcount_transfers_total          copies of tensors between devices     per op and site
 *   fbcount_transfer_bytes_total     bytes they moved                      per op and site
 *   fbcount_transfer_seconds_total   their wall time                       per op and site
 *   fbcount_splits_total             host splits of a scheduler's graph    per split and site
 *                                    (ggml's CPU splits, named by their nodes)
 *   fbcount_split_bytes_total        bytes their nodes wrote               per split and site
 *   fbcount_split_seconds_total      their wall time                       per split and site
 *   fbcount_backend_ops_total        a backend's own op counters  per process and backend,
 *                                    path=native|fallback|host
 *   fbcount_native_share             share of ops that ran natively, 0..1  per process, backend
 *
 * Labels, in this order: backend (of the row; "vkt" where the caller names none), op, site,
 * file, line (where known), then the process's pid, rank (when it has one), host (when
 * known), exe (its base name). A backend that times whole splits, not their nodes (ggml), has
 * no seconds sample for its fallbacks and host-resident ops: their time is in the split
 * family. Label values are escaped as the format asks (\\, \", \n) and
 * bytes that are not UTF-8 become U+FFFD. Seconds families appear only for processes whose
 * census carries times; a row whose bytes its backend could not read is left out of the
 * bytes family (a 0 there would claim nothing moved); families without a sample are left out.
 * Rows with equal labels are added up, so every series appears once.
 *
 * Nothing here uses stdio or locks: the shim calls it from its dumper thread, and every byte
 * leaves through the caller's write function. It allocates one index array per call.
 */
#ifndef FBR_METRICS_H
#define FBR_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    FBR_METRICS_FALLBACK = 0,
    FBR_METRICS_HOST = 1,
    FBR_METRICS_TRANSFER = 2,
    FBR_METRICS_SPLIT = 3
} fbr_metrics_kind;

/* One backend's own op counters in a process. */
typedef struct {
    const char *name;
    uint64_t native, fallback, host_ops;
} fbr_metrics_counters;

/* A process whose census the rows come from. */
typedef struct {
    int64_t pid;
    long rank;        /* -1: no rank label */
    const char *host; /* NULL or "": no host label */
    const char *exe;  /* path or name; the label is the base name; NULL: no exe label */
    bool has_time;    /* its rows' ns are measured: write the seconds families */
    bool has_backend; /* libvkt's counters below are known (used when nbackends is 0) */
    uint64_t native, fallback, host_ops;
    const fbr_metrics_counters *backends; /* each backend's counters, where known */
    size_t nbackends;
} fbr_metrics_proc;

/* One op at one site of one process. */
typedef struct {
    size_t proc; /* index into the process array */
    fbr_metrics_kind kind;
    const char *op;   /* NULL reads "(unknown)" */
    const char *site; /* NULL: no site label */
    const char *file; /* NULL: no file label */
    long line;        /* <= 0: no line label */
    uint64_t count, bytes, ns;
} fbr_metrics_row;

/* Where a row's numbers come from, for callers that know: the backend whose exit recorded
 * them (NULL reads "vkt"), and whether it could read sizes (no bytes sample when not). */
typedef struct {
    const char *backend;
    bool bytes_unknown;
    bool split_timed; /* its time is its splits' (ggml's nodes): no seconds sample */
} fbr_metrics_origin;

/* Receives the text in pieces; returns 0, or nonzero to stop (that value is returned). */
typedef int (*fbr_metrics_write_fn)(void *ctx, const char *buf, size_t len);

/* Writes the text for these processes and rows through write(ctx, ...). Rows may come in
 * any order; a row naming a process index out of range is an error (-2) and nothing is
 * written. Returns 0, the write function's nonzero value, or -1 when out of memory. */
int fbr_metrics_format(const fbr_metrics_proc *procs, size_t nprocs, const fbr_metrics_row *rows,
                       size_t nrows, fbr_metrics_write_fn write, void *ctx);

/* fbr_metrics_format with each row's origin: origins[i] belongs to rows[i] (NULL: every row
 * is libvkt's, with sizes known). */
int fbr_metrics_format_from(const fbr_metrics_proc *procs, size_t nprocs,
                            const fbr_metrics_row *rows, const fbr_metrics_origin *origins,
                            size_t nrows, fbr_metrics_write_fn write, void *ctx);

#endif
