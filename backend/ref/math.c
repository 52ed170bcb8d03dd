/* math.c — special functions libm lacks. */
#include "common.h"
#include "erfinv.h"

#define TWO_OVER_SQRT_PI 1.12837916709551257390

/* Giles' single-precision polynomial (erfinv.h, the kernel's own), relative error about
 * 1e-7, as a starting point. */
static double giles_guess(double x)
{
    double w = -log((1.0 - x) * (1.0 + x)), p;
    ERFINV_POLY(p, w)
    return p * x;
}

/* Newton steps polish the guess to double accuracy. Past 0.5 the equation is
 * taken as log(erfc(y)) = log(1 - x): 1 - x is exact there, erfc keeps the
 * digits that erf(y) - x would cancel, and the log makes Newton well-behaved
 * where the single-precision guess is extrapolated (1 - x below 1e-8). */
double ref_erf_inv(double x)
{
    if (isnan(x) || x < -1.0 || x > 1.0)
        return NAN;
    if (x == 1.0)
        return INFINITY;
    if (x == -1.0)
        return -INFINITY;
    if (x == 0.0)
        return x; /* keeps the sign of zero */
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
        if (fabs(step) <= 1e-17 * y)
            break;
    }
    return x < 0 ? -y : y;
}
