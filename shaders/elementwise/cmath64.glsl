// f64 exp/log family with C libm's results on every input (NaN, ±Inf, ±0,
// subnormals, the extremes): exp, expm1, log, log1p, the hyperbolic functions
// and their inverses, sigmoid, cbrt. GLSL defines no double transcendental,
// so these are built from + - * / and sqrt on doubles: Cody-Waite reduction by
// ln2 with fixed-length polynomials (Taylor series, truncation far below half
// an ulp), specials decided on the bits. Prefix cd_. Error bounds:
// tests/vkt/tolerances.md. Literals carry LF: an unsuffixed one is a float.
#if defined(IS_F64)

#define CD_LN2 0.69314718055994529LF
#define CD_LN2_HI 0.69314718048553914LF // 32 bits: k * CD_LN2_HI is exact for |k| < 2^20
#define CD_LN2_LO 7.4406171100123968e-11LF
#define CD_INV_LN2 1.4426950408889634LF

uint cd_hi(double x) { return unpackDouble2x32(x).y; }
uint cd_lo(double x) { return unpackDouble2x32(x).x; }
double cd_make(uint hi, uint lo) { return packDouble2x32(uvec2(lo, hi)); }
bool cd_nan(double x)
{
    uint h = cd_hi(x) & 0x7fffffffu;
    return h > 0x7ff00000u || (h == 0x7ff00000u && cd_lo(x) != 0u);
}
bool cd_signbit(double x) { return (cd_hi(x) & 0x80000000u) != 0u; }
double cd_inf() { return cd_make(0x7ff00000u, 0u); }
double cd_qnan() { return cd_make(0x7ff80000u, 0u); }
double cd_copysign(double m, double s)
{
    return cd_make((cd_hi(m) & 0x7fffffffu) | (cd_hi(s) & 0x80000000u), cd_lo(m));
}
// x = hi + lo with hi the top 26 bits of x's significand, cut on the bits
// (Veltkamp's c x - (c x - x) split is lost to some drivers' algebra).
void cd_split(double x, out double hi, out double lo)
{
    hi = cd_make(cd_hi(x), cd_lo(x) & 0xf8000000u);
    precise double l = x - hi; // exact: the bits cut off
    lo = l;
}
// a b = p + e exactly (Dekker's product), normal a and b, |a b| < 2^1000:
// every partial product below is exact and every sum exact or negligible.
// fma(a, b, -p) is not used alone: lavapipe computes fma as a multiply and
// an add (precise or not), which makes e 0; where fma is fused it is exact,
// so a nonzero result of it is taken first.
void cd_two_prod(double a, double b, out double p, out double e)
{
    double ah, al, bh, bl;
    cd_split(a, ah, al);
    cd_split(b, bh, bl);
    precise double pp = a * b;
    precise double ef = fma(a, b, -pp);
    precise double ee = ((ah * bh - pp) + ah * bl + al * bh) + al * bl;
    p = pp;
    e = ef != 0.0LF ? ef : ee;
}
// 2^e for -1022 <= e <= 1023, from the bits.
double cd_pow2i(int e) { return cd_make(uint(e + 1023) << 20, 0u); }
// p * 2^e for p in [0.5, 2] and -2044 <= e <= 2046: two exact scalings, so a
// subnormal result is rounded once.
double cd_scale(double p, int e)
{
    int h = e / 2;
    return p * cd_pow2i(h) * cd_pow2i(e - h);
}

// exp(r) - 1 for |r| <= ln2/2 (and a little past), Taylor to r^16: the first
// omitted term is below 2^-60 of the result.
double cd_expm1_poly(double r)
{
    double p = 1.0LF / 20922789888000.0LF;
    p = 1.0LF / 1307674368000.0LF + r * p;
    p = 1.0LF / 87178291200.0LF + r * p;
    p = 1.0LF / 6227020800.0LF + r * p;
    p = 1.0LF / 479001600.0LF + r * p;
    p = 1.0LF / 39916800.0LF + r * p;
    p = 1.0LF / 3628800.0LF + r * p;
    p = 1.0LF / 362880.0LF + r * p;
    p = 1.0LF / 40320.0LF + r * p;
    p = 1.0LF / 5040.0LF + r * p;
    p = 1.0LF / 720.0LF + r * p;
    p = 1.0LF / 120.0LF + r * p;
    p = 1.0LF / 24.0LF + r * p;
    p = 1.0LF / 6.0LF + r * p;
    p = 0.5LF + r * p;
    return r + (r * r) * p;
}

