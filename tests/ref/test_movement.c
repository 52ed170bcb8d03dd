/* test_movement.c — transpose, broadcast, slice, reverse, concatenate, pad
 * (negative and interior) and gather (clamping, non-leading axes). */
#include <criterion/criterion.h>

#include "helpers.h"

Test(ref_transpose, matrix_and_3d)
{
    int32_t x[] = {1, 2, 3, 4, 5, 6}, y[6];
    int perm[] = {1, 0};
    ref_view vx = view(VKT_S32, x, 2, 2, 3), vy = view(VKT_S32, y, 2, 3, 2);
    ref_transpose(&vx, perm, &vy);
    int32_t w[] = {1, 4, 2, 5, 3, 6};
    EXPECT_INT(y, w);

    /* x[i][j][k] = 100i + 10j + k, shape {2,3,4} */
    double a[24], b[24];
    for (int i = 0; i < 24; i++)
        a[i] = 100 * (i / 12) + 10 * (i / 4 % 3) + i % 4;
    ref_view va = view(VKT_F64, a, 3, 2, 3, 4);
    int p1[] = {1, 0, 2}; /* last axis kept: contiguous runs */
    ref_view vb = view(VKT_F64, b, 3, 3, 2, 4);
    ref_transpose(&va, p1, &vb);
    cr_expect_eq(b[0], 0);
    cr_expect_eq(b[4], 100); /* [0][1][0] = x[1][0][0] */
    cr_expect_eq(b[9], 11);  /* [1][0][1] = x[0][1][1] */
    cr_expect_eq(b[23], 123);
    int p2[] = {2, 0, 1};
    vb = view(VKT_F64, b, 3, 4, 2, 3);
    ref_transpose(&va, p2, &vb);
    /* out[k][i][j] = x[i][j][k] */
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++)
                cr_expect_eq(b[(k * 2 + i) * 3 + j], 100 * i + 10 * j + k);

    uint8_t u[] = {1, 2, 3, 4}, v[4];
    ref_view vu = view(VKT_U8, u, 2, 2, 2), vv = view(VKT_U8, v, 2, 2, 2);
    ref_transpose(&vu, perm, &vv);
    uint8_t wu[] = {1, 3, 2, 4};
    EXPECT_INT(v, wu);
}

Test(ref_broadcast, onto_chosen_axes)
{
    float x[] = {1, 2, 3}, y[6];
    int a1[] = {1}, a0[] = {0};
    ref_view vx = view(VKT_F32, x, 1, 3), vy = view(VKT_F32, y, 2, 2, 3);
    ref_broadcast(&vx, a1, &vy);
    float w1[] = {1, 2, 3, 1, 2, 3};
    EXPECT_F32(y, w1);
    vy = view(VKT_F32, y, 2, 3, 2);
    ref_broadcast(&vx, a0, &vy);
    float w0[] = {1, 1, 2, 2, 3, 3};
    EXPECT_F32(y, w0);

    int32_t s[] = {7, 8}, z[12];
    int a02[] = {0, 2};
    ref_view vs = view(VKT_S32, s, 2, 1, 2), vz = view(VKT_S32, z, 3, 2, 3, 2);
    ref_broadcast(&vs, a02, &vz);
    int32_t w2[] = {7, 8, 7, 8, 7, 8, 7, 8, 7, 8, 7, 8};
    EXPECT_INT(z, w2);

    double d = 4.5, e[3];
    ref_view vd = view(VKT_F64, &d, 0), ve = view(VKT_F64, e, 1, 3);
    ref_broadcast(&vd, NULL, &ve);
    double w3[] = {4.5, 4.5, 4.5};
    EXPECT_F64(e, w3);
}

Test(ref_slice, strided_windows)
{
    int32_t x[12], y[4];
    for (int i = 0; i < 12; i++)
        x[i] = i;
    ref_view v1 = view(VKT_S32, x, 1, 10), o1 = view(VKT_S32, y, 1, 3);
    int64_t st1[] = {2}, sd1[] = {3};
    ref_slice(&v1, st1, sd1, &o1);
    int32_t w1[] = {2, 5, 8};
    EXPECT_INT(y, w1);

    ref_view v2 = view(VKT_S32, x, 2, 3, 4), o2 = view(VKT_S32, y, 2, 2, 2);
    int64_t st2[] = {1, 1}, sd2[] = {1, 2};
    ref_slice(&v2, st2, sd2, &o2);
    int32_t w2[] = {5, 7, 9, 11};
    EXPECT_INT(y, w2);

    int64_t st3[] = {0, 2};
    ref_view o3 = view(VKT_S32, y, 2, 2, 2);
    ref_slice(&v2, st3, NULL, &o3);
    int32_t w3[] = {2, 3, 6, 7};
    EXPECT_INT(y, w3);

    ref_view o4 = view(VKT_S32, NULL, 2, 0, 2);
    cr_expect_eq(ref_slice(&v2, st3, NULL, &o4), VKT_OK);
}

