/* vkt.h — libvkt: tensors whose ops run as Vulkan compute shaders, with a host
 * reference backend behind every op.
 *
 * Conventions
 *  - Every function that can fail returns an int status: VKT_OK (0) or a negative
 *    vkt_status; vkt_last_error() then holds a one-line message for this thread.
 *  - Ops allocate their result: `vkt_tensor **out` receives a new tensor that the
 *    caller releases with vkt_tensor_free(). On error *out is set to NULL.
 *  - Tensors are row-major, rank 0 to VKT_MAX_RANK, dtypes f32, f64, s32, u8.
 *  - Ops run natively when their gate admits the inputs; otherwise the host
 *    reference computes the result and hands it to host_result() (the fallback exit,
 *    see vkt(3), RESIDENCY AND FALLBACKS). Inputs that are already host-resident run on the host
 *    and are reported through host_resident_op(). Results are identical either way.
 *  - Nx semantics where in doubt (names, type promotion, reduction and dot rules).
 */
#ifndef VKT_H
#define VKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VKT_API __attribute__((visibility("default")))
#define VKT_MAX_RANK 6
/* Pass as the axis of argmax/argmin to reduce over the flattened tensor. */
#define VKT_ALL_AXES (-1000)

typedef struct vkt_ctx vkt_ctx;
typedef struct vkt_tensor vkt_tensor;

typedef enum vkt_dtype { VKT_F32 = 0, VKT_F64 = 1, VKT_S32 = 2, VKT_U8 = 3 } vkt_dtype;
#define VKT_NUM_DTYPES 4

/* The status codes, as X(name, value): the enum and vkt_status_name() are both
 * made from this list, so a new code cannot lack its name.
 *   VKT_EINVAL  bad argument: NULL pointer, bad flag, bad option value
 *   VKT_ESHAPE  shapes do not fit the op (rank, sizes, broadcasting)
 *   VKT_EAXIS   an axis or permutation is out of range or repeated
 *   VKT_EDTYPE  the op is not defined for this dtype
 *   VKT_ENOMEM  host or device memory exhausted
 *   VKT_ENODEV  no Vulkan device could be opened
 *   VKT_EDEVICE a Vulkan call failed (device lost, driver error)
 *   VKT_ECTX    tensors from different contexts mixed in one op
 *   VKT_EGRAPH  not allowed in a graph recording, or a graph misused
 *   VKT_EREFUSED the host_result exit refused a fallback: an interposer such
 *               as libfbcount in FBCOUNT_MODE=error; the op fails with it */
// clang-format off
#define VKT_STATUSES(X)                                                                          \
    X(VKT_OK, 0) X(VKT_EINVAL, -1) X(VKT_ESHAPE, -2) X(VKT_EAXIS, -3) X(VKT_EDTYPE, -4)          \
    X(VKT_ENOMEM, -5) X(VKT_ENODEV, -6) X(VKT_EDEVICE, -7) X(VKT_ECTX, -8) X(VKT_EGRAPH, -9)    \
    X(VKT_EREFUSED, -10)
// clang-format on

#define VKT_STATUS_ENUM(name, value) name = value,
typedef enum vkt_status { VKT_STATUSES(VKT_STATUS_ENUM) } vkt_status;
#undef VKT_STATUS_ENUM

typedef enum vkt_residency { VKT_DEVICE = 0, VKT_HOST = 1 } vkt_residency;

/* ---- errors ------------------------------------------------------------- */

/* Message describing the last failure on the calling thread ("" if none).
 * Valid until the next libvkt call on this thread. */
VKT_API const char *vkt_last_error(void);
/* Static name of a status code, e.g. "VKT_ESHAPE". */
VKT_API const char *vkt_status_name(int status);

/* ---- context ------------------------------------------------------------ */

/* Opens a Vulkan device and a compute queue. `device` selects one by index or
 * by a case-insensitive substring of its name; NULL uses $VKT_DEVICE, else the
 * best device (discrete > integrated > virtual > CPU). Reads VKT_FALLBACK_RESULT,
 * VKT_NATIVE_DISABLE, VKT_DOT_KERNEL and VKT_CONV_KERNEL from the environment;
 * a name in them that is no op or kernel is named in one warning per process
 * (standard error) and ignored. */
