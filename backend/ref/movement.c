/* movement.c — data movement: every op here is a strided copy (transpose,
 * broadcast, slice, reverse) or a sequence of contiguous runs (pad,
 * concatenate, gather), so all of them lean on ref_copy_strided. */
#include "common.h"

int ref_transpose(const ref_view *x, const int *perm, ref_view *out)
{
    int64_t xs[VKT_MAX_RANK], st[VKT_MAX_RANK];
    ref_contig_strides(x->rank, x->shape, xs);
    for (int i = 0; i < out->rank; i++)
        st[i] = xs[perm[i]];
    ref_copy_strided(out->data, x->data, out->rank, out->shape, st, ref_esize(x->dtype));
    return VKT_OK;
}

int ref_broadcast(const ref_view *x, const int *axes, ref_view *out)
{
    int64_t xs[VKT_MAX_RANK], st[VKT_MAX_RANK] = {0};
    ref_contig_strides(x->rank, x->shape, xs);
    for (int i = 0; i < x->rank; i++)
        st[axes[i]] = x->shape[i] == 1 ? 0 : xs[i];
    ref_copy_strided(out->data, x->data, out->rank, out->shape, st, ref_esize(x->dtype));
    return VKT_OK;
}

int ref_slice(const ref_view *x, const int64_t *start, const int64_t *strides, ref_view *out)
{
    int64_t xs[VKT_MAX_RANK], st[VKT_MAX_RANK], off = 0;
    size_t es = ref_esize(x->dtype);
    if (ref_numel(out) == 0)
        return VKT_OK;
    ref_contig_strides(x->rank, x->shape, xs);
    for (int i = 0; i < x->rank; i++) {
        off += start[i] * xs[i];
        st[i] = (strides ? strides[i] : 1) * xs[i];
    }
    ref_copy_strided(out->data, (const char *)x->data + off * (int64_t)es, x->rank, out->shape, st,
                     es);
    return VKT_OK;
}

int ref_reverse(const ref_view *x, unsigned axis_mask, ref_view *out)
{
    int64_t xs[VKT_MAX_RANK], st[VKT_MAX_RANK], off = 0;
    size_t es = ref_esize(x->dtype);
    if (ref_numel(x) == 0)
        return VKT_OK;
    ref_contig_strides(x->rank, x->shape, xs);
    for (int i = 0; i < x->rank; i++) {
        int rev = (axis_mask >> i) & 1u;
        st[i] = rev ? -xs[i] : xs[i];
        if (rev)
            off += (x->shape[i] - 1) * xs[i];
    }
    ref_copy_strided(out->data, (const char *)x->data + off * (int64_t)es, x->rank, x->shape, st,
                     es);
    return VKT_OK;
}

int ref_concatenate(const ref_view *const *xs, int n, int axis, ref_view *out)
{
    size_t es = ref_esize(out->dtype);
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; i++)
        outer *= out->shape[i];
    for (int i = axis + 1; i < out->rank; i++)
        inner *= out->shape[i];
    char *d = out->data;
    for (int64_t o = 0; o < outer; o++) {
        for (int j = 0; j < n; j++) {
            size_t run = (size_t)(xs[j]->shape[axis] * inner) * es;
            if (run == 0)
                continue;
            memcpy(d, (const char *)xs[j]->data + (size_t)o * run, run);
            d += run;
        }
    }
    return VKT_OK;
}

/* Nx.pad: x element i of an axis lands at lo + i * (interior + 1); positions
 * outside [0, out dim) are the ones negative lo/hi trim away. */