Test(ref_reverse, axis_sets)
{
    float x[] = {1, 2, 3, 4, 5, 6}, y[6];
    ref_view vx = view(VKT_F32, x, 2, 2, 3), vy = view(VKT_F32, y, 2, 2, 3);
    ref_reverse(&vx, 1u, &vy);
    float w0[] = {4, 5, 6, 1, 2, 3};
    EXPECT_F32(y, w0);
    ref_reverse(&vx, 2u, &vy);
    float w1[] = {3, 2, 1, 6, 5, 4};
    EXPECT_F32(y, w1);
    ref_reverse(&vx, 3u, &vy);
    float w2[] = {6, 5, 4, 3, 2, 1};
    EXPECT_F32(y, w2);
    ref_reverse(&vx, 0u, &vy);
    EXPECT_F32(y, x);
    ref_view e = view(VKT_F32, NULL, 2, 0, 3);
    cr_expect_eq(ref_reverse(&e, 3u, &e), VKT_OK);
}

Test(ref_concatenate, along_inner_and_outer_axes)
{
    int32_t a[] = {1, 2}, b[] = {3, 4, 5, 6}, y[9];
    ref_view va = view(VKT_S32, a, 2, 2, 1), vb = view(VKT_S32, b, 2, 2, 2),
             ve = view(VKT_S32, NULL, 2, 2, 0);
    const ref_view *xs[] = {&va, &ve, &vb};
    ref_view vy = view(VKT_S32, y, 2, 2, 3);
    ref_concatenate(xs, 3, 1, &vy);
    int32_t w1[] = {1, 3, 4, 2, 5, 6};
    EXPECT_INT(y, w1);

    double c[] = {1, 2, 3}, d[] = {4, 5, 6, 7, 8, 9}, z[9];
    ref_view vc = view(VKT_F64, c, 2, 1, 3), vd = view(VKT_F64, d, 2, 2, 3);
    const ref_view *ys[] = {&vd, &vc};
    ref_view vz = view(VKT_F64, z, 2, 3, 3);
    ref_concatenate(ys, 2, 0, &vz);
    double w2[] = {4, 5, 6, 7, 8, 9, 1, 2, 3};
    EXPECT_F64(z, w2);
}

Test(ref_pad, interior_and_positive)
{
    float x[] = {1, 2, 3}, v = 0, y[8];
    int64_t lo[] = {1}, hi[] = {2}, in[] = {1};
    ref_view vx = view(VKT_F32, x, 1, 3), vy = view(VKT_F32, y, 1, 8);
    ref_pad(&vx, &v, lo, hi, in, &vy);
    float w[] = {0, 1, 0, 2, 0, 3, 0, 0};
    EXPECT_F32(y, w);

    int32_t s[] = {1, 2, 3, 4}, pv = -1, z[12];
    int64_t lo2[] = {1, 0}, hi2[] = {0, 1}, in2[] = {0, 1};
    ref_view vs = view(VKT_S32, s, 2, 2, 2), vz = view(VKT_S32, z, 2, 3, 4);
    ref_pad(&vs, &pv, lo2, hi2, in2, &vz);
    int32_t w2[] = {-1, -1, -1, -1, 1, -1, 2, -1, 3, -1, 4, -1};
    EXPECT_INT(z, w2);
}