// x = k ln2 + r with |r| <= ln2/2 (Cody-Waite, two parts).
double cd_reduce(double x, out int k)
{
    double kf = floor(x * CD_INV_LN2 + 0.5LF);
    k = int(kf);
    precise double r = (x - kf * CD_LN2_HI) - kf * CD_LN2_LO;
    return r;
}

double cd_exp(double x)
{
    if (cd_nan(x)) return x;
    if (x > 709.78271289338397LF) return cd_inf();
    if (x < -745.13321910194122LF) return 0.0LF;
    int k;
    double r = cd_reduce(x, k);
    return cd_scale(1.0LF + cd_expm1_poly(r), k);
}

// e^x / 2 for 709 < x <= 710.48 (sinh and cosh there): the halving goes into
// the exponent, so nothing overflows on the way (an evaluation of exp(x/2)^2/2
// overflowed on the H200, whose compiler may reorder the products).
double cd_exp_half(double x)
{
    int k;
    double r = cd_reduce(x, k);
    return cd_scale(1.0LF + cd_expm1_poly(r), k - 1);
}

double cd_expm1(double x)
{
    if (cd_nan(x)) return x;
    if (x > 709.78271289338397LF) return cd_inf();
    if (x < -38.0LF) return -1.0LF; // exp(x) is below half an ulp of 1
    if (x == 0.0LF) return x; // ±0
    if (abs(x) <= 0.34657359027997264LF) return cd_expm1_poly(x);
    int k;
    double r = cd_reduce(x, k);
    double e = cd_expm1_poly(r);
    if (k > 56) return cd_scale(1.0LF + e, k); // - 1 is below its ulp
    // 2^k (e + 1) - 1 = 2^k e + (2^k - 1), both parts exact for -54 < k <= 56
    double t = cd_pow2i(k);
    return k < 0 ? t * e + (t - 1.0LF) : (t - 1.0LF) + t * e;
}

// log of a finite positive normal x.
double cd_log_pos(double x)
{
    uint h = cd_hi(x);
    int e = int(h >> 20) - 1023;
    uint mh = h & 0x000fffffu;
    // m in [sqrt(1/2), sqrt(2)): 0x6a09e is sqrt(2)'s top mantissa bits
    if (mh >= 0x6a09eu) { mh |= 0x3fe00000u; e++; } else mh |= 0x3ff00000u;
    double f = cd_make(mh, cd_lo(x)) - 1.0LF;
    double s = f / (2.0LF + f), z = s * s;
    // 2 atanh(s) = 2s + s R, R = sum 2 z^k / (2k + 1), |s| <= 0.1716
    double R = 2.0LF / 23.0LF;
    R = 2.0LF / 21.0LF + z * R;
    R = 2.0LF / 19.0LF + z * R;
    R = 2.0LF / 17.0LF + z * R;
    R = 2.0LF / 15.0LF + z * R;
    R = 2.0LF / 13.0LF + z * R;
    R = 2.0LF / 11.0LF + z * R;
    R = 2.0LF / 9.0LF + z * R;
    R = 2.0LF / 7.0LF + z * R;
    R = 2.0LF / 5.0LF + z * R;
    R = 2.0LF / 3.0LF + z * R;
    R = z * R;
    precise double hfsq = 0.5LF * f * f;
    double dk = double(e);
    precise double res = dk * CD_LN2_LO - (hfsq - s * (hfsq + R)) + f + dk * CD_LN2_HI;
    return res;
}

double cd_log(double x)
{
    uint h = cd_hi(x), l = cd_lo(x);
    if ((h & 0x7fffffffu) == 0u && l == 0u) return -cd_inf();
    if (cd_nan(x) || (h & 0x80000000u) != 0u) return cd_qnan();
    if (h == 0x7ff00000u && l == 0u) return x;
    if (h < 0x00100000u) // subnormal: x 2^54 is normal and exact
        return cd_log_pos(x * cd_pow2i(54)) - 54.0LF * CD_LN2_HI - 54.0LF * CD_LN2_LO;
    return cd_log_pos(x);
}

double cd_log1p(double x)
{
    if (cd_nan(x)) return x;
    if (x < -1.0LF) return cd_qnan();
    if (x == -1.0LF) return -cd_inf();
    if (cd_hi(x) == 0x7ff00000u && cd_lo(x) == 0u) return x;
    if (abs(x) < 5.5511151231257827e-17LF) return x; // 2^-54: log1p(x) rounds to x, ±0 kept
    double u = 1.0LF + x;
    // log(u) corrected by the rounding of 1 + x: log1p(x) = log(u) - (u - 1 - x) / u
    precise double c = (u - 1.0LF) - x;
    return cd_log_pos(u) - c / u;
}

