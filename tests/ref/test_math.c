/* test_math.c — ref_erf_inv: special values, known values, and round trips
 * through libm's erf/erfc over the whole domain, tails included. */
#include <criterion/criterion.h>

#include "common.h"
#include "helpers.h"

Test(ref_erf_inv, special_values)
{
    cr_expect_eq(ref_erf_inv(0.0), 0.0);
    cr_expect(signbit(ref_erf_inv(-0.0)));
    cr_expect(isinf(ref_erf_inv(1.0)) && ref_erf_inv(1.0) > 0);
    cr_expect(isinf(ref_erf_inv(-1.0)) && ref_erf_inv(-1.0) < 0);
    cr_expect(isnan(ref_erf_inv(1.5)));
    cr_expect(isnan(ref_erf_inv(-1.0000001)));
    cr_expect(isnan(ref_erf_inv(NAN)));
}

Test(ref_erf_inv, known_values)
{
    struct {
        double x, y;
    } k[] = {
        /* erfinv of the exact double argument, from 30-digit arithmetic */
        {0.5, 0.476936276204469873381},
        {0.9, 1.16308715367667416284},
        {-0.999, -2.32675376551352449387},
        {1e-10, 8.86226925452758045939e-11},
    };
    for (int i = 0; i < N_OF(k); i++) {
        double y = ref_erf_inv(k[i].x);
        cr_expect(fabs(y - k[i].y) <= 4e-16 * fabs(k[i].y), "erf_inv(%g) = %.17g want %.17g",
                  k[i].x, y, k[i].y);
    }
}

Test(ref_erf_inv, round_trips_to_double_accuracy)
{
    for (int i = -1999; i <= 1999; i++) {
        double x = i / 2000.0, y = ref_erf_inv(x);
        cr_expect(fabs(erf(y) - x) <= 2.5e-16 * fmax(fabs(x), 1e-3), "x=%.17g y=%.17g", x, y);
    }
    /* The tail, where only erfc can tell a good answer from a bad one. */
    for (int e = 2; e <= 16; e++) {
        double c = pow(10.0, -e), x = 1.0 - c, y = ref_erf_inv(x);
        double exact_c = 1.0 - x; /* what x really is, since 1 - 10^-e rounds */
        cr_expect(fabs(erfc(y) / exact_c - 1.0) <= 1e-13, "x=1-1e-%d y=%.17g", e, y);
        cr_expect_eq(ref_erf_inv(-x), -y);
    }
    double tiny = 1e-300;
    cr_expect(fabs(ref_erf_inv(tiny) / (tiny * 0.88622692545275801) - 1.0) < 1e-15);
}

Test(ref_erf_inv, f32_rounds_the_double_once)
{
    float x[] = {0.5f, -0.25f, 0.999f}, y[3];
    ref_view vx = view(VKT_F32, x, 1, 3), vy = view(VKT_F32, y, 1, 3);
    ref_unary(UN_erf_inv, &vx, &vy);
    for (int i = 0; i < 3; i++)
        cr_expect_eq(y[i], (float)ref_erf_inv(x[i]));
    cr_expect_eq(y[0], 0.47693628f);
}
