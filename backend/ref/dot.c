/* dot.c — general contraction. Both operands are packed once into
 * [batch, free, contract] order (b transposed that way too) so every inner
 * product runs over two contiguous rows. Floats accumulate in double and round
 * once; integers accumulate modulo 2^64 and wrap to the output width. */
#include <stdlib.h>

#include "common.h"

/* Packs v with axes ordered batch, free (ascending), contract into dst;
 * returns the free size through *nfree. */
static void pack(const ref_view *v, const int *bat, int nb, const int *con, int nc, void *dst,
                 int64_t *nfree)
{
    int64_t vs[VKT_MAX_RANK], shape[VKT_MAX_RANK], st[VKT_MAX_RANK];
    int used[VKT_MAX_RANK] = {0}, r = 0;
    ref_contig_strides(v->rank, v->shape, vs);
    for (int i = 0; i < nb; i++) {
        used[bat[i]] = 1;
        shape[r] = v->shape[bat[i]];
        st[r++] = vs[bat[i]];
    }
    for (int i = 0; i < nc; i++)
        used[con[i]] = 1;
    *nfree = 1;
    for (int i = 0; i < v->rank; i++) {
        if (used[i])
            continue;
        shape[r] = v->shape[i];
        st[r++] = vs[i];
        *nfree *= v->shape[i];
    }
    for (int i = 0; i < nc; i++) {
        shape[r] = v->shape[con[i]];
        st[r++] = vs[con[i]];
    }
    ref_copy_strided(dst, v->data, r, shape, st, ref_esize(v->dtype));
}

#define DOT_LOOP(T, ACC, OUT_EXPR)                                                                 \
    do {                                                                                           \
        const T *pa_ = pa, *pb_ = pb;                                                              \
        T *y_ = out->data;                                                                         \
        for (int64_t q = 0; q < nbat; q++)                                                         \
            for (int64_t m = 0; m < M; m++) {                                                      \
                const T *ra = pa_ + (q * M + m) * K;                                               \
                for (int64_t j = 0; j < N; j++) {                                                  \
                    const T *rb = pb_ + (q * N + j) * K;                                           \
                    ACC acc = 0;                                                                   \
                    for (int64_t t = 0; t < K; t++)                                                \
                        acc += (ACC)ra[t] * (ACC)rb[t];                                            \
                    y_[(q * M + m) * N + j] = (OUT_EXPR);                                          \
                }                                                                                  \
            }                                                                                      \
    } while (0)

int ref_dot(const ref_view *a, const int *ca, const int *ba, const ref_view *b, const int *cb,
            const int *bb, int nc, int nb, ref_view *out)
{
    size_t nout = ref_numel(out), es = ref_esize(out->dtype);
    if (nout == 0)
        return VKT_OK;
    int64_t nbat = 1, K = 1, M, N;
    for (int i = 0; i < nb; i++)
        nbat *= a->shape[ba[i]];
    for (int i = 0; i < nc; i++)
        K *= a->shape[ca[i]];
    if (K == 0) { /* an empty contraction is a sum of nothing */
        memset(out->data, 0, nout * es);
        return VKT_OK;
    }
    void *pa = malloc(ref_numel(a) * es), *pb = malloc(ref_numel(b) * es);
    if (!pa || !pb) {
        free(pa);
        free(pb);
        return VKT_ENOMEM;
    }
    pack(a, ba, nb, ca, nc, pa, &M);
    pack(b, bb, nb, cb, nc, pb, &N);
    switch (out->dtype) {
    case VKT_F32: DOT_LOOP(float, double, (float)acc); break;
    case VKT_F64: DOT_LOOP(double, double, acc); break;
    /* Unsigned 64-bit products and sums are exact modulo 2^64, hence modulo 2^32. */
    case VKT_S32: DOT_LOOP(int32_t, uint64_t, (int32_t)(uint32_t)acc); break;
    default: DOT_LOOP(uint8_t, uint64_t, (uint8_t)acc); break;
    }
    free(pa);
    free(pb);
    return VKT_OK;
}