double cd_sinh(double x)
{
    double a = abs(x), r;
    if (cd_nan(x) || a < 3.7252902984619141e-09LF) return x; // 2^-28: sinh(x) rounds to x
    if (a > 710.47586007394394LF) return cd_copysign(cd_inf(), x);
    if (a > 709.0LF) { // e^-a is far below an ulp of e^a / 2
        r = cd_exp_half(a);
    } else {
        double e = cd_expm1(a); // (e^a - e^-a) / 2 = (e + e / (e + 1)) / 2
        r = 0.5LF * (e + e / (e + 1.0LF));
    }
    return cd_copysign(r, x);
}

double cd_cosh(double x)
{
    double a = abs(x);
    if (cd_nan(x)) return x;
    if (a > 710.47586007394394LF) return cd_inf();
    if (a > 709.0LF)
        return cd_exp_half(a);
    if (a < 0.34657359027997264LF) { // 1 + e^2 / (2 (1 + e)), e = expm1(a)
        double e = cd_expm1(a);
        return 1.0LF + (e * e) / (2.0LF * (1.0LF + e));
    }
    double t = cd_exp(a);
    return 0.5LF * t + 0.5LF / t;
}

double cd_tanh(double x)
{
    double a = abs(x), r;
    if (cd_nan(x) || a < 2.7755575615628914e-17LF) return x; // 2^-55
    if (a > 22.0LF) r = 1.0LF;
    else if (a >= 1.0LF) r = 1.0LF - 2.0LF / (cd_expm1(2.0LF * a) + 2.0LF);
    else {
        double t = cd_expm1(-2.0LF * a);
        r = -t / (t + 2.0LF);
    }
    return cd_copysign(r, x);
}

double cd_asinh(double x)
{
    double a = abs(x), r;
    if (cd_nan(x) || a < 3.7252902984619141e-09LF || cd_hi(a) == 0x7ff00000u) return x;
    if (a > 268435456.0LF) r = cd_log_pos(a) + CD_LN2; // 2^28: sqrt(x^2 + 1) is |x|
    else if (a > 2.0LF) r = cd_log_pos(2.0LF * a + 1.0LF / (sqrt(a * a + 1.0LF) + a));
    else r = cd_log1p(a + a * a / (1.0LF + sqrt(1.0LF + a * a)));
    return cd_copysign(r, x);
}

double cd_acosh(double x)
{
    if (cd_nan(x) || x < 1.0LF) return cd_qnan();
    if (x == 1.0LF) return 0.0LF;
    if (cd_hi(x) == 0x7ff00000u) return x;
    if (x > 268435456.0LF) return cd_log_pos(x) + CD_LN2;
    if (x > 2.0LF) return cd_log_pos(2.0LF * x - 1.0LF / (x + sqrt(x * x - 1.0LF)));
    double t = x - 1.0LF;
    return cd_log1p(t + sqrt(2.0LF * t + t * t));
}

double cd_atanh(double x)
{
    double a = abs(x), r;
    if (cd_nan(x) || a > 1.0LF) return cd_qnan();
    if (a == 1.0LF) return cd_copysign(cd_inf(), x);
    if (a < 3.7252902984619141e-09LF) return x;
    if (a < 0.5LF) {
        double t = a + a;
        r = 0.5LF * cd_log1p(t + t * a / (1.0LF - a));
    } else {
        r = 0.5LF * cd_log1p((a + a) / (1.0LF - a));
    }
    return cd_copysign(r, x);
}

// 1 / (1 + e^-x), the reference's formula: below x = -709.78 it gives 0 where
// the true value is subnormal, on both paths alike.
double cd_sigmoid(double x)
{
    if (cd_nan(x)) return x;
    return 1.0LF / (1.0LF + cd_exp(-x));
}

