/* common.h — what the reference's families share: element sizes, contiguous
 * strides, a strided copy engine and a broadcast plan that collapses dims so the
 * innermost loop is as long as the layout allows. Internal to backend/ref. */
#ifndef REF_COMMON_H
#define REF_COMMON_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ref.h"

/* Bytes per element (the reference cannot call vkt_dtype_size: its tests link
 * without libvkt). */
static inline size_t ref_esize(vkt_dtype dt)
{
    return dt == VKT_F64 ? 8 : dt == VKT_U8 ? 1 : 4;
}

static inline int ref_is_float(vkt_dtype dt)
{
    return dt == VKT_F32 || dt == VKT_F64;
}

/* Element i of p as a double: exact for every dtype (s32 fits in 53 bits). */
static inline double ref_load(vkt_dtype dt, const void *p, int64_t i)
{
    switch (dt) {
    case VKT_F32: return ((const float *)p)[i];
    case VKT_F64: return ((const double *)p)[i];
    case VKT_S32: return ((const int32_t *)p)[i];
    default: return ((const uint8_t *)p)[i];
    }
}

/* Whether element i of p is nonzero (NaN is nonzero): the predicate rule. */
static inline int ref_truthy(vkt_dtype dt, const void *p, int64_t i)
{
    return ref_load(dt, p, i) != 0.0; /* NaN != 0 holds, so NaN is true */
}

/* Float to integer per vkt_as_type: truncate toward zero, saturate, NaN -> 0.
 * The range checks come first because an out-of-range cast is undefined in C. */
static inline int32_t ref_f2s32(double v)
{
    if (isnan(v))
        return 0;
    if (v >= 2147483647.0)
        return INT32_MAX;
    if (v <= -2147483648.0)
        return INT32_MIN;
    return (int32_t)v;
}

static inline uint8_t ref_f2u8(double v)
{
    if (isnan(v) || v <= 0.0)
        return 0;
    if (v >= 255.0)
        return 255;
    return (uint8_t)v;
}

/* max/min that propagate NaN (either operand NaN gives NaN) and order the
 * zeros (-0 < +0) so the result does not depend on operand order. */
static inline double ref_fmax_nan(double a, double b)
{
    if (isnan(a))
        return a;
    if (isnan(b))
        return b;
    if (a == b)
        return signbit(a) ? b : a;
    return a > b ? a : b;
}

static inline double ref_fmin_nan(double a, double b)
{
    if (isnan(a))
        return a;
    if (isnan(b))
        return b;
    if (a == b)
        return signbit(a) ? a : b;
    return a < b ? a : b;
}

/* Inverse error function to double accuracy (math.c). */
double ref_erf_inv(double x);

/* Stores v into element i of p with the float-source conversion rules. */
void ref_store_double(vkt_dtype dt, void *p, int64_t i, double v);

/* Row-major element strides of a contiguous array of that shape. */
void ref_contig_strides(int rank, const int64_t *shape, int64_t *strides);

/* dst (contiguous, `shape`) = src walked with element strides st (any sign,
 * 0 broadcasts); src points at the element of index (0, ..., 0). */
void ref_copy_strided(void *dst, const void *src, int rank, const int64_t *shape, const int64_t *st,
                      size_t esize);

/* Up to three inputs broadcast (numpy, right-aligned) to an output shape,
 * collapsed to as few dims as the strides allow. */
#define REF_PLAN_MAX_IN 3
typedef struct ref_plan {
    int rank; /* >= 1 after planning, even for rank-0 outputs */
    int nin;
    int64_t shape[VKT_MAX_RANK];
    int64_t st[REF_PLAN_MAX_IN][VKT_MAX_RANK]; /* element strides, 0 where broadcast */
} ref_plan;

void ref_plan_make(ref_plan *p, const ref_view *out, const ref_view *const *ins, int nin);

/* One innermost run: n output elements starting at output element `o`, input k
 * starting at element off[k] and advancing by st[k] per element (0 or 1 mostly). */
typedef void (*ref_row_fn)(void *ctx, int64_t o, const int64_t *off, const int64_t *st, int64_t n);

/* Calls row() over the plan's outer dims, in row-major output order. */
void ref_plan_run(const ref_plan *p, ref_row_fn row, void *ctx);

#endif
