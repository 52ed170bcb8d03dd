/* test_sort.c — ref_sort: NaN placement both ways, stability with ties in both
 * directions, axes other than the last, integer dtypes, empty lines. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "helpers.h"

Test(ref_sort, nan_last_ascending_first_descending)
{
    float x[] = {3, NAN, 1, 2, NAN, -INFINITY}, y[6];
    int32_t ix[6];
    ref_view vx = view(VKT_F32, x, 1, 6), vy = view(VKT_F32, y, 1, 6), vi = view(VKT_S32, ix, 1, 6);
    ref_sort(&vx, 0, false, false, &vy);
    float wa[] = {-INFINITY, 1, 2, 3, NAN, NAN};
    EXPECT_F32(y, wa);
    ref_sort(&vx, 0, false, true, &vi);
    int32_t ia[] = {5, 2, 3, 0, 1, 4};
    EXPECT_INT(ix, ia);
    ref_sort(&vx, 0, true, false, &vy);
    float wd[] = {NAN, NAN, 3, 2, 1, -INFINITY};
    EXPECT_F32(y, wd);
    ref_sort(&vx, 0, true, true, &vi);
    int32_t id[] = {1, 4, 0, 3, 2, 5};
    EXPECT_INT(ix, id);
}

Test(ref_sort, stable_both_directions)
{
    int32_t x[] = {2, 1, 2, 1, 0}, ix[5];
    ref_view vx = view(VKT_S32, x, 1, 5), vi = view(VKT_S32, ix, 1, 5);
    ref_sort(&vx, 0, false, true, &vi);
    int32_t ia[] = {4, 1, 3, 0, 2};
    EXPECT_INT(ix, ia);
    ref_sort(&vx, 0, true, true, &vi);
    int32_t id[] = {0, 2, 1, 3, 4};
    EXPECT_INT(ix, id);

    /* -0 and +0 are equal: original order, signs preserved */
    double z[] = {0.0, -0.0, -1.0}, s[3];
    ref_view vz = view(VKT_F64, z, 1, 3), vs = view(VKT_F64, s, 1, 3);
    ref_sort(&vz, 0, false, false, &vs);
    cr_expect(s[0] == -1.0 && !signbit(s[1]) && signbit(s[2]));
}

Test(ref_sort, along_first_axis)
{
    int32_t x[] = {3, 1, 1, 2, 2, 0}, y[6];
    ref_view vx = view(VKT_S32, x, 2, 3, 2), vy = view(VKT_S32, y, 2, 3, 2);
    ref_sort(&vx, 0, false, false, &vy);
    int32_t w[] = {1, 0, 2, 1, 3, 2};
    EXPECT_INT(y, w);
    ref_sort(&vx, 0, false, true, &vy);
    int32_t wi[] = {1, 2, 2, 0, 0, 1};
    EXPECT_INT(y, wi);
}

Test(ref_sort, u8_descending_and_edges)
{
    uint8_t x[] = {5, 255, 0, 5}, y[4];
    ref_view vx = view(VKT_U8, x, 1, 4), vy = view(VKT_U8, y, 1, 4);
    ref_sort(&vx, 0, true, false, &vy);
    uint8_t w[] = {255, 5, 5, 0};
    EXPECT_INT(y, w);
    ref_view e = view(VKT_F32, NULL, 2, 3, 0), eo = view(VKT_F32, NULL, 2, 3, 0);
    cr_expect_eq(ref_sort(&e, 1, false, false, &eo), VKT_OK);
    float s = 4, t = 0;
    ref_view vs = view(VKT_F32, &s, 0), vt = view(VKT_F32, &t, 0);
    ref_sort(&vs, 0, false, false, &vt);
    cr_expect_eq(t, 4.0f);
}

Test(ref_sort, long_line_is_sorted_and_stable)
{
    enum { N = 1000 };
    int32_t *x = malloc(sizeof(int32_t) * N), *ix = malloc(sizeof(int32_t) * N);
    for (int i = 0; i < N; i++)
        x[i] = (i * 37) % 7;
    ref_view vx = view(VKT_S32, x, 1, N), vi = view(VKT_S32, ix, 1, N);
    ref_sort(&vx, 0, false, true, &vi);
    for (int i = 1; i < N; i++) {
        int32_t p = x[ix[i - 1]], q = x[ix[i]];
        cr_assert(p < q || (p == q && ix[i - 1] < ix[i]), "at %d: (%d,#%d) then (%d,#%d)", i, p,
                  ix[i - 1], q, ix[i]);
    }
    ref_sort(&vx, 0, true, true, &vi);
    for (int i = 1; i < N; i++) {
        int32_t p = x[ix[i - 1]], q = x[ix[i]];
        cr_assert(p > q || (p == q && ix[i - 1] < ix[i]), "desc at %d", i);
    }
    free(x);
    free(ix);
}