// cbrt: an estimate from the exponent bits, then Newton steps (each squares
// the relative error: 3% -> 1e-3 -> 1e-6 -> 1e-12 -> 1e-24), the last one as
// y + (x / y^2 - y) / 3, whose difference is exact (Sterbenz): no fma needed.
double cd_cbrt(double x)
{
    uint h = cd_hi(x) & 0x7fffffffu, l = cd_lo(x);
    if (h >= 0x7ff00000u || (h == 0u && l == 0u)) return x; // NaN, ±Inf, ±0
    double a = abs(x);
    int sc = 0;
    if (h < 0x00100000u) { // subnormal: scale by 2^54, the root by 2^-18
        a *= cd_pow2i(54);
        h = cd_hi(a);
        sc = 18;
    } else if (h >= 0x7e700000u) { // past 2^1000, y^3 in the steps could overflow
        a *= cd_pow2i(-54);
        h = cd_hi(a);
        sc = -18;
    }
    double y = cd_make(h / 3u + 715094163u, 0u); // 2^(e/3) with a linear mantissa guess
    for (int i = 0; i < 4; i++)
        y = y - (y * y * y - a) / (3.0LF * y * y);
    precise double d = a / (y * y) - y;
    y = y + d / 3.0LF;
    if (sc != 0) y *= cd_pow2i(-sc);
    return cd_copysign(y, x);
}

// ---- inverse trigonometry -------------------------------------------------

#define CD_PI_HI 3.1415926535897931LF
#define CD_PI_LO 1.2246467991473532e-16LF
#define CD_PI_2_HI 1.5707963267948966LF
#define CD_PI_2_LO 6.123233995736766e-17LF
#define CD_PI_4_HI 0.78539816339744828LF
#define CD_PI_4_LO 3.061616997868383e-17LF

// atan(t) for |t| <= tan(pi/8), Taylor to t^45: the first omitted term is
// below 2^-60 of the result.
double cd_atan_poly(double t)
{
    double z = t * t, p = 1.0LF / 45.0LF;
    for (int k = 21; k >= 1; k--) // constant trip count: unrolled by drivers
        p = (((k & 1) != 0) ? -1.0LF : 1.0LF) / double(2 * k + 1) + z * p;
    // p now holds -1/3 + z (1/5 - ...), so atan(t) = t + t z p
    return t + t * z * p;
}

// atan(a) for finite a >= 0: 1/a above 1, and an offset of pi/4 above
// tan(pi/8), bring the argument to the polynomial's interval.
double cd_atan_pos(double a)
{
    bool inv = a > 1.0LF;
    if (inv) a = 1.0LF / a;
    double r;
    if (a > 0.41421356237309503LF) {
        double t = (a - 1.0LF) / (a + 1.0LF);
        r = CD_PI_4_HI + (cd_atan_poly(t) + CD_PI_4_LO);
    } else {
        r = cd_atan_poly(a);
    }
    return inv ? CD_PI_2_HI + (CD_PI_2_LO - r) : r;
}

double cd_atan(double x)
{
    if (cd_nan(x)) return x;
    double a = abs(x);
    if (a < 3.7252902984619141e-09LF) return x; // 2^-28: atan(x) rounds to x, ±0 kept
    return cd_copysign(cd_hi(a) == 0x7ff00000u ? CD_PI_2_HI : cd_atan_pos(a), x);
}

// asin(x) = atan(x / sqrt((1 - x)(1 + x))): 1 - |x| is exact from 0.5 up,
// where the cancellation would otherwise be.
double cd_asin(double x)
{
    double a = abs(x);
    if (cd_nan(x) || a > 1.0LF) return cd_qnan();
    if (a < 3.7252902984619141e-09LF) return x;
    if (a == 1.0LF) return cd_copysign(CD_PI_2_HI, x);
    double s = sqrt((1.0LF - a) * (1.0LF + a));
    return cd_copysign(cd_atan_pos(a / s), x);
}

// acos(x) = 2 atan(sqrt((1 - x) / (1 + x))), accurate at both ends.
double cd_acos(double x)
{
    if (cd_nan(x) || abs(x) > 1.0LF) return cd_qnan();
    if (x == 1.0LF) return 0.0LF;
    if (x == -1.0LF) return CD_PI_HI;
    return 2.0LF * cd_atan_pos(sqrt((1.0LF - x) / (1.0LF + x)));
}

// |x| (finite, nonzero) as m 2^e with m in [1, 2); subnormals through 2^54.
double cd_frexp1(double x, out int e)
{
    double a = abs(x);
    int bias = 0;
    if (cd_hi(a) < 0x00100000u) { a *= cd_pow2i(54); bias = 54; }
    uint h = cd_hi(a);
    e = int(h >> 20) - 1023 - bias;
    return cd_make((h & 0x000fffffu) | 0x3ff00000u, cd_lo(a));
}

