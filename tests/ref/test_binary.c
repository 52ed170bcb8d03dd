/* test_binary.c — ref_binary (integer wraparound, division by zero, shifts,
 * NaN rules, broadcasting), ref_select and ref_clip. */
#include <criterion/criterion.h>

#include "helpers.h"

static void bin_s32(enum ref_binop op, int32_t *a, int32_t *b, int32_t *y, int n)
{
    ref_view va = view(VKT_S32, a, 1, n), vb = view(VKT_S32, b, 1, n), vy = view(VKT_S32, y, 1, n);
    cr_assert_eq(ref_binary(op, &va, &vb, &vy), VKT_OK);
}

static void bin_u8(enum ref_binop op, uint8_t *a, uint8_t *b, uint8_t *y, int n)
{
    ref_view va = view(VKT_U8, a, 1, n), vb = view(VKT_U8, b, 1, n), vy = view(VKT_U8, y, 1, n);
    cr_assert_eq(ref_binary(op, &va, &vb, &vy), VKT_OK);
}

static void bin_f32(enum ref_binop op, float *a, float *b, void *y, int n, vkt_dtype out)
{
    ref_view va = view(VKT_F32, a, 1, n), vb = view(VKT_F32, b, 1, n), vy = view(out, y, 1, n);
    cr_assert_eq(ref_binary(op, &va, &vb, &vy), VKT_OK);
}

Test(ref_binary, integer_arithmetic_wraps)
{
    int32_t a[] = {INT32_MAX, INT32_MIN, 65536, -7}, b[] = {1, 1, 65536, 3}, y[4];
    bin_s32(BIN_add, a, b, y, 4);
    int32_t wa[] = {INT32_MIN, INT32_MIN + 1, 131072, -4};
    EXPECT_INT(y, wa);
    bin_s32(BIN_subtract, a, b, y, 4);
    int32_t ws[] = {INT32_MAX - 1, INT32_MAX, 0, -10};
    EXPECT_INT(y, ws);
    bin_s32(BIN_multiply, a, b, y, 4);
    int32_t wm[] = {INT32_MAX, INT32_MIN, 0, -21};
    EXPECT_INT(y, wm);

    uint8_t c[] = {200, 3, 16}, d[] = {100, 5, 16}, z[3];
    bin_u8(BIN_add, c, d, z, 3);
    uint8_t za[] = {44, 8, 32};
    EXPECT_INT(z, za);
    bin_u8(BIN_subtract, c, d, z, 3);
    uint8_t zs[] = {100, 254, 0};
    EXPECT_INT(z, zs);
    bin_u8(BIN_multiply, c, d, z, 3);
    uint8_t zm[] = {32, 15, 0};
    EXPECT_INT(z, zm);
}

Test(ref_binary, quotient_and_remainder_never_trap)
{
    int32_t a[] = {7, -7, 7, -7, 5, INT32_MIN, INT32_MIN, 0}, b[] = {2, 2, -2, -2, 0, -1, 0, 0},
            y[8];
    bin_s32(BIN_quotient, a, b, y, 8);
    int32_t wq[] = {3, -3, -3, 3, 0, INT32_MIN, 0, 0};
    EXPECT_INT(y, wq);
    bin_s32(BIN_remainder, a, b, y, 8);
    int32_t wr[] = {1, -1, 1, -1, 0, 0, 0, 0};
    EXPECT_INT(y, wr);

    uint8_t c[] = {7, 200, 9}, d[] = {2, 0, 10}, z[3];
    bin_u8(BIN_quotient, c, d, z, 3);
    uint8_t zq[] = {3, 0, 0};
    EXPECT_INT(z, zq);
    bin_u8(BIN_remainder, c, d, z, 3);
    uint8_t zr[] = {1, 0, 9};
    EXPECT_INT(z, zr);

    float f[] = {5.5f, -5.5f, 1.0f}, g[] = {2.0f, 2.0f, 0.0f}, h[3];
    bin_f32(BIN_remainder, f, g, h, 3, VKT_F32);
    float wf[] = {1.5f, -1.5f, NAN};
    EXPECT_F32(h, wf);
    float p[] = {1.0f, 0.0f, -1.0f}, q[] = {0.0f, 0.0f, 0.0f};
    bin_f32(BIN_divide, p, q, h, 3, VKT_F32);
    float wd[] = {INFINITY, NAN, -INFINITY};
    EXPECT_F32(h, wd);
}

