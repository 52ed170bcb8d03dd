/* test_reduce.c — ref_reduce (axis sets, double accumulation, wraparound, NaN,
 * identities of empty reductions) and ref_argreduce. */
#include <criterion/criterion.h>

#include "helpers.h"

Test(ref_reduce, sum_over_axis_sets)
{
    float x[] = {1, 2, 3, 4, 5, 6}, y[3];
    ref_view vx = view(VKT_F32, x, 2, 2, 3);
    ref_view v1 = view(VKT_F32, y, 1, 2);
    ref_reduce(RED_SUM, &vx, 2u, &v1);
    float w1[] = {6, 15};
    EXPECT_F32(y, w1);
    ref_view v0 = view(VKT_F32, y, 2, 1, 3); /* keep_axes layout */
    ref_reduce(RED_SUM, &vx, 1u, &v0);
    float w0[] = {5, 7, 9};
    EXPECT_F32(y, w0);
    ref_view va = view(VKT_F32, y, 0);
    ref_reduce(RED_SUM, &vx, 3u, &va);
    cr_expect_eq(y[0], 21.0f);
}

Test(ref_reduce, middle_and_outer_axes)
{
    /* x[i][j][k] = 100i + 10j + k, shape {2,3,2} */
    int32_t x[12], y[6];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 2; k++)
                x[(i * 3 + j) * 2 + k] = 100 * i + 10 * j + k;
    ref_view vx = view(VKT_S32, x, 3, 2, 3, 2), vy = view(VKT_S32, y, 2, 2, 2);
    ref_reduce(RED_SUM, &vx, 2u, &vy);
    int32_t w1[] = {30, 33, 330, 333};
    EXPECT_INT(y, w1);
    vy = view(VKT_S32, y, 1, 3);
    ref_reduce(RED_SUM, &vx, 5u, &vy);
    int32_t w2[] = {202, 242, 282};
    EXPECT_INT(y, w2);
    ref_reduce(RED_MAX, &vx, 5u, &vy);
    int32_t w3[] = {101, 111, 121};
    EXPECT_INT(y, w3);
}

Test(ref_reduce, f32_sum_accumulates_in_double)
{
    float x[] = {1e8f, 1.0f, -1e8f, 1.0f}, y;
    ref_view vx = view(VKT_F32, x, 1, 4), vy = view(VKT_F32, &y, 0);
    ref_reduce(RED_SUM, &vx, 1u, &vy);
    cr_expect_eq(y, 2.0f);
    float p[] = {1e30f, 1e30f, 1e-30f};
    vx = view(VKT_F32, p, 1, 3);
    ref_reduce(RED_PRODUCT, &vx, 1u, &vy);
    cr_expect(fabsf(y / 1e30f - 1.0f) < 1e-6f, "no overflow in the middle: %g", (double)y);
}

Test(ref_reduce, integers_wrap)
{
    int32_t a[] = {INT32_MAX, 1}, b[] = {65536, 65536, 3}, c[] = {-1, 2, 3}, y;
    ref_view vy = view(VKT_S32, &y, 0);
    ref_view va = view(VKT_S32, a, 1, 2);
    ref_reduce(RED_SUM, &va, 1u, &vy);
    cr_expect_eq(y, INT32_MIN);
    ref_view vb = view(VKT_S32, b, 1, 3);
    ref_reduce(RED_PRODUCT, &vb, 1u, &vy);
    cr_expect_eq(y, 0);
    ref_view vc = view(VKT_S32, c, 1, 3);
    ref_reduce(RED_PRODUCT, &vc, 1u, &vy);
    cr_expect_eq(y, -6);
    ref_reduce(RED_MIN, &vc, 1u, &vy);
    cr_expect_eq(y, -1);
    uint8_t u[] = {3, 200, 7}, z;
    ref_view vu = view(VKT_U8, u, 1, 3), vz = view(VKT_U8, &z, 0);
    ref_reduce(RED_MAX, &vu, 1u, &vz);
    cr_expect_eq(z, 200);
    ref_reduce(RED_MIN, &vu, 1u, &vz);
    cr_expect_eq(z, 3);
}

Test(ref_reduce, max_min_propagate_nan)
{
    float x[] = {1, NAN, 3, 4, 5, 6}, y[2];
    ref_view vx = view(VKT_F32, x, 2, 2, 3), vy = view(VKT_F32, y, 1, 2);
    ref_reduce(RED_MAX, &vx, 2u, &vy);
    float w1[] = {NAN, 6};
    EXPECT_F32(y, w1);
    ref_reduce(RED_MIN, &vx, 2u, &vy);
    float w2[] = {NAN, 4};
    EXPECT_F32(y, w2);
    double d[] = {-0.0, 0.0}, e;
    ref_view vd = view(VKT_F64, d, 1, 2), ve = view(VKT_F64, &e, 0);
    ref_reduce(RED_MAX, &vd, 1u, &ve);
    cr_expect(e == 0 && !signbit(e));
}