// atan2 with C's table of special cases, decided on the bits; the quotient is
// formed from mantissas so that no operand overflows or underflows it.
double cd_atan2(double y, double x)
{
    if (cd_nan(x) || cd_nan(y)) return cd_qnan();
    uint bx = cd_hi(x) & 0x7fffffffu, by = cd_hi(y) & 0x7fffffffu;
    bool xzero = bx == 0u && cd_lo(x) == 0u, yzero = by == 0u && cd_lo(y) == 0u;
    bool xinf = bx == 0x7ff00000u && cd_lo(x) == 0u, yinf = by == 0x7ff00000u && cd_lo(y) == 0u;
    bool xneg = cd_signbit(x);
    double r;
    if (yzero)
        r = xneg ? CD_PI_HI : 0.0LF;
    else if (xzero)
        r = CD_PI_2_HI;
    else if (yinf)
        r = xinf ? (xneg ? 3.0LF * CD_PI_4_HI : CD_PI_4_HI) : CD_PI_2_HI;
    else if (xinf)
        r = xneg ? CD_PI_HI : 0.0LF;
    else {
        int ey, ex;
        double my = cd_frexp1(y, ey), mx = cd_frexp1(x, ex);
        int d = ey - ex;
        if (d > 60) {
            r = CD_PI_2_HI;
        } else if (d < -60) { // |y/x| < 2^-59: atan is the quotient itself (or pi minus it)
            r = xneg ? CD_PI_HI : d < -1080 ? 0.0LF : cd_scale(my / mx, d);
        } else {
            double q = my / mx * cd_pow2i(d);
            double t = cd_atan_pos(q);
            r = xneg ? CD_PI_HI + (CD_PI_LO - t) : t;
        }
    }
    return cd_copysign(r, y);
}

// ---- sin, cos, tan --------------------------------------------------------

// |x| = (q + f) pi/2 with |f| <= 1/2 by Payne-Hanek on the bits for every
// finite x: 192 bits of 2/pi from the first one that matters, against the
// 53-bit mantissa, in exact integer products. 192 bits leave 2^-117 of slack
// below the closest approach of a double to a multiple of pi/2 (about 2^-62).
const uint CD_2_PI[42] = uint[42](0u, 0u, 0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u,
    0xdb629599u, 0x3c439041u, 0xfe5163abu, 0xdebbc561u, 0xb7246e3au, 0x424dd2e0u, 0x06492eeau,
    0x09d1921cu, 0xfe1deb1cu, 0xb129a73eu, 0xe88235f5u, 0x2ebb4484u, 0xe99c7026u, 0xb45f7e41u,
    0x3991d639u, 0x835339f4u, 0x9c845f8bu, 0xbdf9283bu, 0x1ff897ffu, 0xde05980fu, 0xef2f118bu,
    0x5a0a6d1fu, 0x6d367ecfu, 0x27cb09b7u, 0x4f463f66u, 0x9e5fea2du, 0x7527bac7u, 0xebe5f17bu,
    0x3d0739f7u, 0x8a5292eau, 0x6bfb5fb1u, 0x1f8d5d08u, 0x56033046u, 0xfc7b6babu, 0xf0cfbc20u,
    0x9af4361du); // 2/pi's bits after two zero words: word t holds bits 32(t-2)+1 .. 32(t-1)
