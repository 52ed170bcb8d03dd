/* ref.h — the host reference backend: every op for every dtype on contiguous
 * row-major host buffers. It is the tests' oracle and the engine of fallbacks, so
 * it favours clarity and exactness; inner loops run over contiguous memory.
 *
 * Callers (the op layer) validate arguments and compute output shapes first:
 * reference functions assume valid input and a preallocated `out` whose dtype,
 * rank and shape are the op's result. They return VKT_OK or VKT_ENOMEM (for
 * temporaries) and never touch Vulkan. Internal symbols: prefix `ref_`.
 */
#ifndef VKT_REF_H
#define VKT_REF_H

#include "vkt.h"

/* A contiguous row-major array on the host. */
typedef struct ref_view {
    vkt_dtype dtype;
    int rank;
    int64_t shape[VKT_MAX_RANK];
    void *data;
} ref_view;

/* Op codes for the elementwise families, in the order of VKT_UNARY_OPS and
 * VKT_BINARY_OPS (vkt.h), shared by the reference, the shaders and the gates. */
#define REF_ENUM_UN(name, cls) UN_##name,
#define REF_ENUM_BIN(name, cls) BIN_##name,
enum ref_unop { VKT_UNARY_OPS(REF_ENUM_UN) UN__COUNT };
enum ref_binop { VKT_BINARY_OPS(REF_ENUM_BIN) BIN__COUNT };
/* The op classes of vkt.h (ARITH, MATH, PRED, INT), as REF_ARITH ...; the
 * class of each elementwise op comes from the same lists, through these two
 * tables (ref/common.c), which the gates and the reference both read. */
#define REF_ENUM_CLASS(cls) REF_##cls,
enum ref_class { VKT_OP_CLASSES(REF_ENUM_CLASS) REF__CLASSES };
enum ref_class ref_unop_class(enum ref_unop op);
enum ref_class ref_binop_class(enum ref_binop op);
enum ref_redop { RED_SUM, RED_PRODUCT, RED_MAX, RED_MIN, RED_ALL, RED_ANY, RED__COUNT };

size_t ref_numel(const ref_view *v);

/* out[i] = x[i] converted to out->dtype (rules in vkt_as_type). */
int ref_convert(const ref_view *x, ref_view *out);
/* Fills out with value converted to its dtype. */
int ref_fill(ref_view *out, double value);
/* Nx.iota along axis (VKT_ALL_AXES: over the flattened array). */
int ref_iota(ref_view *out, int axis);

/* Unary op; x->dtype is the compute dtype (already converted to float for math
 * functions), out->dtype is x's or u8 for predicates. */
int ref_unary(enum ref_unop op, const ref_view *x, ref_view *out);
/* Binary op with broadcasting of a and b (same dtype, the compute dtype) to
 * out's shape; out->dtype is the compute dtype or u8 for comparisons/logic. */
int ref_binary(enum ref_binop op, const ref_view *a, const ref_view *b, ref_view *out);
/* pred (any dtype) ? t : f, all broadcast to out; t, f have out's dtype. */
int ref_select(const ref_view *pred, const ref_view *t, const ref_view *f, ref_view *out);
/* min(max(x, lo), hi), lo/hi broadcast, all of out's dtype. */
int ref_clip(const ref_view *x, const ref_view *lo, const ref_view *hi, ref_view *out);

/* Reduces over the axes set in `axis_mask` (bit i = axis i). out's shape is x's
 * with reduced axes removed or set to 1 (either layout is the same in memory).
 * x->dtype is the accumulation dtype already (s32 for integer sum/product). */
int ref_reduce(enum ref_redop op, const ref_view *x, unsigned axis_mask, ref_view *out);
/* argmax (is_max) / argmin along axis, or over everything with VKT_ALL_AXES;
 * out is s32. First index wins ties; NaN is the largest value. */
int ref_argreduce(bool is_max, const ref_view *x, int axis, ref_view *out);

/* out axis i = x axis perm[i]. */
int ref_transpose(const ref_view *x, const int *perm, ref_view *out);
/* x axis i -> out axis axes[i]; dims of x are 1 or equal to out's. */
int ref_broadcast(const ref_view *x, const int *axes, ref_view *out);
/* out[i...] = x[start + i * stride ...]; start already clamped. */
int ref_slice(const ref_view *x, const int64_t *start, const int64_t *strides, ref_view *out);
/* Nx.pad with lo/hi (may be negative) and interior padding; value points to one
 * element of x's dtype. */
int ref_pad(const ref_view *x, const void *value, const int64_t *lo, const int64_t *hi,
            const int64_t *interior, ref_view *out);
/* Reverses the axes set in axis_mask. */
int ref_reverse(const ref_view *x, unsigned axis_mask, ref_view *out);
/* Concatenates n views (out's dtype already) along axis. */
int ref_concatenate(const ref_view *const *xs, int n, int axis, ref_view *out);
/* Nx.gather; idx is s32 with last dim k indexing x's axes[0..k); clamps. */
int ref_gather(const ref_view *x, const ref_view *idx, const int *axes, int k, ref_view *out);

/* General contraction (vkt_dot semantics); a, b have out's dtype. Accumulates
 * in double for floats and in 64-bit for s32 (wrapping to 32 bits at the end). */
int ref_dot(const ref_view *a, const int *ca, const int *ba, const ref_view *b, const int *cb,
            const int *bb, int nc, int nb, ref_view *out);
/* Stable sort (or argsort into an s32 out) along axis; NaN last ascending,
 * first descending. */
int ref_sort(const ref_view *x, int axis, bool descending, bool arg, ref_view *out);

/* Nx.conv (vkt_conv semantics): input and kernel already of out's dtype; the
 * permutations in opts are applied as documented in vkt.h. */
int ref_conv(const ref_view *input, const ref_view *kernel, const vkt_conv_opts *opts,
             ref_view *out);
/* Window reduction (RED_SUM, RED_PRODUCT, RED_MAX, RED_MIN) of x with padding
 * taking the reduction's identity. */
int ref_window_reduce(enum ref_redop op, const ref_view *x, const int64_t *window,
                      const vkt_window_opts *opts, ref_view *out);
/* window_scatter_max (is_max) / _min: out (x's shape) starts at *init (one
 * element of out's dtype) and receives each source value at its window's
 * first extremum. */
int ref_window_scatter(bool is_max, const ref_view *x, const ref_view *source, const void *init,
                       const int64_t *window, const vkt_window_opts *opts, ref_view *out);

#endif