Test(ref_binary, integer_pow)
{
    int32_t a[] = {2, 3, -2, 1, -1, -1, 2, 0, 2, 3, 0},
            b[] = {10, 0, 3, -5, -3, -4, -1, 0, 32, 20, -1};
    int32_t y[11], w[] = {1024, 1, -8, 1, -1, 1, 0, 1, 0, -808182895, 0};
    bin_s32(BIN_pow, a, b, y, 11);
    EXPECT_INT(y, w);
    uint8_t c[] = {2, 3, 3, 0, 255}, d[] = {8, 5, 6, 0, 2}, z[5], wz[] = {0, 243, 217, 1, 1};
    bin_u8(BIN_pow, c, d, z, 5);
    EXPECT_INT(z, wz);
}

Test(ref_binary, min_max_propagate_nan)
{
    float a[] = {NAN, 1.0f, -0.0f, 0.0f, 2.0f}, b[] = {1.0f, NAN, 0.0f, -0.0f, -3.0f}, y[5];
    bin_f32(BIN_min, a, b, y, 5, VKT_F32);
    float wmin[] = {NAN, NAN, -0.0f, -0.0f, -3.0f};
    EXPECT_F32(y, wmin);
    cr_expect(signbit(y[2]) && signbit(y[3]), "min(-0, +0) is -0 either way round");
    bin_f32(BIN_max, a, b, y, 5, VKT_F32);
    float wmax[] = {NAN, NAN, 0.0f, 0.0f, 2.0f};
    EXPECT_F32(y, wmax);
    cr_expect(!signbit(y[2]) && !signbit(y[3]));
    int32_t c[] = {INT32_MIN, 4}, d[] = {0, -4}, z[2];
    bin_s32(BIN_max, c, d, z, 2);
    int32_t wz[] = {0, 4};
    EXPECT_INT(z, wz);
}

Test(ref_binary, comparisons_follow_ieee)
{
    float a[] = {NAN, NAN, 1.0f, 2.0f, -0.0f}, b[] = {NAN, 1.0f, 2.0f, 2.0f, 0.0f};
    uint8_t y[5];
    bin_f32(BIN_equal, a, b, y, 5, VKT_U8);
    uint8_t we[] = {0, 0, 0, 1, 1};
    EXPECT_INT(y, we);
    bin_f32(BIN_not_equal, a, b, y, 5, VKT_U8);
    uint8_t wne[] = {1, 1, 1, 0, 0};
    EXPECT_INT(y, wne);
    bin_f32(BIN_less, a, b, y, 5, VKT_U8);
    uint8_t wl[] = {0, 0, 1, 0, 0};
    EXPECT_INT(y, wl);
    bin_f32(BIN_less_equal, a, b, y, 5, VKT_U8);
    uint8_t wle[] = {0, 0, 1, 1, 1};
    EXPECT_INT(y, wle);
    bin_f32(BIN_greater, a, b, y, 5, VKT_U8);
    uint8_t wg[] = {0, 0, 0, 0, 0};
    EXPECT_INT(y, wg);
    bin_f32(BIN_greater_equal, a, b, y, 5, VKT_U8);
    uint8_t wge[] = {0, 0, 0, 1, 1};
    EXPECT_INT(y, wge);

    int32_t s[] = {INT32_MIN, 3}, t[] = {INT32_MAX, 3};
    uint8_t z[2];
    ref_view vs = view(VKT_S32, s, 1, 2), vt = view(VKT_S32, t, 1, 2), vz = view(VKT_U8, z, 1, 2);
    ref_binary(BIN_less, &vs, &vt, &vz);
    uint8_t wz[] = {1, 0};
    EXPECT_INT(z, wz);
}