uint cd_win(int i, int sh)
{
    return sh == 0 ? CD_2_PI[i] : (CD_2_PI[i] << sh) | (CD_2_PI[i + 1] >> (32 - sh));
}
// acc += (h:l) 2^(32 k), carrying upward.
void cd_acc(inout uint acc[8], int k, uint h, uint l)
{
    uint c;
    acc[k] = uaddCarry(acc[k], l, c);
    uint c2;
    acc[k + 1] = uaddCarry(acc[k + 1], h, c2);
    uint carry = c2;
    uint t;
    acc[k + 1] = uaddCarry(acc[k + 1], c, t);
    carry += t;
    for (int j = k + 2; j < 8 && carry != 0u; j++) {
        acc[j] = uaddCarry(acc[j], carry, t);
        carry = t;
    }
}
// r + rl in [-pi/4, pi/4] (rl: the low part) and the quadrant q (mod 4) of
// a = |x|, finite.
double cd_rem_pio2(double a, out int q, out double rl)
{
    rl = 0.0LF;
    q = 0;
    if (a <= CD_PI_4_HI) return a;
    uint h = cd_hi(a);
    uint m1 = (h & 0x000fffffu) | 0x00100000u, m0 = cd_lo(a); // a = (m1:m0) 2^(e-52)
    int e = int(h >> 20) - 1023;
    // Bits of 2/pi before position e - 53 add multiples of 4: start there.
    int g = e - 53 + 63, i = g >> 5, sh = g & 31;
    uint w[6];
    for (int j = 0; j < 6; j++)
        w[j] = cd_win(i + j, sh); // w[0] the most significant
    uint acc[8] = uint[8](0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u);
    for (int j = 0; j < 6; j++) {
        uint ph, pl;
        umulExtended(m0, w[5 - j], ph, pl);
        cd_acc(acc, j, ph, pl);
        umulExtended(m1, w[5 - j], ph, pl);
        cd_acc(acc, j + 1, ph, pl);
    }
    // a 2/pi = acc 2^-190 mod 4: the quadrant is bits 190-191, the fraction below.
    q = int(acc[5] >> 30);
    uint f[6] = uint[6](acc[5] & 0x3fffffffu, acc[4], acc[3], acc[2], acc[1], acc[0]);
    bool neg = (f[0] & 0x20000000u) != 0u; // f >= 1/2: round q up, f = -(1 - f)
    if (neg) {
        q += 1;
        f[0] = ~f[0] & 0x3fffffffu;
        for (int j = 1; j < 6; j++)
            f[j] = ~f[j];
    }
    int j0 = 0;
    while (j0 < 6 && f[j0] == 0u)
        j0++;
    if (j0 == 6) return 0.0LF;
    uint f1 = j0 + 1 < 6 ? f[j0 + 1] : 0u, f2 = j0 + 2 < 6 ? f[j0 + 2] : 0u, f3 = j0 + 3 < 6 ? f[j0 + 3] : 0u;
    int s = 31 - findMSB(f[j0]);
    uint ta = s == 0 ? f[j0] : (f[j0] << s) | (f1 >> (32 - s));
    uint tb = s == 0 ? f1 : (f1 << s) | (f2 >> (32 - s));
    uint tc = s == 0 ? f2 : (f2 << s) | (f3 >> (32 - s));
    double sc = cd_pow2i(-30 - 32 * j0 - s - 32); // the weight of tb's last bit
    double fh = (double(ta) * 4294967296.0LF + double(tb & 0xfffff800u)) * sc; // 53 bits: exact
    double fl = (double(tb & 0x7ffu) + double(tc) * 2.3283064365386963e-10LF) * sc; // tc: 2^-32 of a tb unit
    double p, pe;
    cd_two_prod(fh, CD_PI_2_HI, p, pe);
    precise double lo = pe + (fh * CD_PI_2_LO + fl * CD_PI_2_HI);
    precise double r = p + lo;
    rl = lo - (r - p);
    if (neg) {
        r = -r;
        rl = -rl;
    }
    return r;
}
// sin and cos of r + rl, |r| <= pi/4, Taylor to r^27 and r^28.
double cd_sin_poly(double r, double rl)
{
    double z = r * r, p = -1.0LF / 10888869450418352160768000000.0LF; // -1/27!
    p = 1.0LF / 15511210043330985984000000.0LF + z * p;                // 1/25!
    p = -1.0LF / 25852016738884976640000.0LF + z * p;                  // -1/23!
    p = 1.0LF / 51090942171709440000.0LF + z * p;
    p = -1.0LF / 121645100408832000.0LF + z * p;
    p = 1.0LF / 355687428096000.0LF + z * p;
    p = -1.0LF / 1307674368000.0LF + z * p;
    p = 1.0LF / 6227020800.0LF + z * p;
    p = -1.0LF / 39916800.0LF + z * p;
    p = 1.0LF / 362880.0LF + z * p;
    p = -1.0LF / 5040.0LF + z * p;
    p = 1.0LF / 120.0LF + z * p;
    p = -1.0LF / 6.0LF + z * p;
    return r + (r * z * p + rl * (1.0LF - 0.5LF * z));
}
double cd_cos_poly(double r, double rl)
{
    double z = r * r, p = 1.0LF / 304888344611713860501504000000.0LF; // 1/28!
    p = -1.0LF / 403291461126605635584000000.0LF + z * p;              // -1/26!
    p = 1.0LF / 620448401733239439360000.0LF + z * p;                  // 1/24!
    p = -1.0LF / 1124000727777607680000.0LF + z * p;
    p = 1.0LF / 2432902008176640000.0LF + z * p;
    p = -1.0LF / 6402373705728000.0LF + z * p;
    p = 1.0LF / 20922789888000.0LF + z * p;
    p = -1.0LF / 87178291200.0LF + z * p;
    p = 1.0LF / 479001600.0LF + z * p;
    p = -1.0LF / 3628800.0LF + z * p;
    p = 1.0LF / 40320.0LF + z * p;
    p = -1.0LF / 720.0LF + z * p;
    p = 1.0LF / 24.0LF + z * p;
    double hz = 0.5LF * z, w = 1.0LF - hz;
    // 1 - z/2 loses the bits of z/2 that fall off: put them back, then the rest.
    return w + (((1.0LF - w) - hz) + (z * z * p - r * rl));
}
bool cd_finite(double x) { return (cd_hi(x) & 0x7ff00000u) != 0x7ff00000u; }
double cd_sin(double x)
{
    if (!cd_finite(x)) return cd_qnan();
    if (abs(x) < 7.4505805969238281e-09LF) return x; // 2^-27: sin(x) rounds to x, ±0 kept
    int q;
    double rl, r = cd_rem_pio2(abs(x), q, rl);
    double v = (q & 1) == 0 ? cd_sin_poly(r, rl) : cd_cos_poly(r, rl);
    v = (q & 2) == 0 ? v : -v;
    return cd_signbit(x) ? -v : v;
}
double cd_cos(double x)
{
    if (!cd_finite(x)) return cd_qnan();
    int q;
    double rl, r = cd_rem_pio2(abs(x), q, rl);
    double v = (q & 1) == 0 ? cd_cos_poly(r, rl) : cd_sin_poly(r, rl);
    return ((q + 1) & 2) == 0 ? v : -v;
}
// tan as sin / cos of the reduced argument; odd quadrants take -cos / sin.
double cd_tan(double x)
{
    if (!cd_finite(x)) return cd_qnan();
    if (abs(x) < 7.4505805969238281e-09LF) return x;
    int q;
    double rl, r = cd_rem_pio2(abs(x), q, rl);
    double sn = cd_sin_poly(r, rl), cs = cd_cos_poly(r, rl);
    double t = (q & 1) == 0 ? sn / cs : -cs / sn;
    return cd_signbit(x) ? -t : t;
}

