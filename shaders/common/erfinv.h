/* erfinv.h — Giles' single-precision erfinv polynomials ("Approximating the erfinv function",
 * GPU Computing Gems, 2011, relative error about 1e-7): one text for the kernel
 * (elementwise/unary_ops.glsl, where it is the result) and the host reference
 * (backend/ref/math.c, where Newton steps polish it to double), so their coefficients cannot
 * drift apart. With w = -log((1 - x)(1 + x)), ERFINV_POLY sets p such that erfinv(x) is
 * about p * x: the central branch for w < 5, the tail's otherwise. p and w are variables of
 * the including side's floating type (float in GLSL, double in C); w is changed. */
#ifndef VKT_ERFINV_H
#define VKT_ERFINV_H

#define ERFINV_POLY(p, w)                                                                          \
    if (w < 5.0) {                                                                                 \
        w = w - 2.5;                                                                               \
        p = 2.81022636e-08;                                                                        \
        p = 3.43273939e-07 + p * w;                                                                \
        p = -3.5233877e-06 + p * w;                                                                \
        p = -4.39150654e-06 + p * w;                                                               \
        p = 0.00021858087 + p * w;                                                                 \
        p = -0.00125372503 + p * w;                                                                \
        p = -0.00417768164 + p * w;                                                                \
        p = 0.246640727 + p * w;                                                                   \
        p = 1.50140941 + p * w;                                                                    \
    } else {                                                                                       \
        w = sqrt(w) - 3.0;                                                                         \
        p = -0.000200214257;                                                                       \
        p = 0.000100950558 + p * w;                                                                \
        p = 0.00134934322 + p * w;                                                                 \
        p = -0.00367342844 + p * w;                                                                \
        p = 0.00573950773 + p * w;                                                                 \
        p = -0.0076224613 + p * w;                                                                 \
        p = 0.00943887047 + p * w;                                                                 \
        p = 1.00167406 + p * w;                                                                    \
        p = 2.83297682 + p * w;                                                                    \
    }

#endif
