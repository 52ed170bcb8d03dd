// f32 functions with C libm's results on every input (NaN, ±Inf, ±0,
// subnormals, the extremes), for the ops whose GLSL builtins are undefined or
// loose there. Vulkan lets exp/log/pow/atan be approximate (log2 has only
// absolute accuracy near 1) and lets drivers flush subnormals, so nothing here
// rests on a builtin: specials are decided on the bits, subnormals are
// rescaled with integer ops, and the core approximations are fixed-length
// polynomials (no per-element loops). Prefix cm_. Error bounds: tolerances.md.
#if defined(IS_FLOAT) && !defined(IS_F64)

#define CM_LN2 0.693147180559945
#define CM_LN2_HI 0.693145751953125  // 16 bits: k * CM_LN2_HI is exact
#define CM_LN2_LO 1.42860682030941723e-06
#define CM_PI 3.14159265358979
#define CM_PI_2 1.57079632679490
#define CM_PI_4 0.785398163397448

float cm_nan() { return uintBitsToFloat(0x7fc00000u); }
float cm_inf() { return uintBitsToFloat(0x7f800000u); }
bool cm_signbit(float x) { return (floatBitsToUint(x) & 0x80000000u) != 0u; }
// |m| with the sign bit of s: bit-exact, so -0 and NaN survive.
float cm_copysign(float m, float s)
{
    return uintBitsToFloat((floatBitsToUint(m) & 0x7fffffffu) | (floatBitsToUint(s) & 0x80000000u));
}
// 2^e for -126 <= e <= 127, from the bits (ldexp/exp2 may be approximate).
float cm_pow2i(int e) { return uintBitsToFloat(uint(e + 127) << 23); }
// p * 2^e for normal p in [0.5, 2] and -252 <= e <= 254: two exact scalings.
float cm_scale(float p, int e)
{
    int h = e >> 1;
    return p * cm_pow2i(h) * cm_pow2i(e - h);
}
// |x| (finite, nonzero) as m * 2^e with m in [1, 2); subnormals are
// normalized through an integer-to-float conversion, which no mode flushes.
float cm_frexp(float x, out int e)
{
    uint b = floatBitsToUint(x) & 0x7fffffffu;
    int adj = 0;
    if (b < 0x00800000u) {
        b = floatBitsToUint(float(b));
        adj = -149;
    }
    e = int(b >> 23) - 127 + adj;
    return uintBitsToFloat((b & 0x007fffffu) | 0x3f800000u);
}

// log of a finite x > 0 (subnormals included): x = m * 2^k with m in
// [sqrt(1/2), sqrt(2)), log(m) = 2 atanh(f / (2 + f)) by fdlibm's logf
// polynomial; the result is within about 1 ulp.
float cm_log_pos(float x)
{
    int k;
    float m = cm_frexp(x, k);
    if (m > 1.41421356) {
        m *= 0.5;
        k += 1;
    }
    precise float f = m - 1.0;
    precise float s = f / (2.0 + f);
    float z = s * s, w = z * z;
    float r = z * (0.66666662693 + w * 0.28498786688) + w * (0.40000972152 + w * 0.24279078841);
    precise float hfsq = 0.5 * f * f;
    float dk = float(k);
    precise float res = s * (hfsq + r) + dk * CM_LN2_LO - hfsq + f + dk * CM_LN2_HI;
    return res;
}
// exp(x) for x in [-104, 89]: x = k ln2 + r, |r| <= ln2/2 (Cody-Waite), exp(r)
// by its Taylor polynomial to r^8 (truncation < 2e-9), then exact scaling.
float cm_exp_core(float x)
{
    float k = floor(x * 1.44269504 + 0.5);
    precise float r = (x - k * CM_LN2_HI) - k * CM_LN2_LO;
    float p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0 +
              r * (1.0 / 5040.0 + r * (1.0 / 40320.0))))))));
    return cm_scale(p, int(k));
}
// exp(hi + lo) as p * 2^k, p in [0.7, 1.42]: the caller scales once, after
// any factor of its own, so results that end subnormal round only there. hi
// + lo in [-104, 89]; lo carries what a sum like -z^2 + c would round away.
float cm_exp_red(float hi, float lo, out int k)
{
    float kf = floor((hi + lo) * 1.44269504 + 0.5);
    precise float r = ((hi - kf * CM_LN2_HI) - kf * CM_LN2_LO) + lo;
    k = int(kf);
    return 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0 +
           r * (1.0 / 5040.0 + r * (1.0 / 40320.0))))))));
}
// exp with C's ends: overflow to inf above log(FLT_MAX), gradual underflow
// down to the least subnormal, 0 below it.
float cm_exp(float x)
{
    if (isnan(x)) return x;
    if (x > 88.7228394) return cm_inf();
    if (x < -104.0) return 0.0;
    return cm_exp_core(x);
}
// log with C's specials: -inf at ±0, NaN below zero (decided on the sign bit,
// so a flushed -1e-40 is still negative), inf at inf.
float cm_log(float x)
{
    uint b = floatBitsToUint(x);
    if ((b & 0x7fffffffu) == 0u) return -cm_inf();
    if (isnan(x) || (b & 0x80000000u) != 0u) return cm_nan();
    if (b == 0x7f800000u) return x;
    return cm_log_pos(x);
}