VKT_API int vkt_ctx_create(const char *device, vkt_ctx **out);
/* Waits for pending work and releases the context. Tensors must be freed first. */
VKT_API void vkt_ctx_destroy(vkt_ctx *ctx);
/* Name of the selected physical device (e.g. "llvmpipe (LLVM 15...)"). */
VKT_API const char *vkt_ctx_device_name(const vkt_ctx *ctx);
/* The largest tensor in bytes a native kernel can bind: the device's
 * maxStorageBufferRange (128 MiB on lavapipe, 4 GiB on an H200). Ops on
 * larger tensors fall back. 0 when ctx is NULL. */
VKT_API uint64_t vkt_ctx_max_tensor_bytes(const vkt_ctx *ctx);
/* 1 when this device's f32 arithmetic flushes subnormal inputs and results to
 * zero (Vulkan allows it, and the H200's driver does it with no way to ask
 * otherwise), 0 when it keeps them, or a negative error code. Measured once,
 * by one small dispatch. Comparisons, min/max, negate, abs, sign and widening
 * to f64 are exact on subnormals either way. */
VKT_API int vkt_ctx_flushes_subnormals(vkt_ctx *ctx);
/* Submits recorded work and waits for it: a sync point. */
VKT_API int vkt_sync(vkt_ctx *ctx);
/* GPU time in nanoseconds of the last submission (Vulkan timestamp queries
 * around the whole command buffer), or -1 where the queue has no timestamps. */
VKT_API double vkt_ctx_last_gpu_ns(const vkt_ctx *ctx);
/* Forces the named ops (comma-separated public names without the prefix, e.g.
 * "dot,sum", or "all", or "" for none) down the fallback path, as
 * VKT_NATIVE_DISABLE does. A name that is no op's (vkt_op_name) is VKT_EINVAL,
 * and the setting stays as it was. */
VKT_API int vkt_ctx_set_native_disable(vkt_ctx *ctx, const char *ops);
/* Where a fallback's result goes: VKT_DEVICE (upload, the default) or VKT_HOST
 * (leave it host-resident), as VKT_FALLBACK_RESULT=device|host does. */
VKT_API int vkt_ctx_set_fallback_result(vkt_ctx *ctx, vkt_residency where);

/* One dispatch's GPU time, from Vulkan timestamps: the public op whose native
 * path recorded it (NULL for libvkt's own work; for a dispatch a graph fused
 * from several ops, the op whose result it writes) and the kernel's name. */
typedef struct vkt_profile_entry {
    const char *op;
    const char *kernel;
    double gpu_ns;
} vkt_profile_entry;

/* Turns per-dispatch timing on or off. While on, every dispatch runs alone
 * (behind a barrier) so its time is its own, and completed submissions and
 * graph launches collect one entry per dispatch. A no-op where the queue has
 * no timestamps (vkt_ctx_last_gpu_ns is then -1). */
VKT_API int vkt_ctx_set_profiling(vkt_ctx *ctx, bool on);
/* Returns how many entries are collected, and moves the oldest min(that,
 * cap) of them into `entries` (which may be NULL when cap is 0: a count). */
VKT_API size_t vkt_profile_read(vkt_ctx *ctx, vkt_profile_entry *entries, size_t cap);

/* ---- recorded steps (graphs) --------------------------------------------- */