int ref_pad(const ref_view *x, const void *value, const int64_t *lo, const int64_t *hi,
            const int64_t *interior, ref_view *out)
{
    (void)hi; /* out's shape already accounts for it */
    size_t es = ref_esize(x->dtype), nout = ref_numel(out);
    if (nout == 0)
        return VKT_OK;
    char *d = out->data;
    memcpy(d, value, es);
    for (size_t done = 1; done < nout;) {
        size_t k = done < nout - done ? done : nout - done;
        memcpy(d + done * es, d, k * es);
        done += k;
    }
    if (ref_numel(x) == 0)
        return VKT_OK;
    if (x->rank == 0) {
        memcpy(d, x->data, es);
        return VKT_OK;
    }
    int r = x->rank, last = r - 1;
    int64_t os[VKT_MAX_RANK], idx[VKT_MAX_RANK] = {0};
    ref_contig_strides(r, out->shape, os);
    /* Range of the last axis that survives the trims: lo + i*step in [0, dim). */
    int64_t step = interior[last] + 1, dim = out->shape[last];
    int64_t i0 = lo[last] >= 0 ? 0 : (-lo[last] + step - 1) / step;
    int64_t i1 = x->shape[last];
    if (lo[last] + (i1 - 1) * step >= dim)
        i1 = (dim - 1 - lo[last]) / step + 1;
    if (dim - 1 - lo[last] < 0)
        i1 = 0;
    const char *s = x->data;
    for (;;) {
        int64_t base = 0;
        int inside = 1;
        for (int a = 0; a < last; a++) {
            int64_t p = lo[a] + idx[a] * (interior[a] + 1);
            if (p < 0 || p >= out->shape[a])
                inside = 0;
            base += p * os[a];
        }
        if (inside && i1 > i0) {
            char *o = d + (base + lo[last] + i0 * step) * (int64_t)es;
            const char *src = s + i0 * (int64_t)es;
            if (step == 1)
                memcpy(o, src, (size_t)(i1 - i0) * es);
            else
                for (int64_t i = 0; i < i1 - i0; i++)
                    memcpy(o + i * step * (int64_t)es, src + i * (int64_t)es, es);
        }
        s += x->shape[last] * (int64_t)es;
        int ax = last - 1;
        while (ax >= 0) {
            if (++idx[ax] < x->shape[ax])
                break;
            idx[ax] = 0;
            ax--;
        }
        if (ax < 0)
            return VKT_OK;
    }
}

int ref_gather(const ref_view *x, const ref_view *idx, const int *axes, int k, ref_view *out)
{
    size_t es = ref_esize(x->dtype), nout = ref_numel(out);
    if (nout == 0)
        return VKT_OK;
    int64_t xs[VKT_MAX_RANK], fshape[VKT_MAX_RANK], fst[VKT_MAX_RANK];
    ref_contig_strides(x->rank, x->shape, xs);
    int indexed[VKT_MAX_RANK] = {0}, nf = 0;
    for (int j = 0; j < k; j++)
        indexed[axes[j]] = 1;
    int64_t slab = 1;
    for (int i = 0; i < x->rank; i++) {
        if (indexed[i])
            continue;
        fshape[nf] = x->shape[i];
        fst[nf++] = xs[i];
        slab *= x->shape[i];
    }
    for (int j = 0; j < k; j++) {
        if (x->shape[axes[j]] == 0) { /* nothing to gather from: defined as zeros */
            memset(out->data, 0, nout * es);
            return VKT_OK;
        }
    }
    size_t nidx = 1; /* index tuples: every axis of idx but the last */
    for (int i = 0; i < idx->rank - 1; i++)
        nidx *= (size_t)idx->shape[i];
    const int32_t *iv = idx->data;
    char *d = out->data;
    for (size_t t = 0; t < nidx; t++, d += slab * (int64_t)es) {
        int64_t off = 0;
        for (int j = 0; j < k; j++) {
            int64_t v = iv[t * (size_t)k + (size_t)j], n = x->shape[axes[j]];
            v = v < 0 ? 0 : v >= n ? n - 1 : v;
            off += v * xs[axes[j]];
        }
        ref_copy_strided(d, (const char *)x->data + off * (int64_t)es, nf, fshape, fst, es);
    }
    return VKT_OK;
}
