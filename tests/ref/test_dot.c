/* test_dot.c — ref_dot: plain matmul, non-trailing and multiple contracting
 * axes, batch axes in any position, outer products, wraparound, accumulation. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "helpers.h"

Test(ref_dot, matmul)
{
    float a[] = {1, 2, 3, 4, 5, 6}, b[] = {7, 8, 9, 10, 11, 12}, y[4];
    int ca[] = {1}, cb[] = {0};
    ref_view va = view(VKT_F32, a, 2, 2, 3), vb = view(VKT_F32, b, 2, 3, 2),
             vy = view(VKT_F32, y, 2, 2, 2);
    cr_assert_eq(ref_dot(&va, ca, NULL, &vb, cb, NULL, 1, 0, &vy), VKT_OK);
    float w[] = {58, 64, 139, 154};
    EXPECT_F32(y, w);
}

Test(ref_dot, leading_contracting_axes)
{
    /* a^T b: contract axis 0 of both */
    double a[] = {1, 2, 3, 4, 5, 6}, b[] = {1, 0, 0, 1, 1, 1}, y[4];
    int c0[] = {0};
    ref_view va = view(VKT_F64, a, 2, 3, 2), vb = view(VKT_F64, b, 2, 3, 2),
             vy = view(VKT_F64, y, 2, 2, 2);
    ref_dot(&va, c0, NULL, &vb, c0, NULL, 1, 0, &vy);
    double w[] = {6, 8, 8, 10};
    EXPECT_F64(y, w);
}

Test(ref_dot, two_contracting_axes_pair_in_order)
{
    int32_t a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8}, y;
    ref_view va = view(VKT_S32, a, 2, 2, 2), vb = view(VKT_S32, b, 2, 2, 2),
             vy = view(VKT_S32, &y, 0);
    int c01[] = {0, 1}, c10[] = {1, 0};
    ref_dot(&va, c01, NULL, &vb, c01, NULL, 2, 0, &vy);
    cr_expect_eq(y, 70);
    /* a axis 1 with b axis 0, a axis 0 with b axis 1: sum a[i][j] b[j][i] */
    ref_dot(&va, c10, NULL, &vb, c01, NULL, 2, 0, &vy);
    cr_expect_eq(y, 69);
}

Test(ref_dot, batch_axes)
{
    float a[] = {1, 2, 3, 4, 1, 0, 0, 1}, b[] = {5, 6, 7, 8, 2, 3, 4, 5}, y[8];
    int ba[] = {0}, ca[] = {2}, bb[] = {0}, cb[] = {1};
    ref_view va = view(VKT_F32, a, 3, 2, 2, 2), vb = view(VKT_F32, b, 3, 2, 2, 2),
             vy = view(VKT_F32, y, 3, 2, 2, 2);
    ref_dot(&va, ca, ba, &vb, cb, bb, 1, 1, &vy);
    float w[] = {19, 22, 43, 50, 2, 3, 4, 5};
    EXPECT_F32(y, w);

    /* batch axis last in a, first in b; contraction the other way round */
    int32_t c[] = {1, 2, 3, 4, 5, 6}, d[] = {1, 1, 1, 2, 2, 2}, z[2];
    int ba2[] = {1}, ca2[] = {0}, bb2[] = {0}, cb2[] = {1};
    ref_view vc = view(VKT_S32, c, 2, 3, 2), vd = view(VKT_S32, d, 2, 2, 3),
             vz = view(VKT_S32, z, 1, 2);
    ref_dot(&vc, ca2, ba2, &vd, cb2, bb2, 1, 1, &vz);
    int32_t wz[] = {9, 24};
    EXPECT_INT(z, wz);
}