/* A graph is a recorded sequence of ops, replayed with one submission: the
 * Vulkan counterpart of a CUDA graph. The tensors are bound when recorded:
 * each launch reads and writes the same storage, so new inputs are written
 * into the bound tensors (vkt_tensor_write) and state that a step updates is
 * updated in place (vkt_assign), as with a CUDA graph's static inputs.
 *
 * When the recording ends, a result that one dispatch writes and only one
 * reads (a tensor freed during the recording) is fused away, computing
 * exactly what the ops compute apart: f32 elementwise chains run in one
 * dispatch, an elementwise op runs in the store of the product, convolution,
 * reduction or pooling gradient it reads, a reduction computes the
 * elementwise op that makes its input, and a product's transpose is the
 * product; and the dispatches run in dependency levels, one barrier between
 * levels.
 *
 * Only native work is recorded. An op that would fall back or run on the host
 * fails with VKT_EGRAPH, naming the op and the gate, and so does a read to the
 * host, a write or a sync: the census stays complete, since a graph can hold
 * no fallback to replay unseen. Tensors made during the recording are
 * constants of the graph; the graph keeps the memory of tensors freed during
 * the recording (its intermediates). */
typedef struct vkt_graph vkt_graph;

/* Submits pending work (a sync point), then records the ops called on ctx
 * until vkt_graph_end instead of running them. One recording at a time. */
VKT_API int vkt_graph_begin(vkt_ctx *ctx);
/* Ends the recording. *out receives the graph, or NULL and the error of the
 * first call that failed or was refused during the recording (a read, write,
 * sync or move: the graph would lack it). */
VKT_API int vkt_graph_end(vkt_ctx *ctx, vkt_graph **out);
/* Runs the graph: pending work and the graph in one submission, then waits
 * (a sync point). Counts the recorded ops in vkt_stats as native again. Fails
 * with VKT_EGRAPH when a tensor bound at recording has been freed since, or
 * while a recording is open. */
VKT_API int vkt_graph_launch(vkt_graph *g);
/* Number of dispatches the graph replays. */
VKT_API size_t vkt_graph_dispatches(const vkt_graph *g);
/* Number of dependency levels its commands run in: a launch runs each level's
 * dispatches and copies together, with one barrier between levels, so this is
 * the longest chain of commands that each need the one before. */
VKT_API size_t vkt_graph_levels(const vkt_graph *g);
/* Releases the graph (NULL is ignored), and the memory it kept. Free graphs
 * before their context. */
VKT_API void vkt_graph_free(vkt_graph *g);

/* ---- tensors ------------------------------------------------------------ */

/* Size in bytes of one element of `dtype` (0 for an invalid dtype). */
VKT_API size_t vkt_dtype_size(vkt_dtype dtype);
/* Short name of a dtype: "f32", "f64", "s32", "u8" (NULL for an invalid one). */
VKT_API const char *vkt_dtype_name(vkt_dtype dtype);

/* New DEVICE tensor holding a copy of `data` (numel * dtype size bytes, row-major;
 * may be NULL only when the tensor has no elements). */
VKT_API int vkt_tensor_from_host(vkt_ctx *ctx, vkt_dtype dtype, const int64_t *shape, int rank,
                                 const void *data, vkt_tensor **out);
/* New DEVICE tensor filled with zeros. */
VKT_API int vkt_zeros(vkt_ctx *ctx, vkt_dtype dtype, const int64_t *shape, int rank,
                      vkt_tensor **out);
/* New DEVICE tensor filled with `value` converted to dtype. */
VKT_API int vkt_full(vkt_ctx *ctx, vkt_dtype dtype, const int64_t *shape, int rank, double value,
                     vkt_tensor **out);
/* New DEVICE tensor counting up along `axis` (Nx.iota); VKT_ALL_AXES counts over
 * the flattened tensor. */
VKT_API int vkt_iota(vkt_ctx *ctx, vkt_dtype dtype, const int64_t *shape, int rank, int axis,
                     vkt_tensor **out);
/* Copies the tensor's elements to `dst` (nbytes must equal vkt_tensor_nbytes):
 * a sync point for a DEVICE tensor. */
VKT_API int vkt_tensor_read(const vkt_tensor *t, void *dst, size_t nbytes);
/* Replaces the tensor's elements with nbytes (= vkt_tensor_nbytes) from
 * `src`, in place: every view of its storage, and every graph bound to it,
 * sees the new values. Ordered after the work recorded before it. */