// sqrt and 1/sqrt with subnormal inputs rescaled on the bits (float(m) 2 is
// x 2^150, exact): drivers that flush inputs return 0 and inf for them.
// Negative nonzero inputs give NaN, -0 keeps its sign (1/sqrt(-0) = -inf).
float cm_sqrt(float x)
{
    uint b = floatBitsToUint(x), m = b & 0x7fffffffu;
    if (m == 0u || m >= 0x7f800000u) return (b & 0x80000000u) != 0u && m == 0x7f800000u ? cm_nan() : x;
    if ((b & 0x80000000u) != 0u) return cm_nan();
    if (m < 0x00800000u) return sqrt(float(m) * 2.0) * cm_pow2i(-75);
    return sqrt(x);
}
float cm_rsqrt(float x)
{
    uint b = floatBitsToUint(x), m = b & 0x7fffffffu;
    if (m > 0x7f800000u) return x;
    if (m == 0u) return cm_copysign(cm_inf(), x);
    if ((b & 0x80000000u) != 0u) return cm_nan();
    if (m == 0x7f800000u) return 0.0;
    if (m < 0x00800000u) return inversesqrt(float(m) * 2.0) * cm_pow2i(75);
    return inversesqrt(x);
}

// expm1: the Taylor polynomial on [-0.5, 0.5] (to x^9, truncation < 3e-10
// relative), else exp(x) - 1, which loses less than one ulp there.
float cm_expm1(float x)
{
    if (isnan(x)) return x;
    if (x > 88.7228394) return cm_inf();
    if (x < -20.0) return -1.0;
    float a = abs(x);
    if (a < 5.9604645e-8) return x; // 2^-24: x + x^2/2 rounds to x; keeps -0 and subnormals
    if (a <= 0.5)
        return x + x * x * (0.5 + x * (1.0 / 6.0 + x * (1.0 / 24.0 + x * (1.0 / 120.0 + x * (1.0 / 720.0 +
               x * (1.0 / 5040.0 + x * (1.0 / 40320.0 + x * (1.0 / 362880.0))))))));
    return cm_exp_core(x) - 1.0;
}

// log1p(x) = log(u) + (x - (u - 1)) / u with u = 1 + x rounded: the second
// term restores what the rounding of u dropped (Goldberg's correction).
float cm_log1p(float x)
{
    if (isnan(x) || x < -1.0) return cm_nan();
    if (x == -1.0) return -cm_inf();
    if (isinf(x)) return x;
    if (abs(x) < 5.9604645e-8) return x; // log1p(x) rounds to x; keeps -0 and subnormals
    precise float u = 1.0 + x;
    precise float c = (x - (u - 1.0)) / u;
    return cm_log_pos(u) + c;
}

// cbrt: |x| = m * 2^(3q) with m in [1, 8), cbrt(m) by a bit-level guess and
// three Newton steps on a bounded m (so nothing overflows), then exact scaling.
float cm_cbrt(float x)
{
    if (isnan(x) || isinf(x) || (floatBitsToUint(x) & 0x7fffffffu) == 0u) return x;
    int e;
    float m = cm_frexp(x, e);
    int q = e >= 0 ? e / 3 : -((2 - e) / 3);
    m *= float(1 << (e - 3 * q)); // m in [1, 8)
    float t = 0.764924 + m * (0.265258 - m * 0.0142885); // within 1.8% of cbrt(m) on [1, 8)
    t = t - (t * t * t - m) / (3.0 * t * t);
    t = t - (t * t * t - m) / (3.0 * t * t);
    t = t - (t * t * t - m) / (3.0 * t * t);
    return cm_copysign(t * cm_pow2i(q), x);
}

