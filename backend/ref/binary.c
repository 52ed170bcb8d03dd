/* binary.c — elementwise ops of two or three broadcast operands: binary ops,
 * select and clip. Integer arithmetic wraps and never traps: division and
 * remainder by zero give 0, shifts past the width give 0 (or the sign fill). */
#include "common.h"

/* Comparisons and logic in double are exact for every dtype and IEEE for NaN
 * (every comparison with NaN is false except not_equal; NaN is truthy). */
static uint8_t compare(enum ref_binop op, double a, double b)
{
    switch (op) {
    case BIN_equal: return a == b;
    case BIN_not_equal: return a != b;
    case BIN_less: return a < b;
    case BIN_less_equal: return a <= b;
    case BIN_greater: return a > b;
    case BIN_greater_equal: return a >= b;
    case BIN_logical_and: return (a != 0) && (b != 0);
    case BIN_logical_or: return (a != 0) || (b != 0);
    default: return (a != 0) != (b != 0); /* logical_xor */
    }
}

static float bin_f32(enum ref_binop op, float a, float b)
{
    switch (op) {
    case BIN_add: return a + b;
    case BIN_subtract: return a - b;
    case BIN_multiply: return a * b;
    case BIN_divide: return a / b;
    case BIN_pow: return powf(a, b);
    case BIN_min: return (float)ref_fmin_nan(a, b);
    case BIN_max: return (float)ref_fmax_nan(a, b);
    case BIN_remainder: return fmodf(a, b);
    default: return atan2f(a, b);
    }
}

static double bin_f64(enum ref_binop op, double a, double b)
{
    switch (op) {
    case BIN_add: return a + b;
    case BIN_subtract: return a - b;
    case BIN_multiply: return a * b;
    case BIN_divide: return a / b;
    case BIN_pow: return pow(a, b);
    case BIN_min: return ref_fmin_nan(a, b);
    case BIN_max: return ref_fmax_nan(a, b);
    case BIN_remainder: return fmod(a, b);
    default: return atan2(a, b);
    }
}

/* Integer power by squaring, wrapping; a negative exponent gives the integer
 * part of 1/a^-e: 0, except for bases 1 and -1. */
static uint32_t ipow(uint32_t base, int64_t e, int is_signed)
{
    if (e < 0) {
        if (base == 1)
            return 1;
        if (is_signed && base == UINT32_MAX)
            return (e & 1) ? UINT32_MAX : 1;
        return 0;
    }
    uint32_t r = 1;
    for (uint64_t k = (uint64_t)e; k; k >>= 1) {
        if (k & 1)
            r *= base;
        base *= base;
    }
    return r;
}

static int32_t bin_s32(enum ref_binop op, int32_t a, int32_t b)
{
    uint32_t ua = (uint32_t)a, ub = (uint32_t)b;
    switch (op) {
    case BIN_add: return (int32_t)(ua + ub);
    case BIN_subtract: return (int32_t)(ua - ub);
    case BIN_multiply: return (int32_t)(ua * ub);
    case BIN_pow: return (int32_t)ipow(ua, b, 1);
    case BIN_min: return a < b ? a : b;
    case BIN_max: return a > b ? a : b;
    case BIN_remainder: return (b == 0 || b == -1) ? 0 : a % b;
    case BIN_quotient:
        if (b == 0)
            return 0;
        if (b == -1)
            return (int32_t)(0u - ua); /* INT32_MIN / -1 wraps to INT32_MIN */
        return a / b;
    case BIN_bitwise_and: return a & b;
    case BIN_bitwise_or: return a | b;
    case BIN_bitwise_xor: return a ^ b;
    case BIN_left_shift: return (b < 0 || b >= 32) ? 0 : (int32_t)(ua << b);
    case BIN_right_shift:
        if (b < 0 || b >= 32)
            return a < 0 ? -1 : 0;
        return a < 0 ? ~(~a >> b) : a >> b; /* arithmetic without implementation-defined >> */
    default: return 0;
    }
}

static uint8_t bin_u8(enum ref_binop op, uint8_t a, uint8_t b)
{
    switch (op) {
    case BIN_add: return (uint8_t)(a + b);
    case BIN_subtract: return (uint8_t)(a - b);
    case BIN_multiply: return (uint8_t)(a * b);
    case BIN_pow: return (uint8_t)ipow(a, b, 0);
    case BIN_min: return a < b ? a : b;
    case BIN_max: return a > b ? a : b;
    case BIN_remainder: return b == 0 ? 0 : a % b;
    case BIN_quotient: return b == 0 ? 0 : a / b;
    case BIN_bitwise_and: return a & b;
    case BIN_bitwise_or: return a | b;
    case BIN_bitwise_xor: return a ^ b;
    case BIN_left_shift: return b >= 8 ? 0 : (uint8_t)(a << b);
    case BIN_right_shift: return b >= 8 ? 0 : (uint8_t)(a >> b);
    default: return 0;
    }
}

typedef struct bin_ctx {
    enum ref_binop op;
    vkt_dtype dt;
    const void *a, *b;
    void *out;
} bin_ctx;