VKT_API int vkt_tensor_write(vkt_tensor *t, const void *src, size_t nbytes);
/* Moves a tensor's storage to `where` (DEVICE or HOST); views share storage.
 * VKT_EGRAPH while a live graph uses the storage (free the graph first). */
VKT_API int vkt_tensor_move(vkt_tensor *t, vkt_residency where);
/* Releases a tensor (NULL is ignored). Views keep their storage alive. */
VKT_API void vkt_tensor_free(vkt_tensor *t);

VKT_API vkt_dtype vkt_tensor_dtype(const vkt_tensor *t);
VKT_API int vkt_tensor_rank(const vkt_tensor *t);
/* Pointer to the tensor's rank dimensions, valid while the tensor lives. */
VKT_API const int64_t *vkt_tensor_shape(const vkt_tensor *t);
VKT_API size_t vkt_tensor_numel(const vkt_tensor *t);
VKT_API size_t vkt_tensor_nbytes(const vkt_tensor *t);
VKT_API vkt_residency vkt_tensor_residency(const vkt_tensor *t);

/* ---- statistics --------------------------------------------------------- */

/* Per-op counters of how each call ran: natively, through the fallback, or on
 * the host because its inputs were host-resident. */
typedef struct vkt_stats_entry {
    const char *op; /* public name without the prefix, e.g. "dot" */
    uint64_t native;
    uint64_t fallback;
    uint64_t host;
} vkt_stats_entry;

/* Fills up to `cap` entries for the ops that have run (any counter nonzero) and
 * returns how many such ops there are. Process-wide, thread-safe. */
VKT_API size_t vkt_stats(vkt_stats_entry *entries, size_t cap);

/* When the calling thread's current host work began (CLOCK_MONOTONIC, ns): the moment an op
 * was sent down the fallback (before its inputs were downloaded) or began as host-resident
 * work; 0 outside such work. Read from inside host_result and host_resident_op, it gives
 * what the fallback cost in time, downloads and upload included (libfbcount reads it). */
VKT_API uint64_t vkt_fallback_started_ns(void);
/* Zeroes every counter. */
VKT_API void vkt_stats_reset(void);

/* ---- the op support matrix ---------------------------------------------- */

typedef enum vkt_support { VKT_NATIVE = 0, VKT_FALLBACK = 1, VKT_UNDEFINED = 2 } vkt_support;

/* Number of public ops in the support matrix. */
VKT_API size_t vkt_op_count(void);
/* Name of op i (0 <= i < vkt_op_count()), without the prefix. */
VKT_API const char *vkt_op_name(size_t i);
/* How op i runs for inputs of `dtype` under the op's own gate, ignoring sizes
 * past the device limits; `reason` (may be NULL) gets the gate's reason. */
VKT_API vkt_support vkt_op_support(size_t i, vkt_dtype dtype, const char **reason);

/* ---- the fallback exit (a contract: the shim interposes it) ------------- */

/* Makes `data` (nbytes, row-major, out's dtype) the content of `out`: uploads it,
 * or keeps it host-resident when VKT_FALLBACK_RESULT=host. Every fallback path
 * ends in exactly one call to this function. Returns 0 or a negative status;
 * an interposer that refuses the fallback returns VKT_EREFUSED without calling
 * libvkt's, and the op then fails with VKT_EREFUSED, naming itself. */
VKT_API int host_result(vkt_tensor *out, const void *data, size_t nbytes);
/* Called once for every op that ran on the host because its inputs were already
 * host-resident; `out` is the op's result, nbytes its size. */
VKT_API void host_resident_op(const vkt_tensor *out, size_t nbytes);

/* ---- elementwise ops ---------------------------------------------------- */

/* Each elementwise op carries its class, which says what it takes and gives:
 *   ARITH  any dtype; the result keeps the inputs' (merged) dtype
 *   MATH   floating point: integer inputs are converted to f32 first (Nx)
 *   PRED   any dtype; the result is u8 (0 or 1)
 *   INT    integers only
 * libvkt's gates and host reference read the classes from these lists. */