Test(ref_binary, logical_ops_treat_nonzero_as_true)
{
    int32_t a[] = {0, 3, 0, -1}, b[] = {0, 0, 2, 5};
    uint8_t y[4];
    ref_view va = view(VKT_S32, a, 1, 4), vb = view(VKT_S32, b, 1, 4), vy = view(VKT_U8, y, 1, 4);
    ref_binary(BIN_logical_and, &va, &vb, &vy);
    uint8_t wa[] = {0, 0, 0, 1};
    EXPECT_INT(y, wa);
    ref_binary(BIN_logical_or, &va, &vb, &vy);
    uint8_t wo[] = {0, 1, 1, 1};
    EXPECT_INT(y, wo);
    ref_binary(BIN_logical_xor, &va, &vb, &vy);
    uint8_t wx[] = {0, 1, 1, 0};
    EXPECT_INT(y, wx);
    float f[] = {NAN, NAN}, g[] = {0.0f, 1.0f};
    bin_f32(BIN_logical_and, f, g, y, 2, VKT_U8);
    uint8_t wf[] = {0, 1};
    EXPECT_INT(y, wf);
}

Test(ref_binary, bitwise_and_shifts)
{
    int32_t a[] = {12, -1, 1, 1, 1, 3, -8, -8, 8, -1, 8, INT32_MIN};
    int32_t b[] = {10, 5, 31, 32, -1, 1, 1, 40, 40, 31, -1, 31};
    int32_t y[12];
    bin_s32(BIN_bitwise_and, a, b, y, 2);
    int32_t wand[] = {8, 5};
    EXPECT_INT(y, wand);
    bin_s32(BIN_bitwise_or, a, b, y, 2);
    int32_t wor[] = {14, -1};
    EXPECT_INT(y, wor);
    bin_s32(BIN_bitwise_xor, a, b, y, 2);
    int32_t wxor[] = {6, -6};
    EXPECT_INT(y, wxor);
    bin_s32(BIN_left_shift, a, b, y, 12);
    int32_t wl[] = {12288, -32, INT32_MIN, 0, 0, 6, -16, 0, 0, INT32_MIN, 0, 0};
    EXPECT_INT(y, wl);
    bin_s32(BIN_right_shift, a, b, y, 12);
    int32_t wr[] = {0, -1, 0, 0, 0, 1, -4, -1, 0, -1, 0, -1};
    EXPECT_INT(y, wr);

    uint8_t c[] = {1, 1, 255, 128, 255, 3}, d[] = {7, 8, 1, 7, 8, 200}, z[6];
    bin_u8(BIN_left_shift, c, d, z, 6);
    uint8_t zl[] = {128, 0, 254, 0, 0, 0};
    EXPECT_INT(z, zl);
    bin_u8(BIN_right_shift, c, d, z, 6);
    uint8_t zr[] = {0, 0, 127, 1, 0, 0};
    EXPECT_INT(z, zr);
}

Test(ref_binary, rejects_undefined_dtypes)
{
    float f[1] = {1}, g[1] = {1}, h[1];
    int32_t s[1] = {1}, t[1] = {1}, u[1];
    cr_expect_eq(ref_binary(BIN_bitwise_and, &(ref_view){VKT_F32, 1, {1}, f},
                            &(ref_view){VKT_F32, 1, {1}, g}, &(ref_view){VKT_F32, 1, {1}, h}),
                 VKT_EDTYPE);
    cr_expect_eq(ref_binary(BIN_divide, &(ref_view){VKT_S32, 1, {1}, s},
                            &(ref_view){VKT_S32, 1, {1}, t}, &(ref_view){VKT_S32, 1, {1}, u}),
                 VKT_EDTYPE);
}

