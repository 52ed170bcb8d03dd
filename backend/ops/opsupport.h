/* opsupport.h — helpers shared by the op families: argument checks, dtype
 * promotion, broadcasting, axes, and dtype conversion on either side. */
#ifndef VKT_OPSUPPORT_H
#define VKT_OPSUPPORT_H

#include "../core.h"
#include "layouts.h"

_Static_assert(PC_MAXR == VKT_MAX_RANK, "layouts.h and vkt.h disagree on the rank limit");

/* The elementwise kernels' push constants, also used by in-op conversions. */
typedef struct ew_push {
    EW_PUSH_FIELDS
} ew_push;

/* Declares an op's counters and its op_info entry in a family table. */
// clang-format off
#define OP_ENTRY(name_, support_, code_) {#name_, support_, code_, &(op_counters){0}}
// clang-format on

/* u8 < s32 < f32 < f64, as Nx merges types. */
INTERNAL vkt_dtype op_promote(vkt_dtype a, vkt_dtype b);
INTERNAL bool op_is_float(vkt_dtype dt);
/* Common shape of n tensors under numpy broadcasting; ESHAPE names the op. */
INTERNAL int op_broadcast_shape(const char *op, const vkt_tensor *const *ts, int n, int64_t *shape,
                                int *rank);
/* Element strides of t seen from an output of shape/rank: 0 on broadcast axes. */
INTERNAL void op_bcast_strides(const vkt_tensor *t, const int64_t *shape, int rank,
                               uint32_t *strides);
/* Normalizes a possibly negative axis into [0, rank); EAXIS names the op. */
INTERNAL int op_axis(const char *op, int axis, int rank, int *out);
/* Turns an axis list into a bit mask, rejecting repeats; NULL means all axes. */
INTERNAL int op_axes_mask(const char *op, const int *axes, int naxes, int rank, unsigned *mask);
/* Native dtype conversion into a new DEVICE tensor of the same shape (no op
 * counters: it is part of the calling op). Returns x itself (*owned = NULL)
 * when no conversion is needed. */
INTERNAL int op_device_convert(const vkt_tensor *x, vkt_dtype to, const vkt_tensor **out,
                               vkt_tensor **owned);
/* The SPIR-V module converting dtype `from` to `to` (a copy when equal). */
INTERNAL int op_convert_shader(vkt_dtype from, vkt_dtype to);
/* Host dtype conversion of a view into a malloc'ed buffer (*owned, to free). */
INTERNAL int op_host_convert(const ref_view *x, vkt_dtype to, ref_view *out, void **owned);
/* op_host_convert of n views at once; owned[0..n) are set (NULL or a buffer to
 * free) even on error, so the caller frees them on every path. */
INTERNAL int op_host_convert_n(const ref_view *in, int n, vkt_dtype to, ref_view *out,
                               void **owned);
/* Dispatch helper for one-output elementwise-shaped kernels. */
INTERNAL int op_dispatch(vkt_ctx *ctx, int shader, uint32_t op, const void *push,
                         uint32_t push_size, tn_storage *const *bufs, int nbufs, uint64_t n);
/* op_dispatch with what a graph may fuse about it (NULL: nothing). */
INTERNAL int op_dispatch_ew(vkt_ctx *ctx, int shader, uint32_t op, const void *push,
                            uint32_t push_size, tn_storage *const *bufs, int nbufs, uint64_t n,
                            const rt_ew *ew);
/* How an input with element strides `strides` (0 on broadcast axes) over an
 * output of shape/rank is indexed by the output's linear index i, as
 * (i / *div) % *mod: true when its axes that matter are one contiguous run of
 * the output's (a scalar, a bias, the whole tensor), else false. */
INTERNAL bool op_ew_pattern(const int64_t *shape, int rank, const uint32_t *strides, uint32_t *div,
                            uint32_t *mod);

#endif