// ---- remainder ------------------------------------------------------------

// C's fmod, exactly: r = |x| minus the largest |y| 2^k not above it, until
// r < |y|. Each subtraction is exact (t <= r < 2t) and at least halves r, so
// the loop runs at most 2,098 times, the span of double exponents.
double cd_fmod(double x, double y)
{
    if (cd_nan(x) || cd_nan(y) || !cd_finite(x)) return cd_qnan();
    uint by = cd_hi(y) & 0x7fffffffu;
    if (by == 0u && cd_lo(y) == 0u) return cd_qnan();
    if (!cd_finite(y)) return x;
    double ax = abs(x), ay = abs(y);
    if (ax < ay) return x;
    int ey, er;
    double my = cd_frexp1(ay, ey), r = ax;
    for (int i = 0; i < 2100 && r >= ay; i++) {
        cd_frexp1(r, er);
        double t = cd_scale(my, er); // my 2^er: |y| times a power of two, at r's exponent
        if (t > r) t *= 0.5LF;
        r -= t;
    }
    return cd_copysign(r, x);
}

// ---- the error function ---------------------------------------------------

#define CD_2_SQRTPI 1.1283791670955126LF
#define CD_1_SQRTPI 0.56418958354775628LF

// erf(x) for |x| < 1/2: its Taylor series, 2/sqrt(pi) sum (-1)^n x^(2n+1) /
// (n! (2n+1)), to n = 18 (the first omitted term is below 2^-80), by Horner;
// below 1/2 the alternating terms cancel little.
const double CD_ERF_T[19] = double[19](1.00000000000000000e+00LF, -3.33333333333333315e-01LF,
    1.00000000000000006e-01LF, -2.38095238095238082e-02LF, 4.62962962962962937e-03LF,
    -7.57575757575757575e-04LF, 1.06837606837606838e-04LF, -1.32275132275132281e-05LF,
    1.45891690009337058e-06LF, -1.45038522231504685e-07LF, 1.31225329638028058e-08LF,
    -1.08922210371485731e-09LF, 8.35070279514723971e-11LF, -5.94779401363763541e-12LF,
    3.95542951645852569e-13LF, -2.46682701026445706e-14LF, 1.44832646435981379e-15LF,
    -8.03273501241577328e-17LF, 4.22140728880708822e-18LF); // (-1)^n / (n! (2n + 1))
double cd_erf_small(double x)
{
    double z = x * x, p = CD_ERF_T[18];
    for (int n = 17; n >= 1; n--)
        p = CD_ERF_T[n] + z * p;
    // 2/sqrt(pi) x (1 + z p): the small correction added last keeps its digits
    return CD_2_SQRTPI * x + CD_2_SQRTPI * x * (z * p);
}