Test(ref_binary, broadcasting)
{
    float a[] = {1, 2, 3, 4, 5, 6}, b[] = {10, 20, 30}, y[6];
    ref_view va = view(VKT_F32, a, 2, 2, 3), vb = view(VKT_F32, b, 1, 3),
             vy = view(VKT_F32, y, 2, 2, 3);
    ref_binary(BIN_add, &va, &vb, &vy);
    float w1[] = {11, 22, 33, 14, 25, 36};
    EXPECT_F32(y, w1);

    /* column {2,1} against row {1,3}: an outer sum */
    float c[] = {1, 2}, d[] = {10, 20, 30};
    ref_view vc = view(VKT_F32, c, 2, 2, 1), vd = view(VKT_F32, d, 2, 1, 3);
    ref_binary(BIN_subtract, &vd, &vc, &vy);
    float w2[] = {9, 19, 29, 8, 18, 28};
    EXPECT_F32(y, w2);

    /* scalar (rank 0) on either side */
    float s = 2;
    ref_view vs = view(VKT_F32, &s, 0);
    ref_binary(BIN_multiply, &vs, &va, &vy);
    float w3[] = {2, 4, 6, 8, 10, 12};
    EXPECT_F32(y, w3);
    ref_binary(BIN_divide, &va, &vs, &vy);
    float w4[] = {0.5f, 1, 1.5f, 2, 2.5f, 3};
    EXPECT_F32(y, w4);

    /* a middle dim broadcast: {2,1,2} + {3,1} -> {2,3,2} */
    int32_t e[] = {1, 2, 3, 4}, f[] = {100, 200, 300}, z[12];
    ref_view ve = view(VKT_S32, e, 3, 2, 1, 2), vf = view(VKT_S32, f, 2, 3, 1),
             vz = view(VKT_S32, z, 3, 2, 3, 2);
    ref_binary(BIN_add, &ve, &vf, &vz);
    int32_t w5[] = {101, 102, 201, 202, 301, 302, 103, 104, 203, 204, 303, 304};
    EXPECT_INT(z, w5);

    /* rank 0 out, and a zero-size out that must write nothing */
    float r = 0, t = 3;
    ref_view vr = view(VKT_F32, &r, 0), vt = view(VKT_F32, &t, 0);
    ref_binary(BIN_pow, &vt, &vs, &vr);
    cr_expect_eq(r, 9.0f);
    ref_view e0 = view(VKT_F32, NULL, 2, 0, 3), o0 = view(VKT_F32, NULL, 2, 0, 3);
    cr_expect_eq(ref_binary(BIN_add, &e0, &vb, &o0), VKT_OK);
}

Test(ref_binary, broadcast_plans_against_a_formula)
{
    /* {2,3,4} op {3,1} and {4} op {2,3,4}: the plan collapses some dims and not
     * others; every element must still meet its operands. */
    int32_t a[24], b[3], c[4], y[24];
    for (int i = 0; i < 24; i++)
        a[i] = 1000 * i;
    for (int j = 0; j < 3; j++)
        b[j] = 10 * j;
    for (int k = 0; k < 4; k++)
        c[k] = k;
    ref_view va = view(VKT_S32, a, 3, 2, 3, 4), vb = view(VKT_S32, b, 2, 3, 1),
             vc = view(VKT_S32, c, 1, 4), vy = view(VKT_S32, y, 3, 2, 3, 4);
    ref_binary(BIN_subtract, &va, &vb, &vy);
    for (int i = 0; i < 24; i++)
        cr_expect_eq(y[i], 1000 * i - 10 * (i / 4 % 3), "[%d]", i);
    ref_binary(BIN_add, &vc, &va, &vy);
    for (int i = 0; i < 24; i++)
        cr_expect_eq(y[i], 1000 * i + i % 4, "[%d]", i);
    /* both operands broadcast: {3,1} op {4} -> {3,4} */
    ref_view vz = view(VKT_S32, y, 2, 3, 4);
    ref_binary(BIN_multiply, &vb, &vc, &vz);
    for (int i = 0; i < 12; i++)
        cr_expect_eq(y[i], 10 * (i / 4) * (i % 4), "[%d]", i);
}