Test(ref_pad, negative_trims_after_interior)
{
    float x[] = {1, 2, 3}, v = 0, y[3];
    int64_t lo[] = {-1}, hi[] = {-1}, in[] = {1};
    ref_view vx = view(VKT_F32, x, 1, 3), vy = view(VKT_F32, y, 1, 3);
    ref_pad(&vx, &v, lo, hi, in, &vy);
    float w1[] = {0, 2, 0};
    EXPECT_F32(y, w1);

    int64_t lo2[] = {-2}, hi2[] = {1}, in2[] = {0};
    vy = view(VKT_F32, y, 1, 2);
    v = 9;
    ref_pad(&vx, &v, lo2, hi2, in2, &vy);
    float w2[] = {3, 9};
    EXPECT_F32(y, w2);

    /* interior 2 then trim 2 from the front, 3 from the back: 1 . . 2 . . 3 -> . 2 */
    int64_t lo3[] = {-2}, hi3[] = {-3}, in3[] = {2};
    ref_pad(&vx, &v, lo3, hi3, in3, &vy);
    float w3[] = {9, 2};
    EXPECT_F32(y, w3);

    int32_t s[] = {1, 2, 3, 4}, pv = 0, z[2];
    int64_t lo4[] = {-1, 0}, hi4[] = {0, 0}, in4[] = {0, 0};
    ref_view vs = view(VKT_S32, s, 2, 2, 2), vz = view(VKT_S32, z, 2, 1, 2);
    ref_pad(&vs, &pv, lo4, hi4, in4, &vz);
    int32_t w4[] = {3, 4};
    EXPECT_INT(z, w4);

    ref_view v0 = view(VKT_F32, NULL, 1, 0);
    int64_t lo5[] = {-3}, hi5[] = {0}, in5[] = {0};
    cr_expect_eq(ref_pad(&vx, &v, lo5, hi5, in5, &v0), VKT_OK);
}

Test(ref_pad, empty_input_and_rank0)
{
    uint8_t v = 7, y[3];
    int64_t lo[] = {2}, hi[] = {1}, in[] = {4};
    ref_view ve = view(VKT_U8, NULL, 1, 0), vy = view(VKT_U8, y, 1, 3);
    ref_pad(&ve, &v, lo, hi, in, &vy);
    uint8_t w[] = {7, 7, 7};
    EXPECT_INT(y, w);
    double d = 2.5, e = 0, pv = 1;
    ref_view vd = view(VKT_F64, &d, 0), vo = view(VKT_F64, &e, 0);
    ref_pad(&vd, &pv, NULL, NULL, NULL, &vo);
    cr_expect_eq(e, 2.5);
}

Test(ref_gather, clamps_indices)
{
    int32_t x[] = {1, 2, 3, 4, 5, 6}, y[6];
    ref_view vx = view(VKT_S32, x, 2, 3, 2);
    int32_t i1[] = {2, 0};
    int ax0[] = {0};
    ref_view vi = view(VKT_S32, i1, 2, 2, 1), vy = view(VKT_S32, y, 2, 2, 2);
    ref_gather(&vx, &vi, ax0, 1, &vy);
    int32_t w1[] = {5, 6, 1, 2};
    EXPECT_INT(y, w1);
    int32_t i2[] = {-1, 7};
    vi.data = i2;
    ref_gather(&vx, &vi, ax0, 1, &vy);
    int32_t w2[] = {1, 2, 5, 6};
    EXPECT_INT(y, w2);

    int32_t i3[] = {0, 1, 2, 0, 9, -4};
    int ax01[] = {0, 1};
    ref_view vi3 = view(VKT_S32, i3, 2, 3, 2), vy3 = view(VKT_S32, y, 1, 3);
    ref_gather(&vx, &vi3, ax01, 2, &vy3);
    int32_t w3[] = {2, 5, 5};
    EXPECT_INT(y, w3);
}

Test(ref_gather, non_leading_axes_and_batched_indices)
{
    float x[] = {1, 2, 3, 4, 5, 6}, y[12];
    ref_view vx = view(VKT_F32, x, 2, 3, 2);
    int32_t i1[] = {1, 0};
    int ax1[] = {1};
    ref_view vi = view(VKT_S32, i1, 2, 2, 1), vy = view(VKT_F32, y, 2, 2, 3);
    ref_gather(&vx, &vi, ax1, 1, &vy);
    float w1[] = {2, 4, 6, 1, 3, 5};
    EXPECT_F32(y, w1);

    int32_t i2[] = {1, 0, 1, 1, 2, 2, 0, 0}; /* {2,2,2}: index pairs along axes (1, 0) */
    int ax10[] = {1, 0};
    ref_view vi2 = view(VKT_S32, i2, 3, 2, 2, 2), vy2 = view(VKT_F32, y, 2, 2, 2);
    ref_gather(&vx, &vi2, ax10, 2, &vy2);
    float w2[] = {2, 4, 6, 1}; /* x[0][1], x[1][1], x[2][1] (axis 1 clamps 2 to 1), x[0][0] */
    EXPECT_F32(y, w2);
}
