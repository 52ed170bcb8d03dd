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

#endif