// atan on [0, inf] by Cephes' atanf: reduce to |z| <= tan(pi/8) around 0,
// pi/4 or pi/2, then a degree-9 odd polynomial (about 2e-7 relative).
float cm_atan_pos(float a)
{
    float base = 0.0, z = a;
    if (a > 2.41421356) {
        base = CM_PI_2;
        z = -1.0 / a;
    } else if (a > 0.41421356) {
        base = CM_PI_4;
        z = (a - 1.0) / (a + 1.0);
    }
    float zz = z * z;
    return base + (((8.05374449538e-2 * zz - 1.38776856032e-1) * zz + 1.99777106478e-1) * zz -
                   3.33329491539e-1) * zz * z + z;
}
float cm_atan(float x)
{
    if (isnan(x)) return x;
    float a = abs(x);
    if (a < 2.44140625e-4) return x; // 2^-12: atan(x) rounds to x; keeps -0 and subnormals
    return cm_copysign(isinf(x) ? CM_PI_2 : cm_atan_pos(a), x);
}

// atan2 with C's table of special cases (signed zeros choose between 0 and
// pi, infinities give multiples of pi/4). Everything is decided on the bits
// and the quotient is formed from normalized mantissas: drivers that flush
// subnormals (or divide through a reciprocal) would lose tiny operands.
float cm_atan2(float y, float x)
{
    uint ux = floatBitsToUint(x), bx = ux & 0x7fffffffu, by = floatBitsToUint(y) & 0x7fffffffu;
    if (bx > 0x7f800000u || by > 0x7f800000u) return cm_nan();
    bool xneg = (ux & 0x80000000u) != 0u;
    float r;
    if (by == 0u)
        r = xneg ? CM_PI : 0.0;
    else if (bx == 0u)
        r = CM_PI_2;
    else if (by == 0x7f800000u)
        r = bx == 0x7f800000u ? (xneg ? 3.0 * CM_PI_4 : CM_PI_4) : CM_PI_2;
    else if (bx == 0x7f800000u)
        r = xneg ? CM_PI : 0.0;
    else {
        int ey, ex;
        float my = cm_frexp(y, ey), mx = cm_frexp(x, ex);
        int d = ey - ex;
        if (d > 60) {
            r = CM_PI_2;
        } else if (d < -60) {
            // |y/x| < 2^-59: atan is the quotient itself (or pi minus it).
            r = xneg ? CM_PI : d < -151 ? 0.0 : cm_scale(my / mx, d);
        } else {
            float q = my / mx * cm_pow2i(d); // in [2^-61, 2^62]
            float t = q <= 1.0 ? cm_atan_pos(q) : CM_PI_2 - cm_atan_pos(1.0 / q);
            r = xneg ? CM_PI - t : t;
        }
    }
    return cm_copysign(r, y);
}

// pow with C99 Annex F's special cases; the rest is exp(y * log|x|) with the
// sign of an odd integer power of a negative base. Signs, zeros and
// integrality come from the bits: a flushing driver sees -1e-40 < 0 as false.
float cm_pow(float x, float y)
{
    uint ux = floatBitsToUint(x), uy = floatBitsToUint(y);
    uint bx = ux & 0x7fffffffu, by = uy & 0x7fffffffu;
    if (by == 0u || ux == 0x3f800000u) return 1.0;
    if (bx > 0x7f800000u || by > 0x7f800000u) return cm_nan();
    if (uy == 0x3f800000u) return x;
    bool xneg = (ux & 0x80000000u) != 0u, ypos = (uy & 0x80000000u) == 0u;
    // |y| < 1 is no integer; above 2^24 every float is an even integer.
    float ay = uintBitsToFloat(by);
    bool yint = by >= 0x3f800000u && trunc(ay) == ay;
    bool odd = yint && by < 0x4b800000u && (uint(ay) & 1u) != 0u;
    if (by == 0x7f800000u) {
        if (bx == 0x3f800000u) return 1.0;
        return (bx > 0x3f800000u) == ypos ? cm_inf() : 0.0;
    }
    if (bx == 0u || bx == 0x7f800000u) {
        float m = (bx == 0u) != ypos ? cm_inf() : 0.0;
        return odd ? cm_copysign(m, x) : m;
    }
    if (xneg && !yint) return cm_nan();
    float t = y * cm_log_pos(x);
    float m = t > 88.7228394 ? cm_inf() : t < -104.0 ? 0.0 : cm_exp_core(t);
    return xneg && odd ? -m : m;
}

