#ifndef FLOATBITS_GLSL
#define FLOATBITS_GLSL
// fb_: f32 comparisons, sign-bit ops and truth decided on the bits. Vulkan lets a
// driver flush subnormals in any float instruction, and the H200's does so
// with no way to ask otherwise (shaderDenormPreserveFloat32 is false): there
// 1e-40 == 0, 1e-40 > 0 is false and -x or |x| of a subnormal is 0. These ops
// only order or pick values, so integer ops make them exact everywhere.
uint fb_mag(float x) { return floatBitsToUint(x) & 0x7fffffffu; }
bool fb_nan(float x) { return fb_mag(x) > 0x7f800000u; }
bool fb_zero(float x) { return fb_mag(x) == 0u; }
// Orders the bits as IEEE orders the values (NaN aside), with -0 below +0.
uint fb_key(float x)
{
    uint b = floatBitsToUint(x);
    return (b & 0x80000000u) != 0u ? ~b : b | 0x80000000u;
}
bool fb_eq(float a, float b)
{
    return !fb_nan(a) && !fb_nan(b) && (floatBitsToUint(a) == floatBitsToUint(b) || (fb_zero(a) && fb_zero(b)));
}
bool fb_lt(float a, float b)
{
    return !fb_nan(a) && !fb_nan(b) && !(fb_zero(a) && fb_zero(b)) && fb_key(a) < fb_key(b);
}
bool fb_true(float x) { return !fb_zero(x); } // NaN is truthy, as in C
float fb_neg(float x) { return uintBitsToFloat(floatBitsToUint(x) ^ 0x80000000u); }
float fb_abs(float x) { return uintBitsToFloat(fb_mag(x)); }
float fb_sign(float x)
{
    if (fb_nan(x)) return x;
    if (fb_zero(x)) return 0.0;
    return uintBitsToFloat((floatBitsToUint(x) & 0x80000000u) | 0x3f800000u);
}
#endif
