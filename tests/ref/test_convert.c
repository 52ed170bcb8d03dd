/* test_convert.c — ref_convert, ref_fill, ref_iota against hand-computed values. */
#include <criterion/criterion.h>

#include "helpers.h"

Test(ref_convert, f32_to_s32_truncates_and_saturates)
{
    float x[] = {1.9f, -1.9f, NAN, 3e9f, -3e9f, INFINITY, -INFINITY, 2147483520.0f, -2147483648.0f};
    int32_t y[9],
        want[] = {1, -1, 0, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, 2147483520, INT32_MIN};
    ref_view vx = view(VKT_F32, x, 1, 9), vy = view(VKT_S32, y, 1, 9);
    cr_assert_eq(ref_convert(&vx, &vy), VKT_OK);
    EXPECT_INT(y, want);
}

Test(ref_convert, floats_to_u8_saturate)
{
    float x[] = {-1.0f, -0.5f, 0.9f, 254.9f, 255.5f, 300.0f, NAN, INFINITY};
    uint8_t y[8], want[] = {0, 0, 0, 254, 255, 255, 0, 255};
    ref_view vx = view(VKT_F32, x, 1, 8), vy = view(VKT_U8, y, 1, 8);
    ref_convert(&vx, &vy);
    EXPECT_INT(y, want);
    double d[] = {-0.999, 2147483647.5, -2147483648.9, 1e300};
    int32_t s[4], ws[] = {0, INT32_MAX, INT32_MIN, INT32_MAX};
    vx = view(VKT_F64, d, 1, 4);
    vy = view(VKT_S32, s, 1, 4);
    ref_convert(&vx, &vy);
    EXPECT_INT(s, ws);
}

Test(ref_convert, s32_to_u8_keeps_low_byte)
{
    int32_t x[] = {-1, 256, 257, 255, INT32_MIN, 1000};
    uint8_t y[6], want[] = {255, 0, 1, 255, 0, 232};
    ref_view vx = view(VKT_S32, x, 1, 6), vy = view(VKT_U8, y, 1, 6);
    ref_convert(&vx, &vy);
    EXPECT_INT(y, want);
}

Test(ref_convert, widening_and_rounding)
{
    uint8_t u[] = {0, 255};
    int32_t s[2], ws[] = {0, 255};
    ref_view vu = view(VKT_U8, u, 1, 2), vs = view(VKT_S32, s, 1, 2);
    ref_convert(&vu, &vs);
    EXPECT_INT(s, ws);

    int32_t i[] = {16777217, -3};
    float f[2], wf[] = {16777216.0f, -3.0f};
    ref_view vi = view(VKT_S32, i, 1, 2), vf = view(VKT_F32, f, 1, 2);
    ref_convert(&vi, &vf);
    EXPECT_F32(f, wf);

    double d[] = {0.1, 1e300, NAN};
    float g[3], wg[] = {0.1f, INFINITY, NAN};
    ref_view vd = view(VKT_F64, d, 1, 3), vg = view(VKT_F32, g, 1, 3);
    ref_convert(&vd, &vg);
    EXPECT_F32(g, wg);
}

Test(ref_convert, same_dtype_rank0_and_empty)
{
    double x = -2.5, y = 0;
    ref_view vx = view(VKT_F64, &x, 0), vy = view(VKT_F64, &y, 0);
    cr_assert_eq(ref_convert(&vx, &vy), VKT_OK);
    cr_expect_eq(y, -2.5);
    ref_view e1 = view(VKT_F32, NULL, 2, 3, 0), e2 = view(VKT_S32, NULL, 2, 3, 0);
    cr_expect_eq(ref_convert(&e1, &e2), VKT_OK);
}

Test(ref_fill, converts_the_value)
{
    float f[5];
    ref_view v = view(VKT_F32, f, 1, 5);
    ref_fill(&v, 2.5);
    float wf[] = {2.5f, 2.5f, 2.5f, 2.5f, 2.5f};
    EXPECT_F32(f, wf);

    int32_t s[3], ws[] = {-7, -7, -7};
    v = view(VKT_S32, s, 1, 3);
    ref_fill(&v, -7.9);
    EXPECT_INT(s, ws);
    ref_fill(&v, NAN);
    int32_t wz[] = {0, 0, 0};
    EXPECT_INT(s, wz);

    uint8_t u[7];
    v = view(VKT_U8, u, 2, 7, 1);
    ref_fill(&v, 300);
    uint8_t wu[] = {255, 255, 255, 255, 255, 255, 255};
    EXPECT_INT(u, wu);
    ref_fill(&v, -3);
    uint8_t wu0[] = {0, 0, 0, 0, 0, 0, 0};
    EXPECT_INT(u, wu0);

    ref_view e = view(VKT_F64, NULL, 1, 0);
    cr_expect_eq(ref_fill(&e, 1.0), VKT_OK);
}

Test(ref_iota, along_axes_and_flat)
{
    int32_t y[6];
    ref_view v = view(VKT_S32, y, 2, 2, 3);
    ref_iota(&v, 1);
    int32_t w1[] = {0, 1, 2, 0, 1, 2};
    EXPECT_INT(y, w1);
    ref_iota(&v, 0);
    int32_t w0[] = {0, 0, 0, 1, 1, 1};
    EXPECT_INT(y, w0);
    ref_iota(&v, VKT_ALL_AXES);
    int32_t wa[] = {0, 1, 2, 3, 4, 5};
    EXPECT_INT(y, wa);

    double d[4];
    v = view(VKT_F64, d, 3, 2, 1, 2);
    ref_iota(&v, 2);
    double wd[] = {0, 1, 0, 1};
    EXPECT_F64(d, wd);

    float s = 5;
    v = view(VKT_F32, &s, 0);
    ref_iota(&v, VKT_ALL_AXES);
    cr_expect_eq(s, 0.0f);
}

Test(ref_iota, u8_wraps_like_an_integer)
{
    uint8_t y[300];
    ref_view v = view(VKT_U8, y, 1, 300);
    ref_iota(&v, 0);
    cr_expect_eq(y[255], 255);
    cr_expect_eq(y[256], 0);
    cr_expect_eq(y[299], 43);
}