#define VKT_OP_CLASSES(X) X(ARITH) X(MATH) X(PRED) X(INT)

/* Unary ops, X(name, class): out has x's shape. abs, negate and sign keep the
 * dtype; floor, ceil and round are identity on integers. */
// clang-format off
#define VKT_UNARY_OPS(X)                                                                           \
    X(negate, ARITH) X(abs, ARITH) X(sign, ARITH) X(floor, ARITH) X(ceil, ARITH) X(round, ARITH)   \
    X(exp, MATH) X(expm1, MATH) X(log, MATH) X(log1p, MATH) X(sqrt, MATH) X(rsqrt, MATH)           \
    X(cbrt, MATH) X(sin, MATH) X(cos, MATH) X(tan, MATH) X(asin, MATH) X(acos, MATH) X(atan, MATH) \
    X(sinh, MATH) X(cosh, MATH) X(tanh, MATH) X(asinh, MATH) X(acosh, MATH) X(atanh, MATH)         \
    X(sigmoid, MATH) X(erf, MATH) X(erfc, MATH) X(erf_inv, MATH) X(is_nan, PRED)                   \
    X(is_infinity, PRED) X(logical_not, PRED) X(bitwise_not, INT) X(count_leading_zeros, INT)      \
    X(population_count, INT)
// clang-format on

/* Binary ops, X(name, class), with full (numpy/Nx) broadcasting. Arithmetic
 * promotes to the wider dtype (u8 < s32 < f32 < f64); divide and atan2 on
 * integers give f32; comparisons and logical ops give u8; quotient, the bitwise
 * ops and the shifts take integers only. */
// clang-format off
#define VKT_BINARY_OPS(X)                                                                          \
    X(add, ARITH) X(subtract, ARITH) X(multiply, ARITH) X(divide, MATH) X(pow, ARITH)              \
    X(min, ARITH) X(max, ARITH) X(remainder, ARITH) X(atan2, MATH) X(quotient, INT) X(equal, PRED) \
    X(not_equal, PRED) X(less, PRED) X(less_equal, PRED) X(greater, PRED) X(greater_equal, PRED)   \
    X(logical_and, PRED) X(logical_or, PRED) X(logical_xor, PRED) X(bitwise_and, INT)              \
    X(bitwise_or, INT) X(bitwise_xor, INT) X(left_shift, INT) X(right_shift, INT)
// clang-format on

#define VKT_DECLARE_UNARY(name, cls) VKT_API int vkt_##name(const vkt_tensor *x, vkt_tensor **out);
#define VKT_DECLARE_BINARY(name, cls)                                                              \
    VKT_API int vkt_##name(const vkt_tensor *a, const vkt_tensor *b, vkt_tensor **out);
VKT_UNARY_OPS(VKT_DECLARE_UNARY)
VKT_BINARY_OPS(VKT_DECLARE_BINARY)

/* pred ? on_true : on_false elementwise, all three broadcast together; pred is
 * any dtype (nonzero is true); on_true/on_false promote like binary ops. */
VKT_API int vkt_select(const vkt_tensor *pred, const vkt_tensor *on_true,
                       const vkt_tensor *on_false, vkt_tensor **out);
/* min(max(x, lo), hi) elementwise with broadcasting; result has x's dtype. */
VKT_API int vkt_clip(const vkt_tensor *x, const vkt_tensor *lo, const vkt_tensor *hi,
                     vkt_tensor **out);
/* Converts to `dtype` (floats to integers truncate toward zero and saturate; NaN
 * becomes 0; anything nonzero to u8 keeps its low byte, as C does for s32). */
VKT_API int vkt_as_type(const vkt_tensor *x, vkt_dtype dtype, vkt_tensor **out);

/* ---- reductions --------------------------------------------------------- */

/* Reduce over `axes` (naxes entries, negative axes count from the end); axes ==
 * NULL reduces over every axis. keep_axes keeps reduced axes as size 1. sum and
 * product of integers give s32; all/any give u8; max/min keep the dtype. */
