/* helpers.h — building ref_views over stack arrays for the reference's tests. */
#ifndef TEST_REF_HELPERS_H
#define TEST_REF_HELPERS_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "ref.h"

/* view(dtype, data, rank, d0, d1, ...): dims passed as ints. */
static inline ref_view view(vkt_dtype dt, void *data, int rank, ...)
{
    ref_view v;
    memset(&v, 0, sizeof v);
    v.dtype = dt;
    v.rank = rank;
    v.data = data;
    va_list ap;
    va_start(ap, rank);
    for (int i = 0; i < rank; i++)
        v.shape[i] = va_arg(ap, int);
    va_end(ap);
    return v;
}

/* Equal as values, with NaN equal to NaN (the oracle's results are exact). */
static inline int same_f32(float a, float b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

static inline int same_f64(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

#define EXPECT_F32(got, want)                                                                      \
    do {                                                                                           \
        for (int i_ = 0; i_ < N_OF(want); i_++)                                                    \
            cr_expect(same_f32((got)[i_], (want)[i_]), "[%d] got %.9g want %.9g", i_,              \
                      (double)(got)[i_], (double)(want)[i_]);                                      \
    } while (0)

#define EXPECT_F64(got, want)                                                                      \
    do {                                                                                           \
        for (int i_ = 0; i_ < N_OF(want); i_++)                                                    \
            cr_expect(same_f64((got)[i_], (want)[i_]), "[%d] got %.17g want %.17g", i_, (got)[i_], \
                      (want)[i_]);                                                                 \
    } while (0)

#define EXPECT_INT(got, want)                                                                      \
    do {                                                                                           \
        for (int i_ = 0; i_ < N_OF(want); i_++)                                                    \
            cr_expect((long long)(got)[i_] == (long long)(want)[i_], "[%d] got %lld want %lld",    \
                      i_, (long long)(got)[i_], (long long)(want)[i_]);                            \
    } while (0)

#endif