Test(ref_dot, batch_then_free_axes_order)
{
    /* a {2,3} batch 0, free 1; b {2,4} batch 0, free 1; no contraction:
     * out[q][i][j] = a[q][i] * b[q][j], shape {2,3,4} */
    double a[6], b[8], y[24];
    for (int i = 0; i < 6; i++)
        a[i] = i + 1;
    for (int i = 0; i < 8; i++)
        b[i] = 10 * (i + 1);
    int ba[] = {0}, bb[] = {0};
    ref_view va = view(VKT_F64, a, 2, 2, 3), vb = view(VKT_F64, b, 2, 2, 4),
             vy = view(VKT_F64, y, 3, 2, 3, 4);
    ref_dot(&va, NULL, ba, &vb, NULL, bb, 0, 1, &vy);
    for (int q = 0; q < 2; q++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 4; j++)
                cr_expect_eq(y[(q * 3 + i) * 4 + j], a[q * 3 + i] * b[q * 4 + j]);
}

Test(ref_dot, integers_wrap_and_floats_accumulate_in_double)
{
    int32_t a[] = {INT32_MAX, 1}, b[] = {2, 2}, y;
    int c[] = {0};
    ref_view va = view(VKT_S32, a, 1, 2), vb = view(VKT_S32, b, 1, 2), vy = view(VKT_S32, &y, 0);
    ref_dot(&va, c, NULL, &vb, c, NULL, 1, 0, &vy);
    cr_expect_eq(y, 0);
    int32_t n[] = {-65536, 3}, m[] = {65536, -5};
    va.data = n;
    vb.data = m;
    ref_dot(&va, c, NULL, &vb, c, NULL, 1, 0, &vy);
    cr_expect_eq(y, -15);

    uint8_t u[] = {16, 1}, v[] = {16, 3}, z;
    ref_view vu = view(VKT_U8, u, 1, 2), vv = view(VKT_U8, v, 1, 2), vz = view(VKT_U8, &z, 0);
    ref_dot(&vu, c, NULL, &vv, c, NULL, 1, 0, &vz);
    cr_expect_eq(z, 3);

    float f[] = {1e8f, 1, -1e8f, 1}, g[] = {1, 1, 1, 1}, r;
    ref_view vf = view(VKT_F32, f, 1, 4), vg = view(VKT_F32, g, 1, 4), vr = view(VKT_F32, &r, 0);
    ref_dot(&vf, c, NULL, &vg, c, NULL, 1, 0, &vr);
    cr_expect_eq(r, 2.0f);
}

Test(ref_dot, empty_contraction_gives_zeros)
{
    float y[6] = {1, 1, 1, 1, 1, 1};
    int ca[] = {1}, cb[] = {0};
    ref_view va = view(VKT_F32, NULL, 2, 2, 0), vb = view(VKT_F32, NULL, 2, 0, 3),
             vy = view(VKT_F32, y, 2, 2, 3);
    cr_assert_eq(ref_dot(&va, ca, NULL, &vb, cb, NULL, 1, 0, &vy), VKT_OK);
    float w[] = {0, 0, 0, 0, 0, 0};
    EXPECT_F32(y, w);
}

Test(ref_dot, larger_against_naive_loop)
{
    /* 37x53 times 53x29 of small integers: exact in f32, so the packed path
     * must agree with a textbook triple loop bit for bit. */
    enum { M = 37, K = 53, N = 29 };
    float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * K * N),
          *y = malloc(sizeof(float) * M * N);
    for (int i = 0; i < M * K; i++)
        a[i] = (float)(i % 7 - 3);
    for (int i = 0; i < K * N; i++)
        b[i] = (float)(i % 5 - 2);
    int ca[] = {1}, cb[] = {0};
    ref_view va = view(VKT_F32, a, 2, M, K), vb = view(VKT_F32, b, 2, K, N),
             vy = view(VKT_F32, y, 2, M, N);
    ref_dot(&va, ca, NULL, &vb, cb, NULL, 1, 0, &vy);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float s = 0;
            for (int k = 0; k < K; k++)
                s += a[i * K + k] * b[k * N + j];
            cr_expect_eq(y[i * N + j], s, "[%d][%d]", i, j);
        }
    free(a);
    free(b);
    free(y);
}
