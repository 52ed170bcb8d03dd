/* unary.c — elementwise unary ops. f32 math uses libm's float functions and f64
 * the double ones: that is the oracle the shaders are held to, with tolerances.
 * Integers wrap (abs and negate of INT32_MIN stay INT32_MIN). */
#include "common.h"

static float un_f32(enum ref_unop op, float v)
{
    switch (op) {
    case UN_negate: return -v;
    case UN_abs: return fabsf(v);
    case UN_sign: return isnan(v) ? v : v > 0 ? 1.0f : v < 0 ? -1.0f : 0.0f;
    case UN_floor: return floorf(v);
    case UN_ceil: return ceilf(v);
    case UN_round: return roundf(v); /* half away from zero, as Nx */
    case UN_exp: return expf(v);
    case UN_expm1: return expm1f(v);
    case UN_log: return logf(v);
    case UN_log1p: return log1pf(v);
    case UN_sqrt: return sqrtf(v);
    case UN_rsqrt: return 1.0f / sqrtf(v);
    case UN_cbrt: return cbrtf(v);
    case UN_sin: return sinf(v);
    case UN_cos: return cosf(v);
    case UN_tan: return tanf(v);
    case UN_asin: return asinf(v);
    case UN_acos: return acosf(v);
    case UN_atan: return atanf(v);
    case UN_sinh: return sinhf(v);
    case UN_cosh: return coshf(v);
    case UN_tanh: return tanhf(v);
    case UN_asinh: return asinhf(v);
    case UN_acosh: return acoshf(v);
    case UN_atanh: return atanhf(v);
    case UN_sigmoid: return 1.0f / (1.0f + expf(-v));
    case UN_erf: return erff(v);
    case UN_erfc: return erfcf(v);
    /* libm has no erfinvf: the double result rounded once is the exact oracle. */
    case UN_erf_inv: return (float)ref_erf_inv(v);
    default: return 0.0f;
    }
}

static double un_f64(enum ref_unop op, double v)
{
    switch (op) {
    case UN_negate: return -v;
    case UN_abs: return fabs(v);
    case UN_sign: return isnan(v) ? v : v > 0 ? 1.0 : v < 0 ? -1.0 : 0.0;
    case UN_floor: return floor(v);
    case UN_ceil: return ceil(v);
    case UN_round: return round(v);
    case UN_exp: return exp(v);
    case UN_expm1: return expm1(v);
    case UN_log: return log(v);
    case UN_log1p: return log1p(v);
    case UN_sqrt: return sqrt(v);
    case UN_rsqrt: return 1.0 / sqrt(v);
    case UN_cbrt: return cbrt(v);
    case UN_sin: return sin(v);
    case UN_cos: return cos(v);
    case UN_tan: return tan(v);
    case UN_asin: return asin(v);
    case UN_acos: return acos(v);
    case UN_atan: return atan(v);
    case UN_sinh: return sinh(v);
    case UN_cosh: return cosh(v);
    case UN_tanh: return tanh(v);
    case UN_asinh: return asinh(v);
    case UN_acosh: return acosh(v);
    case UN_atanh: return atanh(v);
    case UN_sigmoid: return 1.0 / (1.0 + exp(-v));
    case UN_erf: return erf(v);
    case UN_erfc: return erfc(v);
    case UN_erf_inv: return ref_erf_inv(v);
    default: return 0.0;
    }
}

static int32_t un_s32(enum ref_unop op, int32_t v)
{
    uint32_t u = (uint32_t)v;
    switch (op) {
    case UN_negate: return (int32_t)(0u - u);
    case UN_abs: return v < 0 ? (int32_t)(0u - u) : v;
    case UN_sign: return v > 0 ? 1 : v < 0 ? -1 : 0;
    case UN_bitwise_not: return (int32_t)~u;
    case UN_count_leading_zeros: return u == 0 ? 32 : __builtin_clz(u);
    case UN_population_count: return __builtin_popcount(u);
    default: return v; /* floor, ceil, round: identity on integers */
    }
}

static uint8_t un_u8(enum ref_unop op, uint8_t v)
{
    switch (op) {
    case UN_negate: return (uint8_t)(0u - v);
    case UN_sign: return v != 0;
    case UN_bitwise_not: return (uint8_t)~v;
    case UN_count_leading_zeros: return v == 0 ? 8 : (uint8_t)(__builtin_clz(v) - 24);
    case UN_population_count: return (uint8_t)__builtin_popcount(v);
    default: return v; /* abs, floor, ceil, round */
    }
}

static uint8_t predicate(enum ref_unop op, double v)
{
    switch (op) {
    case UN_is_nan: return isnan(v) != 0;
    case UN_is_infinity: return isinf(v) != 0;
    default: return v == 0.0; /* logical_not; NaN is true, so gives 0 */
    }
}

int ref_unary(enum ref_unop op, const ref_view *x, ref_view *out)
{
    size_t n = ref_numel(x);
    int fl = ref_is_float(x->dtype);
    enum ref_class cls = ref_unop_class(op);
    if (cls == REF__CLASSES || (cls == REF_MATH && !fl) || (cls == REF_INT && fl))
        return VKT_EDTYPE;
    if (cls == REF_PRED) {
        uint8_t *y = out->data;
        for (size_t i = 0; i < n; i++)
            y[i] = predicate(op, ref_load(x->dtype, x->data, (int64_t)i));
        return VKT_OK;
    }
    switch (x->dtype) {
    case VKT_F32: {
        const float *s = x->data;
        float *y = out->data;
        for (size_t i = 0; i < n; i++)
            y[i] = un_f32(op, s[i]);
        break;
    }
    case VKT_F64: {
        const double *s = x->data;
        double *y = out->data;
        for (size_t i = 0; i < n; i++)
            y[i] = un_f64(op, s[i]);
        break;
    }
    case VKT_S32: {
        const int32_t *s = x->data;
        int32_t *y = out->data;
        for (size_t i = 0; i < n; i++)
            y[i] = un_s32(op, s[i]);
        break;
    }
    default: {
        const uint8_t *s = x->data;
        uint8_t *y = out->data;
        for (size_t i = 0; i < n; i++)
            y[i] = un_u8(op, s[i]);
        break;
    }
    }
    return VKT_OK;
}