// asinh by fdlibm's three ranges (log1p near 0, log of 2|x| far out).
float cm_asinh(float x)
{
    if (isnan(x) || isinf(x)) return x;
    float a = abs(x), r;
    if (a < 2.44140625e-4) return x; // 2^-12: asinh(x) rounds to x
    if (a > 4096.0)
        r = cm_log_pos(a) + CM_LN2;
    else if (a > 2.0)
        r = cm_log_pos(2.0 * a + 1.0 / (sqrt(a * a + 1.0) + a));
    else
        r = cm_log1p(a + a * a / (sqrt(a * a + 1.0) + 1.0));
    return cm_copysign(r, x);
}

// acosh by fdlibm's three ranges; NaN below 1.
float cm_acosh(float x)
{
    if (isnan(x) || x < 1.0) return cm_nan();
    if (isinf(x)) return x;
    if (x > 4096.0) return cm_log_pos(x) + CM_LN2;
    if (x > 2.0) return cm_log_pos(2.0 * x - 1.0 / (x + sqrt(x * x - 1.0)));
    float t = x - 1.0;
    return cm_log1p(t + sqrt(2.0 * t + t * t));
}

// fmod, exact: |x| = Mx 2^Ex, |y| = My 2^Ey with 24-bit integer mantissas,
// R = Mx 2^(Ex-Ey) mod My by modular integer arithmetic (2^d mod My by nine
// fixed squarings), result R 2^Ey rebuilt from the bits with x's sign.
uint cm_mulmod(uint a, uint b, uint m) // a, b < m < 2^24
{
    uint q = uint(floor(float(a) * float(b) / float(m)));
    int r = int(a * b - q * m); // exact: the true value is within a few m of 0
    r -= int(m) * int(floor(float(r) / float(m)));
    return uint(r < 0 ? r + int(m) : r >= int(m) ? r - int(m) : r);
}
void cm_mant(uint b, out uint m, out int e) // b: |x| bits, nonzero finite
{
    uint ex = b >> 23;
    m = ex == 0u ? b : (b & 0x007fffffu) | 0x00800000u;
    e = ex == 0u ? -149 : int(ex) - 150;
}
float cm_fmod(float x, float y)
{
    uint bx = floatBitsToUint(x) & 0x7fffffffu, by = floatBitsToUint(y) & 0x7fffffffu;
    if (bx >= 0x7f800000u || by == 0u || by > 0x7f800000u) return cm_nan();
    if (bx < by) return x; // also y = inf, x = ±0
    uint mx, my;
    int ex, ey;
    cm_mant(bx, mx, ex);
    cm_mant(by, my, ey);
    int d = ex - ey; // >= 0 since |x| >= |y|
    uint r = mx % my;
    if (d <= 8) {
        r = (r << d) % my;
    } else {
        uint p = 1u, base = 2u % my;
        [[unroll]] for (int i = 0; i < 9; i++) {
            if ((d & (1 << i)) != 0) p = cm_mulmod(p, base, my);
            base = cm_mulmod(base, base, my);
        }
        r = cm_mulmod(r, p, my);
    }
    uint sign = floatBitsToUint(x) & 0x80000000u;
    if (r == 0u) return uintBitsToFloat(sign);
    int msb = findMSB(r), e = ey + msb; // value r * 2^ey = 1.f * 2^e
    uint bits = e >= -126 ? (uint(e + 127) << 23) | ((r << (23 - msb)) & 0x007fffffu) : r << (ey + 149);
    return uintBitsToFloat(bits | sign);
}