#define BIN_ROW(T, FN)                                                                             \
    do {                                                                                           \
        const T *a_ = (const T *)c->a + off[0], *b_ = (const T *)c->b + off[1];                    \
        T *y_ = (T *)c->out + o;                                                                   \
        for (int64_t i = 0; i < n; i++)                                                            \
            y_[i] = FN(c->op, a_[i * st[0]], b_[i * st[1]]);                                       \
    } while (0)

static void bin_row(void *ctx, int64_t o, const int64_t *off, const int64_t *st, int64_t n)
{
    const bin_ctx *c = ctx;
    if (ref_binop_class(c->op) == REF_PRED) {
        uint8_t *y = (uint8_t *)c->out + o;
        for (int64_t i = 0; i < n; i++)
            y[i] = compare(c->op, ref_load(c->dt, c->a, off[0] + i * st[0]),
                           ref_load(c->dt, c->b, off[1] + i * st[1]));
        return;
    }
    switch (c->dt) {
    case VKT_F32: BIN_ROW(float, bin_f32); break;
    case VKT_F64: BIN_ROW(double, bin_f64); break;
    case VKT_S32: BIN_ROW(int32_t, bin_s32); break;
    default: BIN_ROW(uint8_t, bin_u8); break;
    }
}

int ref_binary(enum ref_binop op, const ref_view *a, const ref_view *b, ref_view *out)
{
    int fl = ref_is_float(a->dtype);
    enum ref_class cls = ref_binop_class(op);
    if (cls == REF__CLASSES || (fl && cls == REF_INT) || (!fl && cls == REF_MATH))
        return VKT_EDTYPE;
    const ref_view *ins[2] = {a, b};
    ref_plan p;
    ref_plan_make(&p, out, ins, 2);
    bin_ctx c = {op, a->dtype, a->data, b->data, out->data};
    ref_plan_run(&p, bin_row, &c);
    return VKT_OK;
}

typedef struct sel_ctx {
    const ref_view *pred;
    const void *t, *f;
    void *out;
    size_t es;
} sel_ctx;

static void sel_row(void *ctx, int64_t o, const int64_t *off, const int64_t *st, int64_t n)
{
    const sel_ctx *c = ctx;
    for (int64_t i = 0; i < n; i++) {
        int take = ref_truthy(c->pred->dtype, c->pred->data, off[0] + i * st[0]);
        const char *src = take ? (const char *)c->t + (off[1] + i * st[1]) * (int64_t)c->es
                               : (const char *)c->f + (off[2] + i * st[2]) * (int64_t)c->es;
        memcpy((char *)c->out + (o + i) * (int64_t)c->es, src, c->es);
    }
}

int ref_select(const ref_view *pred, const ref_view *t, const ref_view *f, ref_view *out)
{
    const ref_view *ins[3] = {pred, t, f};
    ref_plan p;
    ref_plan_make(&p, out, ins, 3);
    sel_ctx c = {pred, t->data, f->data, out->data, ref_esize(out->dtype)};
    ref_plan_run(&p, sel_row, &c);
    return VKT_OK;
}

typedef struct clip_ctx {
    vkt_dtype dt;
    const void *x, *lo, *hi;
    void *out;
} clip_ctx;

/* XLA's clamp: max then min, each propagating NaN like the binary ops. */
#define CLIP_ROW(T, MAX, MIN)                                                                      \
    do {                                                                                           \
        const T *x_ = (const T *)c->x + off[0], *l_ = (const T *)c->lo + off[1];                   \
        const T *h_ = (const T *)c->hi + off[2];                                                   \
        T *y_ = (T *)c->out + o;                                                                   \
        for (int64_t i = 0; i < n; i++)                                                            \
            y_[i] = (T)MIN(MAX(x_[i * st[0]], l_[i * st[1]]), h_[i * st[2]]);                      \
    } while (0)
#define IMAX(a, b) ((a) > (b) ? (a) : (b))
#define IMIN(a, b) ((a) < (b) ? (a) : (b))

static void clip_row(void *ctx, int64_t o, const int64_t *off, const int64_t *st, int64_t n)
{
    const clip_ctx *c = ctx;
    switch (c->dt) {
    case VKT_F32: CLIP_ROW(float, ref_fmax_nan, ref_fmin_nan); break;
    case VKT_F64: CLIP_ROW(double, ref_fmax_nan, ref_fmin_nan); break;
    case VKT_S32: CLIP_ROW(int32_t, IMAX, IMIN); break;
    default: CLIP_ROW(uint8_t, IMAX, IMIN); break;
    }
}

int ref_clip(const ref_view *x, const ref_view *lo, const ref_view *hi, ref_view *out)
{
    const ref_view *ins[3] = {x, lo, hi};
    ref_plan p;
    ref_plan_make(&p, out, ins, 3);
    clip_ctx c = {out->dtype, x->data, lo->data, hi->data, out->data};
    ref_plan_run(&p, clip_row, &c);
    return VKT_OK;
}
