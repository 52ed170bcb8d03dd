// The unary ops on one dtype by op code (enum ref_unop), for unary.comp and
// the fused kernel: with the code a specialization constant, the switch folds.
#include "erfinv.h"
#if defined(IS_FLOAT) && !defined(IS_F64)
// erfc: Numerical Recipes' erfcc (fractional error < 1.2e-7 everywhere) with
// z^2 split exactly (z's top 12 bits squared, plus (z - zh)(z + zh)) and one
// scaling at the end: rounding z^2 alone would cost 4e-6 relative at z = 8.
float erfc_(float x)
{
    if (isnan(x)) return x;
    float z = abs(x), r = 0.0;
    if (z < 10.1) { // erfc(10.1) is below the least subnormal
        float t = 1.0 / (1.0 + 0.5 * z);
        float c = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 +
                  t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
        float zh = uintBitsToFloat(floatBitsToUint(z) & 0xfffff000u);
        int k;
        float p = cm_exp_red(-zh * zh, c - (z - zh) * (z + zh), k);
        r = cm_scale(t * p, k);
    }
    return cm_signbit(x) ? 2.0 - r : r;
}
// erf: Taylor series near 0 (|x| < 0.5, error < 2e-8), else 1 - erfc.
float erf_(float x)
{
    uint m = floatBitsToUint(x) & 0x7fffffffu;
    if (m != 0u && m < 0x00800000u) { // subnormal x = m 2^-149: the result can be normal; flushing drivers lose x
        // precise: folded into one constant, the two scales would round to 2^-149
        precise float r = 1.1283791671 * float(m) * cm_pow2i(-100);
        precise float q = r * cm_pow2i(-49);
        return cm_copysign(q, x);
    }
    if (abs(x) < 0.5) {
        float x2 = x * x;
        return 1.1283791671 * x * (1.0 + x2 * (-1.0 / 3.0 + x2 * (0.1 + x2 * (-1.0 / 42.0 + x2 * (1.0 / 216.0 -
               x2 / 1320.0)))));
    }
    return 1.0 - erfc_(x);
}
// Giles' single-precision erfinv (common/erfinv.h, shared with the host reference).
float erf_inv_(float x)
{
    if (isnan(x) || abs(x) > 1.0) return cm_nan();
    if (abs(x) == 1.0) return cm_copysign(cm_inf(), x);
    if (abs(x) < 2.44140625e-4) return 0.886226925 * x; // sqrt(pi)/2 x: keeps -0 and subnormals
    float w = -cm_log_pos((1.0 - x) * (1.0 + x)), p;
    ERFINV_POLY(p, w)
    return p * x;
}
#endif

#if !defined(PRED)
TC un_apply(uint op, TC x)
{
    switch (op) {
#if defined(IS_FLOAT) && !defined(IS_F64)
    case UN_negate: return fb_neg(x);
#else
    case UN_negate: return -x;
#endif
#if defined(IS_U8)
    case UN_abs: return x;
    case UN_sign: return x == 0u ? 0u : 1u;
#elif defined(IS_INT)
    case UN_abs: return x < 0 ? -x : x;
    case UN_sign: return x > 0 ? 1 : x < 0 ? -1 : 0;
#elif defined(IS_F64)
    case UN_abs: return abs(x);
    case UN_sign: return isnan(x) ? x : sign(x);
#else
    case UN_abs: return fb_abs(x);
    case UN_sign: return fb_sign(x);
#endif
#if defined(IS_FLOAT)
    case UN_floor: return floor(x);
    case UN_ceil: return ceil(x);
    case UN_round: return round_away(x);
#if defined(IS_F64)
    case UN_sqrt: return sqrt(x);
    case UN_rsqrt: return inversesqrt(x);
#else
    case UN_sqrt: return cm_sqrt(x);
    case UN_rsqrt: return cm_rsqrt(x);
#endif
#else
    case UN_floor: case UN_ceil: case UN_round: return x;
#endif
#if defined(IS_FLOAT) && !defined(IS_F64)
    case UN_exp: return cm_exp(x);
    case UN_expm1: return cm_expm1(x);
    case UN_log: return cm_log(x);
    case UN_log1p: return cm_log1p(x);
    case UN_cbrt: return cm_cbrt(x);
    case UN_sin: return cm_sin(x);
    case UN_cos: return cm_cos(x);
    case UN_tan: return cm_tan(x);
    case UN_asin: return cm_asin(x);
    case UN_acos: return cm_acos(x);
    case UN_atan: return cm_atan(x);
    case UN_sinh: return cm_sinh(x);
    case UN_cosh: return cm_cosh(x);
    case UN_tanh: return cm_tanh(x);
    case UN_asinh: return cm_asinh(x);
    case UN_acosh: return cm_acosh(x);
    case UN_atanh: return cm_atanh(x);
    case UN_sigmoid: return cm_sigmoid(x);
    case UN_erf: return erf_(x);
    case UN_erfc: return erfc_(x);
    case UN_erf_inv: return erf_inv_(x);
#endif
#if defined(IS_F64)
    case UN_exp: return cd_exp(x);
    case UN_expm1: return cd_expm1(x);
    case UN_log: return cd_log(x);
    case UN_log1p: return cd_log1p(x);
    case UN_cbrt: return cd_cbrt(x);
    case UN_sinh: return cd_sinh(x);
    case UN_cosh: return cd_cosh(x);
    case UN_tanh: return cd_tanh(x);
    case UN_asinh: return cd_asinh(x);
    case UN_acosh: return cd_acosh(x);
    case UN_atanh: return cd_atanh(x);
    case UN_sigmoid: return cd_sigmoid(x);
    case UN_atan: return cd_atan(x);
    case UN_asin: return cd_asin(x);
    case UN_acos: return cd_acos(x);
    case UN_sin: return cd_sin(x);
    case UN_cos: return cd_cos(x);
    case UN_tan: return cd_tan(x);
    case UN_erf: return cd_erf(x);
    case UN_erfc: return cd_erfc(x);
    case UN_erf_inv: return cd_erf_inv(x);
#endif
#if defined(IS_INT)
    case UN_bitwise_not: return ~x;
    case UN_count_leading_zeros: return x == 0 ? 32 : 31 - findMSB(uint(x));
    case UN_population_count: return bitCount(uint(x));
#elif defined(IS_U8)
    case UN_bitwise_not: return ~x & 0xffu;
    case UN_count_leading_zeros: return x == 0u ? 8u : uint(7 - findMSB(x));
    case UN_population_count: return uint(bitCount(x));
#endif
    default: return x;
    }
}
#endif
