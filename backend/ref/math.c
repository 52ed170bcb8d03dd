/* math.c — special functions libm lacks. */
#include "common.h"

#define TWO_OVER_SQRT_PI 1.12837916709551257390

/* Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011): the
 * single-precision polynomial, relative error about 1e-7, as a starting point. */
static double giles_guess(double x)
{
    double w = -log((1.0 - x) * (1.0 + x)), p;
    if (w < 5.0) {
        w -= 2.5;
        p = 2.81022636e-08;
        p = 3.43273939e-07 + p * w;
        p = -3.5233877e-06 + p * w;
        p = -4.39150654e-06 + p * w;
        p = 0.00021858087 + p * w;
        p = -0.00125372503 + p * w;
        p = -0.00417768164 + p * w;
        p = 0.246640727 + p * w;
        p = 1.50140941 + p * w;
    } else {
        w = sqrt(w) - 3.0;
        p = -0.000200214257;
        p = 0.000100950558 + p * w;
        p = 0.00134934322 + p * w;
        p = -0.00367342844 + p * w;
        p = 0.00573950773 + p * w;
        p = -0.0076224613 + p * w;
        p = 0.00943887047 + p * w;
        p = 1.00167406 + p * w;
        p = 2.83297682 + p * w;
    }
    return p * x;
}

/* Newton steps polish the guess to double accuracy. Past 0.5 the equation is
 * taken as log(erfc(y)) = log(1 - x): 1 - x is exact there, erfc keeps the
 * digits that erf(y) - x would cancel, and the log makes Newton well-behaved
 * where the single-precision guess is extrapolated (1 - x below 1e-8). */
double ref_erf_inv(double x)
{
    if (isnan(x) || x < -1.0 || x > 1.0) return NAN;
    if (x == 1.0) return INFINITY;
    if (x == -1.0) return -INFINITY;
    if (x == 0.0) return x; /* keeps the sign of zero */
    double a = fabs(x), y = giles_guess(a), c = 1.0 - a, logc = log(c);
    for (int i = 0; i < 8; i++) {
        double d = TWO_OVER_SQRT_PI * exp(-y * y), step;
        if (a > 0.5) {
            double e = erfc(y);
            step = (log(e) - logc) * e / d;
        } else {
            step = -(erf(y) - a) / d;
        }
        y += step;
        if (fabs(step) <= 1e-17 * y) break;
    }
    return x < 0 ? -y : y;
}