// sinh, cosh, tanh by fdlibm's ranges: expm1 near 0 (no cancellation), one
// exp in the middle, exp(|x|/2) squared past log(FLT_MAX) so sinh and cosh
// reach FLT_MAX before they overflow.
float cm_sinh(float x)
{
    if (isnan(x) || isinf(x)) return x;
    float a = abs(x), r;
    if (a < 2.44140625e-4) return x; // 2^-12: sinh(x) rounds to x; keeps -0 and subnormals
    if (a < 1.0) {
        float t = cm_expm1(a);
        r = 0.5 * (2.0 * t - t * t / (t + 1.0));
    } else if (a < 9.0) {
        float t = cm_expm1(a);
        r = 0.5 * (t + t / (t + 1.0));
    } else if (a < 88.7228394) {
        r = 0.5 * cm_exp_core(a);
    } else if (a <= 89.4159851) {
        float w = cm_exp_core(0.5 * a);
        r = (0.5 * w) * w;
    } else {
        r = cm_inf();
    }
    return cm_copysign(r, x);
}
float cm_cosh(float x)
{
    if (isnan(x)) return x;
    float a = abs(x);
    if (a < 0.34657359) { // ln2 / 2
        float t = cm_expm1(a), w = 1.0 + t;
        return 1.0 + t * t / (w + w);
    }
    if (a < 9.0) {
        float t = cm_exp_core(a);
        return 0.5 * t + 0.5 / t;
    }
    if (a < 88.7228394) return 0.5 * cm_exp_core(a);
    if (a <= 89.4159851) {
        float w = cm_exp_core(0.5 * a);
        return (0.5 * w) * w;
    }
    return cm_inf();
}
float cm_tanh(float x)
{
    if (isnan(x)) return x;
    float a = abs(x), r;
    if (a < 2.44140625e-4) return x; // 2^-12
    if (a > 9.0) {
        r = 1.0; // 1 - tanh(9) < 2^-25
    } else if (a >= 1.0) {
        r = 1.0 - 2.0 / (cm_expm1(2.0 * a) + 2.0);
    } else {
        float t = cm_expm1(-2.0 * a);
        r = -t / (t + 2.0);
    }
    return cm_copysign(r, x);
}
// atanh = log1p(2a / (1 - a)) / 2, fdlibm's split keeps small a exact.
float cm_atanh(float x)
{
    float a = abs(x), r;
    if (isnan(x) || a > 1.0) return cm_nan();
    if (a == 1.0) return cm_copysign(cm_inf(), x);
    if (a < 2.44140625e-4) return x; // 2^-12
    if (a < 0.5) {
        float t = a + a;
        r = 0.5 * cm_log1p(t + t * a / (1.0 - a));
    } else {
        r = 0.5 * cm_log1p((a + a) / (1.0 - a));
    }
    return cm_copysign(r, x);
}
// 1 / (1 + exp(-x)): exp(-x) overflows to inf for x < -88.7, giving 0 as C does.
float cm_sigmoid(float x)
{
    if (isnan(x)) return x;
    return 1.0 / (1.0 + cm_exp(-x));
}

// asin, acos by Cephes' asinf: a degree-9 odd polynomial on |x| <= 0.5, and
// asin(a) = pi/2 - 2 asin(sqrt((1 - a) / 2)) above (1 - a is exact there).
float cm_asin_poly(float x) // |x| <= 0.5
{
    float z = x * x;
    return ((((4.2163199048e-2 * z + 2.4181311049e-2) * z + 4.5470025998e-2) * z + 7.4953002686e-2) * z +
            1.6666752422e-1) * z * x + x;
}
float cm_asin(float x)
{
    float a = abs(x);
    if (isnan(x) || a > 1.0) return cm_nan();
    if (a < 2.44140625e-4) return x; // 2^-12
    float r = a <= 0.5 ? cm_asin_poly(a) : CM_PI_2 - 2.0 * cm_asin_poly(sqrt(0.5 * (1.0 - a)));
    return cm_copysign(r, x);
}
float cm_acos(float x)
{
    float a = abs(x);
    if (isnan(x) || a > 1.0) return cm_nan();
    if (a <= 0.5) return CM_PI_2 - cm_asin_poly(x);
    float s = 2.0 * cm_asin_poly(sqrt(0.5 * (1.0 - a)));
    return x > 0.0 ? s : CM_PI - s;
}

// sin, cos, tan: |x| = (q + f) pi/2 with |f| <= 1/2 by Payne-Hanek on the
// bits for every finite x (96 bits of 2/pi against the 24-bit mantissa, exact
// integer products), so huge arguments keep full accuracy; then Cephes'
// single-precision polynomials on |r| <= pi/4.
const uint CM_2_PI[9] = uint[9](0u, 0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u,
                                0x3c439041u, 0xfe5163abu, 0xdebbc561u); // 2/pi's bits after a zero word