// erfc(a) for a >= 1/2 by the continued fraction e^(-a^2) / sqrt(pi) /
// (a + (1/2) / (a + 1 / (a + (3/2) / (a + ...)))), evaluated from a depth at
// which it has converged to 1e-17 (measured: 750 terms at a = 1/2, 200 at 1,
// 70 at 2, 20 at 5). e^(-a^2) takes a^2 as an exact sum (Dekker) and is scaled
// once at the end, so results deep in the subnormals round once.
double cd_erfc_large(double a)
{
    if (a > 27.3LF) return 0.0LF; // erfc(27.3) is below the least subnormal
    int depth = a < 0.6LF ? 760 : a < 0.75LF ? 550 : a < 1.0LF ? 330 : a < 1.25LF ? 210 : a < 1.5LF ? 140
              : a < 2.0LF ? 110 : a < 3.0LF ? 80 : a < 5.0LF ? 40 : a < 10.0LF ? 25 : 15;
    double t = a;
    for (int n = depth; n >= 1; n--)
        t = a + (0.5LF * double(n)) / t;
    double z, zl;
    cd_two_prod(a, a, z, zl);
    int k;
    double r = cd_reduce(-z, k);
    double p = 1.0LF + cd_expm1_poly(r - zl);
    return cd_scale(p * (CD_1_SQRTPI / t), k);
}

double cd_erf(double x)
{
    if (cd_nan(x)) return x;
    double a = abs(x);
    if (x == 0.0LF) return x; // ±0
    if (a < 0.5LF) return cd_erf_small(x); // subnormals too: 2 x / sqrt(pi)
    if (a > 6.0LF) return cd_copysign(1.0LF, x); // erfc(6) < 2^-54
    return cd_copysign(1.0LF - cd_erfc_large(a), x);
}

double cd_erfc(double x)
{
    if (cd_nan(x)) return x;
    double a = abs(x), r;
    if (a < 0.5LF) return 1.0LF - cd_erf_small(x);
    r = cd_erfc_large(a);
    return cd_signbit(x) ? 2.0LF - r : r;
}

// erf_inv: Giles' single-precision guess (as the f32 shader), then Newton
// steps on erf, or from |y| = 0.5 up on log(erfc), where 1 - |y| is exact:
// in the tail erfc is nearly exponential, and Newton on it directly would
// overshoot. Each step squares the error once close: 1e-7 -> 1e-14 -> 1e-28.
double cd_erf_inv(double y)
{
    double a = abs(y);
    if (cd_nan(y) || a > 1.0LF) return cd_qnan();
    if (a == 1.0LF) return cd_copysign(cd_inf(), y);
    if (a < 1.0e-9LF) return 0.88622692545275794LF * y; // sqrt(pi)/2 y; the cube term is below an ulp
    double c = 1.0LF - a; // exact from 0.5 up
    double w = -cd_log_pos((1.0LF - a) * (1.0LF + a)), p;
    if (w < 5.0LF) {
        w = w - 2.5LF;
        p = 2.81022636e-08LF;
        p = 3.43273939e-07LF + p * w;
        p = -3.5233877e-06LF + p * w;
        p = -4.39150654e-06LF + p * w;
        p = 0.00021858087LF + p * w;
        p = -0.00125372503LF + p * w;
        p = -0.00417768164LF + p * w;
        p = 0.246640727LF + p * w;
        p = 1.50140941LF + p * w;
    } else {
        w = sqrt(w) - 3.0LF;
        p = -0.000200214257LF;
        p = 0.000100950558LF + p * w;
        p = 0.00134934322LF + p * w;
        p = -0.00367342844LF + p * w;
        p = 0.00573950773LF + p * w;
        p = -0.0076224613LF + p * w;
        p = 0.00943887047LF + p * w;
        p = 1.00167406LF + p * w;
        p = 2.83297682LF + p * w;
    }
    double x = p * a, logc = a < 0.5LF ? 0.0LF : cd_log_pos(c);
    for (int i = 0; i < 8; i++) { // the far tail, where the guess is poorest, takes 5
        double d = CD_2_SQRTPI * cd_exp(-x * x), step;
        if (a < 0.5LF) {
            step = -(cd_erf(x) - a) / d;
        } else {
            double e = cd_erfc(x);
            step = (cd_log_pos(e) - logc) * e / d;
        }
        x += step;
        if (abs(step) <= 1e-17LF * x)
            break;
    }
    return cd_copysign(x, y);
}

#endif
