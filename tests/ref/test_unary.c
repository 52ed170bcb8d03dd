/* test_unary.c — ref_unary: signs, rounding, integer wraparound, bit counts,
 * predicates, and the libm oracle for math functions. */
#include <criterion/criterion.h>

#include "helpers.h"

static void run_f32(enum ref_unop op, float *x, float *y, int n)
{
    ref_view vx = view(VKT_F32, x, 1, n), vy = view(VKT_F32, y, 1, n);
    cr_assert_eq(ref_unary(op, &vx, &vy), VKT_OK);
}

static void run_s32(enum ref_unop op, int32_t *x, int32_t *y, int n)
{
    ref_view vx = view(VKT_S32, x, 1, n), vy = view(VKT_S32, y, 1, n);
    cr_assert_eq(ref_unary(op, &vx, &vy), VKT_OK);
}

static void run_u8(enum ref_unop op, uint8_t *x, uint8_t *y, int n)
{
    ref_view vx = view(VKT_U8, x, 1, n), vy = view(VKT_U8, y, 1, n);
    cr_assert_eq(ref_unary(op, &vx, &vy), VKT_OK);
}

Test(ref_unary, float_sign_abs_negate)
{
    float x[] = {-2.0f, -0.0f, 0.0f, 3.0f, NAN, -INFINITY}, y[6];
    run_f32(UN_sign, x, y, 6);
    float ws[] = {-1, 0, 0, 1, NAN, -1};
    EXPECT_F32(y, ws);
    cr_expect(!signbit(y[1]), "sign(-0) is 0");
    run_f32(UN_abs, x, y, 6);
    float wa[] = {2, 0, 0, 3, NAN, INFINITY};
    EXPECT_F32(y, wa);
    cr_expect(!signbit(y[1]));
    run_f32(UN_negate, x, y, 6);
    float wn[] = {2, 0, -0.0f, -3, NAN, INFINITY};
    EXPECT_F32(y, wn);
    cr_expect(!signbit(y[1]) && signbit(y[2]));
}

Test(ref_unary, round_half_away_floor_ceil)
{
    float x[] = {0.5f, -0.5f, 1.5f, 2.5f, -2.5f, 0.49999997f, -1.2f}, y[7];
    run_f32(UN_round, x, y, 7);
    float wr[] = {1, -1, 2, 3, -3, 0, -1};
    EXPECT_F32(y, wr);
    run_f32(UN_floor, x, y, 7);
    float wf[] = {0, -1, 1, 2, -3, 0, -2};
    EXPECT_F32(y, wf);
    run_f32(UN_ceil, x, y, 7);
    float wc[] = {1, -0.0f, 2, 3, -2, 1, -1};
    EXPECT_F32(y, wc);
    double d[] = {2.5, -0.5}, e[2];
    ref_view vd = view(VKT_F64, d, 1, 2), ve = view(VKT_F64, e, 1, 2);
    ref_unary(UN_round, &vd, &ve);
    double wd[] = {3, -1};
    EXPECT_F64(e, wd);
}

Test(ref_unary, s32_wraps_and_identities)
{
    int32_t x[] = {INT32_MIN, -5, 0, 7, INT32_MAX}, y[5];
    run_s32(UN_negate, x, y, 5);
    int32_t wn[] = {INT32_MIN, 5, 0, -7, -INT32_MAX};
    EXPECT_INT(y, wn);
    run_s32(UN_abs, x, y, 5);
    int32_t wa[] = {INT32_MIN, 5, 0, 7, INT32_MAX};
    EXPECT_INT(y, wa);
    run_s32(UN_sign, x, y, 5);
    int32_t ws[] = {-1, -1, 0, 1, 1};
    EXPECT_INT(y, ws);
    for (enum ref_unop op = UN_floor; op <= UN_round; op++) {
        run_s32(op, x, y, 5);
        EXPECT_INT(y, x);
    }
}

Test(ref_unary, u8_negate_sign_abs)
{
    uint8_t x[] = {0, 1, 7, 255}, y[4];
    run_u8(UN_negate, x, y, 4);
    uint8_t wn[] = {0, 255, 249, 1};
    EXPECT_INT(y, wn);
    run_u8(UN_sign, x, y, 4);
    uint8_t ws[] = {0, 1, 1, 1};
    EXPECT_INT(y, ws);
    run_u8(UN_abs, x, y, 4);
    EXPECT_INT(y, x);
}

Test(ref_unary, bit_counts)
{
    int32_t x[] = {0, 1, -1, 0x00010000, 7}, y[5];
    run_s32(UN_count_leading_zeros, x, y, 5);
    int32_t wc[] = {32, 31, 0, 15, 29};
    EXPECT_INT(y, wc);
    run_s32(UN_population_count, x, y, 5);
    int32_t wp[] = {0, 1, 32, 1, 3};
    EXPECT_INT(y, wp);
    run_s32(UN_bitwise_not, x, y, 5);
    int32_t wb[] = {-1, -2, 0, ~0x00010000, -8};
    EXPECT_INT(y, wb);

    uint8_t u[] = {0, 1, 128, 15, 255}, v[5];
    run_u8(UN_count_leading_zeros, u, v, 5);
    uint8_t uc[] = {8, 7, 0, 4, 0};
    EXPECT_INT(v, uc);
    run_u8(UN_population_count, u, v, 5);
    uint8_t up[] = {0, 1, 1, 4, 8};
    EXPECT_INT(v, up);
    run_u8(UN_bitwise_not, u, v, 5);
    uint8_t ub[] = {255, 254, 127, 240, 0};
    EXPECT_INT(v, ub);
}