uint cm_win(int i, int sh) // 32 bits of the table from bit 32 i + sh
{
    return sh == 0 ? CM_2_PI[i] : (CM_2_PI[i] << sh) | (CM_2_PI[i + 1] >> (32 - sh));
}
// r in [-pi/4, pi/4] and the quadrant q (mod 4) of a = |x|, finite.
float cm_rem_pio2(float a, out int q)
{
    if (a <= CM_PI_4) {
        q = 0;
        return a;
    }
    uint b = floatBitsToUint(a);
    uint m = (b & 0x007fffffu) | 0x00800000u; // a >= pi/4 is normal
    int e = int(b >> 23) - 127;               // a = m 2^(e-23)
    // Bits of 2/pi before position e - 24 add multiples of 4 to a 2/pi: skip them.
    int g = e + 7, i = g >> 5, sh = g & 31;
    uint w0 = cm_win(i, sh), w1 = cm_win(i + 1, sh), w2 = cm_win(i + 2, sh);
    uint h0, l0, h1, l1, h2, l2, c1, c2;
    umulExtended(m, w2, h2, l2);
    umulExtended(m, w1, h1, l1);
    umulExtended(m, w0, h0, l0);
    uint p0 = l2, p1 = uaddCarry(h2, l1, c1);
    uint p2 = uaddCarry(h1, l0, c2) + c1; // a 2/pi = (p2:p1:p0) 2^-94 mod 4
    q = int(p2 >> 30);
    uint hi = p2 & 0x3fffffffu, mid = p1, lo = p0;
    bool neg = (hi & 0x20000000u) != 0u; // f >= 1/2: round q up, f = -(1 - f)
    if (neg) {
        q += 1;
        hi = ~hi & 0x3fffffffu;
        mid = ~mid;
        lo = ~lo;
    }
    int ex = -30; // f = (ta + tb 2^-32) 2^(ex - s) below
    if (hi == 0u) {
        hi = mid;
        mid = lo;
        lo = 0u;
        ex -= 32;
    }
    if (hi == 0u) return 0.0; // |f| < 2^-62: no float is that close to a multiple of pi/2
    int s = 31 - findMSB(hi);
    uint ta = s == 0 ? hi : (hi << s) | (mid >> (32 - s));
    uint tb = s == 0 ? mid : (mid << s) | (lo >> (32 - s));
    float sc = cm_pow2i(ex - s);
    float fh = float(ta & 0xffffff00u) * sc;                          // exact
    float fl = (float(ta & 0xffu) + float(tb) * 2.3283064365386963e-10) * sc; // the rest
    precise float r = fh * 1.57079625129699707031 + (fh * 7.54978995489188216e-8 + fl * 1.57079625129699707031);
    return neg ? -r : r;
}
float cm_sin_poly(float r)
{
    float z = r * r;
    return ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * z * r + r;
}
float cm_cos_poly(float r)
{
    float z = r * r;
    return ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z + 4.166664568298827e-2) * z * z - 0.5 * z + 1.0;
}
float cm_sin(float x)
{
    if (isnan(x) || isinf(x)) return cm_nan();
    if (abs(x) < 2.44140625e-4) return x; // 2^-12
    int q;
    float r = cm_rem_pio2(abs(x), q), v = (q & 1) == 0 ? cm_sin_poly(r) : cm_cos_poly(r);
    v = (q & 2) == 0 ? v : -v;
    return cm_signbit(x) ? -v : v;
}
float cm_cos(float x)
{
    if (isnan(x) || isinf(x)) return cm_nan();
    int q;
    float r = cm_rem_pio2(abs(x), q), v = (q & 1) == 0 ? cm_cos_poly(r) : cm_sin_poly(r);
    return ((q + 1) & 2) == 0 ? v : -v;
}
// tan by Cephes' tanf polynomial; odd quadrants take -1/tan(r).
float cm_tan(float x)
{
    if (isnan(x) || isinf(x)) return cm_nan();
    if (abs(x) < 2.44140625e-4) return x; // 2^-12
    int q;
    float r = cm_rem_pio2(abs(x), q), z = r * r;
    float t = (((((9.38540185543e-3 * z + 3.11992232697e-3) * z + 2.44301354525e-2) * z + 5.34112807005e-2) * z +
                1.33387994085e-1) * z + 3.33331568548e-1) * z * r + r;
    t = (q & 1) == 0 ? t : -1.0 / t;
    return cm_signbit(x) ? -t : t;
}

#endif