#define VKT_REDUCE_OPS(X) X(sum) X(product) X(reduce_max) X(reduce_min) X(all) X(any)
#define VKT_DECLARE_REDUCE(name)                                                                   \
    VKT_API int vkt_##name(const vkt_tensor *x, const int *axes, int naxes, bool keep_axes,        \
                           vkt_tensor **out);
VKT_REDUCE_OPS(VKT_DECLARE_REDUCE)
/* Index (s32) of the first maximum/minimum along `axis`, or over the flattened
 * tensor with VKT_ALL_AXES. A slice that holds a NaN gives the index of its
 * first NaN, for both ops (Nx, torch). */
VKT_API int vkt_argmax(const vkt_tensor *x, int axis, bool keep_axis, vkt_tensor **out);
VKT_API int vkt_argmin(const vkt_tensor *x, int axis, bool keep_axis, vkt_tensor **out);

/* ---- data movement ------------------------------------------------------ */

/* New shape with the same number of elements; a view (metadata only). */
VKT_API int vkt_reshape(const vkt_tensor *x, const int64_t *shape, int rank, vkt_tensor **out);
/* Output axis i is input axis perm[i]; perm == NULL reverses the axes. */
VKT_API int vkt_transpose(const vkt_tensor *x, const int *perm, vkt_tensor **out);
/* Broadcasts x to `shape` (rank dims); input axis i maps to output axis axes[i]
 * (axes == NULL aligns x's axes to the right, numpy-style). */
VKT_API int vkt_broadcast(const vkt_tensor *x, const int64_t *shape, int rank, const int *axes,
                          vkt_tensor **out);
/* x[start[i] : start[i] + lengths[i] : strides[i]] per axis, lengths counting
 * source elements; strides == NULL means 1. start is clamped so the window fits
 * (Nx). Output dim i = ceil(lengths[i] / strides[i]). */
VKT_API int vkt_slice(const vkt_tensor *x, const int64_t *start, const int64_t *lengths,
                      const int64_t *strides, vkt_tensor **out);
/* Pads each axis i with lo[i] elements before, hi[i] after (negative trims) and
 * interior[i] >= 0 between elements, filling with `value` (a rank-0 tensor of x's
 * dtype). */
VKT_API int vkt_pad(const vkt_tensor *x, const vkt_tensor *value, const int64_t *lo,
                    const int64_t *hi, const int64_t *interior, vkt_tensor **out);
/* Reverses the listed axes. */
VKT_API int vkt_reverse(const vkt_tensor *x, const int *axes, int naxes, vkt_tensor **out);
/* Joins n tensors of one rank along `axis`; other dims must match; dtypes promote. */
VKT_API int vkt_concatenate(const vkt_tensor *const *xs, int n, int axis, vkt_tensor **out);
/* Copies src's elements into dst, which must have src's shape and dtype: the
 * one op that writes an existing tensor, so a graph can update its state (an
 * SGD step's weights) on every launch. Runs like any op: natively, through the
 * fallback, or on the host when both are host-resident. */
VKT_API int vkt_assign(vkt_tensor *dst, const vkt_tensor *src);
/* Nx.gather: indices (s32) has shape [..., k]; its last axis indexes x along
 * axes[0..k) (axes == NULL means the first k axes). The result has shape
 * indices.shape[:-1] ++ (x's dims not in axes). Out-of-range indices clamp. */
VKT_API int vkt_gather(const vkt_tensor *x, const vkt_tensor *indices, const int *axes,
                       vkt_tensor **out);

/* ---- contraction and sorting -------------------------------------------- */

/* Nx.dot/6: contracts a's axes ca[] with b's axes cb[] (nc pairs) over the batch
 * axes ba[] / bb[] (nb pairs). The result's axes are the batch axes, then a's
 * free axes, then b's free axes, in order. Dtypes promote as for multiply. */
VKT_API int vkt_dot(const vkt_tensor *a, const int *ca, const int *ba, const vkt_tensor *b,
                    const int *cb, const int *bb, int nc, int nb, vkt_tensor **out);