Test(ref_unary, predicates_give_u8)
{
    float x[] = {NAN, -INFINITY, INFINITY, 1.0f, 0.0f, -0.0f};
    uint8_t y[6];
    ref_view vx = view(VKT_F32, x, 1, 6), vy = view(VKT_U8, y, 1, 6);
    ref_unary(UN_is_nan, &vx, &vy);
    uint8_t wn[] = {1, 0, 0, 0, 0, 0};
    EXPECT_INT(y, wn);
    ref_unary(UN_is_infinity, &vx, &vy);
    uint8_t wi[] = {0, 1, 1, 0, 0, 0};
    EXPECT_INT(y, wi);
    ref_unary(UN_logical_not, &vx, &vy);
    uint8_t wl[] = {0, 0, 0, 0, 1, 1};
    EXPECT_INT(y, wl);

    int32_t s[] = {0, 5, INT32_MIN};
    uint8_t z[3];
    ref_view vs = view(VKT_S32, s, 1, 3), vz = view(VKT_U8, z, 1, 3);
    ref_unary(UN_is_nan, &vs, &vz);
    uint8_t w0[] = {0, 0, 0};
    EXPECT_INT(z, w0);
    ref_unary(UN_is_infinity, &vs, &vz);
    EXPECT_INT(z, w0);
    ref_unary(UN_logical_not, &vs, &vz);
    uint8_t wsl[] = {1, 0, 0};
    EXPECT_INT(z, wsl);
}

/* The compiler folds libm calls on constants with correctly rounded
 * arithmetic, which may differ from the runtime libm by an ulp: hide them. */
static float opaque(float v)
{
    volatile float t = v;
    return t;
}

Test(ref_unary, f32_math_is_libm_float)
{
    float x[] = {1.0f, -100.0f, 0.0f, 4.0f, -27.0f, 0.3f, -1.0f}, y[7];
    run_f32(UN_exp, x, y, 7);
    cr_expect_eq(y[0], expf(opaque(1.0f)));
    cr_expect_eq(y[5], expf(opaque(0.3f)));
    run_f32(UN_sigmoid, x, y, 7);
    cr_expect_eq(y[2], 0.5f);
    cr_expect_eq(y[1], 0.0f);
    cr_expect_eq(y[0], 1.0f / (1.0f + expf(opaque(-1.0f))));
    run_f32(UN_rsqrt, x, y, 7);
    cr_expect_eq(y[3], 0.5f);
    cr_expect(isinf(y[2]) && y[2] > 0);
    run_f32(UN_cbrt, x, y, 7);
    cr_expect_eq(y[4], -3.0f);
    run_f32(UN_sqrt, x, y, 7);
    cr_expect(isnan(y[6]));
    run_f32(UN_log, x, y, 7);
    cr_expect(isinf(y[2]) && y[2] < 0);
    run_f32(UN_tanh, x, y, 7);
    cr_expect_eq(y[5], tanhf(opaque(0.3f)));
    run_f32(UN_erf, x, y, 7);
    cr_expect_eq(y[5], erff(opaque(0.3f)));
    run_f32(UN_erf_inv, x, y, 7);
    cr_expect_eq(y[2], 0.0f);
    cr_expect(isinf(y[6]) && y[6] < 0);
    cr_expect(isnan(y[0]) == 0 && isinf(y[0]));
}

Test(ref_unary, f64_math_and_rank0)
{
    double x = 1.0, y = 0;
    ref_view vx = view(VKT_F64, &x, 0), vy = view(VKT_F64, &y, 0);
    ref_unary(UN_exp, &vx, &vy);
    cr_expect(fabs(y - 2.718281828459045) <= 4.5e-16);
    ref_unary(UN_atan, &vx, &vy);
    cr_expect(fabs(y - 0.7853981633974483) <= 1.2e-16);
    x = -1e-300;
    ref_unary(UN_expm1, &vx, &vy);
    cr_expect_eq(y, -1e-300);
}

Test(ref_unary, rejects_undefined_dtypes)
{
    int32_t s[2], t[2];
    float f[2], g[2];
    ref_view vs = view(VKT_S32, s, 1, 2), vt = view(VKT_S32, t, 1, 2);
    ref_view vf = view(VKT_F32, f, 1, 2), vg = view(VKT_F32, g, 1, 2);
    cr_expect_eq(ref_unary(UN_exp, &vs, &vt), VKT_EDTYPE);
    cr_expect_eq(ref_unary(UN_count_leading_zeros, &vf, &vg), VKT_EDTYPE);
    cr_expect_eq(ref_unary((enum ref_unop)UN__COUNT, &vf, &vg), VKT_EDTYPE);
}