Test(ref_binary, float_atan2_and_pow_use_libm)
{
    float a[] = {1.0f, -1.0f, 2.0f}, b[] = {1.0f, -0.5f, 0.5f}, y[3];
    bin_f32(BIN_atan2, a, b, y, 3, VKT_F32);
    for (int i = 0; i < 3; i++)
        cr_expect_eq(y[i], atan2f(a[i], b[i]));
    bin_f32(BIN_pow, a, b, y, 3, VKT_F32);
    cr_expect_eq(y[0], 1.0f);
    cr_expect(isnan(y[1]));
    volatile float two = 2.0f;
    cr_expect_eq(y[2], powf(two, 0.5f));
}

Test(ref_select, picks_with_broadcast)
{
    uint8_t p[] = {1, 0, 1};
    int32_t t[] = {1, 2, 3}, f = 9, y[3];
    ref_view vp = view(VKT_U8, p, 1, 3), vt = view(VKT_S32, t, 1, 3), vf = view(VKT_S32, &f, 0),
             vy = view(VKT_S32, y, 1, 3);
    ref_select(&vp, &vt, &vf, &vy);
    int32_t w1[] = {1, 9, 3};
    EXPECT_INT(y, w1);

    /* pred {2,1} of f32 (NaN is true) against {2,3} branches */
    float q[] = {NAN, 0.0f};
    double a[] = {1, 2, 3, 4, 5, 6}, b[] = {-1, -2, -3}, z[6];
    ref_view vq = view(VKT_F32, q, 2, 2, 1), va = view(VKT_F64, a, 2, 2, 3),
             vb = view(VKT_F64, b, 1, 3), vz = view(VKT_F64, z, 2, 2, 3);
    ref_select(&vq, &va, &vb, &vz);
    double w2[] = {1, 2, 3, -1, -2, -3};
    EXPECT_F64(z, w2);
}

Test(ref_clip, clamps_with_nan_and_broadcast)
{
    float x[] = {-5, 0, 5, NAN}, lo = 0, hi = 3, y[4];
    ref_view vx = view(VKT_F32, x, 1, 4), vl = view(VKT_F32, &lo, 0), vh = view(VKT_F32, &hi, 0),
             vy = view(VKT_F32, y, 1, 4);
    ref_clip(&vx, &vl, &vh, &vy);
    float w1[] = {0, 0, 3, NAN};
    EXPECT_F32(y, w1);

    int32_t s[] = {-5, 5, 10, -10, 0, 7}, l[] = {0, 6, -20}, h = 8, z[6];
    ref_view vs = view(VKT_S32, s, 2, 2, 3), vl2 = view(VKT_S32, l, 1, 3),
             vh2 = view(VKT_S32, &h, 0), vz = view(VKT_S32, z, 2, 2, 3);
    ref_clip(&vs, &vl2, &vh2, &vz);
    int32_t w2[] = {0, 6, 8, 0, 6, 7};
    EXPECT_INT(z, w2);

    uint8_t u[] = {0, 100, 255}, ul = 10, uh = 200, uz[3];
    ref_view vu = view(VKT_U8, u, 1, 3), vul = view(VKT_U8, &ul, 0), vuh = view(VKT_U8, &uh, 0),
             vuz = view(VKT_U8, uz, 1, 3);
    ref_clip(&vu, &vul, &vuh, &vuz);
    uint8_t w3[] = {10, 100, 200};
    EXPECT_INT(uz, w3);
}