Test(ref_reduce, empty_reductions_give_the_identity)
{
    ref_view ef = view(VKT_F32, NULL, 2, 2, 0), es = view(VKT_S32, NULL, 2, 2, 0),
             eu = view(VKT_U8, NULL, 2, 2, 0);
    float f[2];
    int32_t s[2];
    uint8_t u[2];
    ref_view vf = view(VKT_F32, f, 1, 2), vs = view(VKT_S32, s, 1, 2), vu = view(VKT_U8, u, 1, 2);
    struct {
        enum ref_redop op;
        float f;
        int32_t s;
        uint8_t u;
    } k[] = {
        {RED_SUM, 0.0f, 0, 0},
        {RED_PRODUCT, 1.0f, 1, 1},
        {RED_MAX, -INFINITY, INT32_MIN, 0},
        {RED_MIN, INFINITY, INT32_MAX, 255},
    };
    for (int i = 0; i < N_OF(k); i++) {
        ref_reduce(k[i].op, &ef, 2u, &vf);
        ref_reduce(k[i].op, &es, 2u, &vs);
        ref_reduce(k[i].op, &eu, 2u, &vu);
        for (int j = 0; j < 2; j++) {
            cr_expect_eq(f[j], k[i].f, "op %d f32", k[i].op);
            cr_expect_eq(s[j], k[i].s, "op %d s32", k[i].op);
            cr_expect_eq(u[j], k[i].u, "op %d u8", k[i].op);
        }
    }
    ref_reduce(RED_ALL, &ef, 2u, &vu);
    uint8_t wall[] = {1, 1};
    EXPECT_INT(u, wall);
    ref_reduce(RED_ANY, &ef, 2u, &vu);
    uint8_t wany[] = {0, 0};
    EXPECT_INT(u, wany);
    /* an empty output is a no-op */
    ref_view eo = view(VKT_F32, NULL, 1, 0);
    cr_expect_eq(ref_reduce(RED_SUM, &ef, 1u, &eo), VKT_OK);
}

Test(ref_reduce, all_any_from_any_dtype)
{
    float x[] = {NAN, 1, 0, -0.0f}, y[1];
    uint8_t z[2];
    (void)y;
    ref_view vx = view(VKT_F32, x, 2, 2, 2), vz = view(VKT_U8, z, 1, 2);
    ref_reduce(RED_ALL, &vx, 2u, &vz);
    uint8_t wa[] = {1, 0};
    EXPECT_INT(z, wa);
    ref_reduce(RED_ANY, &vx, 2u, &vz);
    uint8_t wy[] = {1, 0};
    EXPECT_INT(z, wy);
    int32_t s[] = {0, 5, 0, 0, 0, -1};
    uint8_t t[3];
    ref_view vs = view(VKT_S32, s, 2, 2, 3), vt = view(VKT_U8, t, 1, 3);
    ref_reduce(RED_ANY, &vs, 1u, &vt);
    uint8_t wt[] = {0, 1, 1};
    EXPECT_INT(t, wt);
}

Test(ref_reduce, rank0_is_a_copy)
{
    double x = -3.5, y = 0;
    ref_view vx = view(VKT_F64, &x, 0), vy = view(VKT_F64, &y, 0);
    ref_reduce(RED_PRODUCT, &vx, 0u, &vy);
    cr_expect_eq(y, -3.5);
}

Test(ref_argreduce, first_index_wins)
{
    float x[] = {1, 3, 3, 2};
    int32_t y;
    ref_view vx = view(VKT_F32, x, 1, 4), vy = view(VKT_S32, &y, 0);
    ref_argreduce(true, &vx, 0, &vy);
    cr_expect_eq(y, 1);
    float m[] = {2, 1, 1, 5};
    vx.data = m;
    ref_argreduce(false, &vx, 0, &vy);
    cr_expect_eq(y, 1);
    int32_t s[] = {0, INT32_MIN, 7, INT32_MIN};
    ref_view vs = view(VKT_S32, s, 1, 4);
    ref_argreduce(false, &vs, VKT_ALL_AXES, &vy);
    cr_expect_eq(y, 1);
}

/* Nx's rule: a slice with a NaN gives the index of its first NaN, for argmax
 * and argmin alike. */
Test(ref_argreduce, the_first_nan_wins_both)
{
    float a[] = {1, NAN, 5, NAN}, b[] = {NAN, 3, 1, 1}, c[] = {NAN, NAN, NAN};
    int32_t y;
    ref_view vy = view(VKT_S32, &y, 0);
    ref_view va = view(VKT_F32, a, 1, 4), vb = view(VKT_F32, b, 1, 4), vc = view(VKT_F32, c, 1, 3);
    ref_argreduce(true, &va, 0, &vy);
    cr_expect_eq(y, 1);
    ref_argreduce(false, &va, 0, &vy);
    cr_expect_eq(y, 1);
    ref_argreduce(true, &vb, 0, &vy);
    cr_expect_eq(y, 0);
    ref_argreduce(false, &vb, 0, &vy);
    cr_expect_eq(y, 0);
    ref_argreduce(false, &vc, 0, &vy);
    cr_expect_eq(y, 0);
    ref_argreduce(true, &vc, 0, &vy);
    cr_expect_eq(y, 0);
}

Test(ref_argreduce, along_axes_flat_and_empty)
{
    int32_t x[] = {1, 5, 2, 7, 0, 7}, y[3];
    ref_view vx = view(VKT_S32, x, 2, 2, 3);
    ref_view v0 = view(VKT_S32, y, 1, 3), v1 = view(VKT_S32, y, 1, 2), va = view(VKT_S32, y, 0);
    ref_argreduce(true, &vx, 0, &v0);
    int32_t w0[] = {1, 0, 1};
    EXPECT_INT(y, w0);
    ref_argreduce(true, &vx, 1, &v1);
    int32_t w1[] = {1, 0};
    EXPECT_INT(y, w1);
    ref_argreduce(false, &vx, 1, &v1);
    int32_t w2[] = {0, 1};
    EXPECT_INT(y, w2);
    ref_argreduce(true, &vx, VKT_ALL_AXES, &va);
    cr_expect_eq(y[0], 3);
    y[0] = y[1] = 9;
    ref_view ve = view(VKT_F64, NULL, 2, 2, 0);
    ref_argreduce(true, &ve, 1, &v1);
    int32_t we[] = {0, 0};
    EXPECT_INT(y, we);
}