/* Stable sort along `axis`; NaN sorts last ascending and first descending. */
VKT_API int vkt_sort(const vkt_tensor *x, int axis, bool descending, vkt_tensor **out);
/* Stable indices (s32) that sort x along `axis`. */
VKT_API int vkt_argsort(const vkt_tensor *x, int axis, bool descending, vkt_tensor **out);

/* ---- convolution and windows (Nx semantics) ------------------------------ */

#define VKT_MAX_SPATIAL (VKT_MAX_RANK - 2)

/* Options of vkt_conv; zero-initialise and set what you need (0 means the
 * default: stride 1, no padding, dilation 1, group sizes 1, no permutation). */
typedef struct vkt_conv_opts {
    int64_t strides[VKT_MAX_SPATIAL];
    int64_t padding_lo[VKT_MAX_SPATIAL]; /* may be negative (trims) */
    int64_t padding_hi[VKT_MAX_SPATIAL];
    int64_t input_dilation[VKT_MAX_SPATIAL];
    int64_t kernel_dilation[VKT_MAX_SPATIAL];
    int64_t feature_group_size;
    int64_t batch_group_size;
    /* Axis permutations into the canonical layouts (as vkt_transpose's perm:
     * canonical axis i is the tensor's axis perm[i]); used when has_* is set.
     * Canonical input is [batch, features, spatial...], kernel is
     * [out_features, in_features / feature_group_size, spatial...]; the
     * canonical output [batch, out_features, spatial...] is transposed by
     * output_permutation to give the result. */
    bool has_input_permutation, has_kernel_permutation, has_output_permutation;
    int input_permutation[VKT_MAX_RANK];
    int kernel_permutation[VKT_MAX_RANK];
    int output_permutation[VKT_MAX_RANK];
} vkt_conv_opts;

/* Nx.conv: an N-d convolution (cross-correlation, as Nx and XLA define it) of
 * input (rank 3..6) with kernel of the same rank; opts may be NULL. */
VKT_API int vkt_conv(const vkt_tensor *input, const vkt_tensor *kernel, const vkt_conv_opts *opts,
                     vkt_tensor **out);

/* Options of the window ops, per axis of the input; zeros mean stride 1, no
 * padding, dilation 1. */
typedef struct vkt_window_opts {
    int64_t strides[VKT_MAX_RANK];
    int64_t padding_lo[VKT_MAX_RANK];
    int64_t padding_hi[VKT_MAX_RANK];
    int64_t window_dilations[VKT_MAX_RANK];
} vkt_window_opts;

/* Reduces every window of shape window[rank] (Nx.window_sum etc.); padding
 * takes the reduction's identity. opts may be NULL. */
#define VKT_WINDOW_OPS(X) X(window_sum) X(window_product) X(window_max) X(window_min)
#define VKT_DECLARE_WINDOW(name)                                                                   \
    VKT_API int vkt_##name(const vkt_tensor *x, const int64_t *window,                             \
                           const vkt_window_opts *opts, vkt_tensor **out);
VKT_WINDOW_OPS(VKT_DECLARE_WINDOW)
/* Nx.window_scatter_max/min: for each window of x (shape of vkt_window_max's
 * result = source's shape), adds the window's source value at the position of
 * the window's first maximum (minimum), or of its first NaN when it holds one
 * (where vkt_window_max/min give NaN); the result has x's shape and starts
 * from init_value (a rank-0 tensor). Window dilations must be 1. */
VKT_API int vkt_window_scatter_max(const vkt_tensor *x, const vkt_tensor *source,
                                   const vkt_tensor *init_value, const int64_t *window,
                                   const vkt_window_opts *opts, vkt_tensor **out);
VKT_API int vkt_window_scatter_min(const vkt_tensor *x, const vkt_tensor *source,
                                   const vkt_tensor *init_value, const int64_t *window,
                                   const vkt_window_opts *opts, vkt_tensor **out);

#ifdef __cplusplus
}
#endif
#endif
