/* sort.c — stable sort and argsort along an axis: a bottom-up merge sort of
 * indices, one line at a time. NaN is the largest value, so it goes last
 * ascending and first descending; ties keep their original order both ways. */
#include <stdlib.h>

#include "common.h"

/* Whether u must come before v (strictly): equal keys never do, which with
 * left-first merging makes the sort stable. */
static int before(bool desc, double u, double v)
{
    if (isnan(u) || isnan(v))
        return desc ? (isnan(u) && !isnan(v)) : (!isnan(u) && isnan(v));
    return desc ? u > v : u < v;
}

static void merge_sort(const double *key, int32_t *ix, int32_t *tmp, int64_t n, bool desc)
{
    for (int64_t i = 0; i < n; i++)
        ix[i] = (int32_t)i;
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                tmp[o++] = before(desc, key[ix[j]], key[ix[i]]) ? ix[j++] : ix[i++];
            while (i < mid)
                tmp[o++] = ix[i++];
            while (j < hi)
                tmp[o++] = ix[j++];
        }
        memcpy(ix, tmp, (size_t)n * sizeof *ix);
    }
}

int ref_sort(const ref_view *x, int axis, bool descending, bool arg, ref_view *out)
{
    int64_t outer = 1, n = x->rank > 0 ? x->shape[axis] : 1, inner = 1;
    for (int i = 0; i < axis; i++)
        outer *= x->shape[i];
    for (int i = axis + 1; i < x->rank; i++)
        inner *= x->shape[i];
    if (outer * n * inner == 0)
        return VKT_OK;
    size_t es = ref_esize(x->dtype);
    double *key = malloc((size_t)n * sizeof *key);
    int32_t *ix = malloc((size_t)n * sizeof *ix), *tmp = malloc((size_t)n * sizeof *tmp);
    if (!key || !ix || !tmp) {
        free(key);
        free(ix);
        free(tmp);
        return VKT_ENOMEM;
    }
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t i = 0; i < inner; i++) {
            int64_t base = o * n * inner + i;
            /* Keys in double compare exactly for every dtype; values are copied
             * from x itself so NaN payloads and -0 survive bit for bit. */
            for (int64_t k = 0; k < n; k++)
                key[k] = ref_load(x->dtype, x->data, base + k * inner);
            merge_sort(key, ix, tmp, n, descending);
            for (int64_t k = 0; k < n; k++) {
                int64_t dst = base + k * inner;
                if (arg)
                    ((int32_t *)out->data)[dst] = ix[k];
                else
                    memcpy((char *)out->data + dst * (int64_t)es,
                           (const char *)x->data + (base + ix[k] * inner) * (int64_t)es, es);
            }
        }
    }
    free(key);
    free(ix);
    free(tmp);
    return VKT_OK;
}
