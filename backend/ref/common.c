/* common.c — shared machinery of the reference: element access, strided copies
 * and broadcast plans. */
#include "common.h"

#define CLASS_OF(name, cls) REF_##cls,
static const unsigned char unop_class[UN__COUNT] = {VKT_UNARY_OPS(CLASS_OF)};
static const unsigned char binop_class[BIN__COUNT] = {VKT_BINARY_OPS(CLASS_OF)};
#undef CLASS_OF

enum ref_class ref_unop_class(enum ref_unop op)
{
    return (unsigned)op < UN__COUNT ? (enum ref_class)unop_class[op] : REF__CLASSES;
}

enum ref_class ref_binop_class(enum ref_binop op)
{
    return (unsigned)op < BIN__COUNT ? (enum ref_class)binop_class[op] : REF__CLASSES;
}

size_t ref_numel(const ref_view *v)
{
    size_t n = 1;
    for (int i = 0; i < v->rank; i++)
        n *= (size_t)v->shape[i];
    return n;
}

void ref_store_double(vkt_dtype dt, void *p, int64_t i, double v)
{
    switch (dt) {
    case VKT_F32: ((float *)p)[i] = (float)v; break;
    case VKT_F64: ((double *)p)[i] = v; break;
    case VKT_S32: ((int32_t *)p)[i] = ref_f2s32(v); break;
    default: ((uint8_t *)p)[i] = ref_f2u8(v); break;
    }
}

void ref_contig_strides(int rank, const int64_t *shape, int64_t *strides)
{
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= shape[i];
    }
}

/* Merges adjacent dims whose strides chain (st[i] == st[i+1] * shape[i+1]) and
 * drops size-1 dims, so strided walks get the longest possible inner run. */
static int collapse(int rank, int64_t *shape, int64_t *st)
{
    int r = 0;
    for (int i = 0; i < rank; i++) {
        if (shape[i] == 1)
            continue;
        if (r > 0 && st[r - 1] == st[i] * shape[i]) {
            shape[r - 1] *= shape[i];
            st[r - 1] = st[i];
            continue;
        }
        shape[r] = shape[i];
        st[r] = st[i];
        r++;
    }
    if (r == 0) {
        shape[0] = 1;
        st[0] = 1;
        r = 1;
    }
    return r;
}

static void copy_run(char *dst, const char *src, int64_t st, int64_t n, size_t es)
{
    if (st == 1) {
        memcpy(dst, src, (size_t)n * es);
        return;
    }
    switch (es) {
    case 1:
        for (int64_t i = 0; i < n; i++)
            ((uint8_t *)dst)[i] = ((const uint8_t *)src)[i * st];
        break;
    case 4:
        for (int64_t i = 0; i < n; i++)
            ((uint32_t *)dst)[i] = ((const uint32_t *)src)[i * st];
        break;
    default:
        for (int64_t i = 0; i < n; i++)
            ((uint64_t *)dst)[i] = ((const uint64_t *)src)[i * st];
        break;
    }
}

void ref_copy_strided(void *dst, const void *src, int rank, const int64_t *shape, const int64_t *st,
                      size_t esize)
{
    int64_t sh[VKT_MAX_RANK], s[VKT_MAX_RANK];
    for (int i = 0; i < rank; i++) {
        if (shape[i] == 0)
            return;
        sh[i] = shape[i];
        s[i] = st[i];
    }
    int r = collapse(rank, sh, s);
    int64_t idx[VKT_MAX_RANK] = {0};
    int64_t inner = sh[r - 1], off = 0;
    char *d = dst;
    const char *base = src;
    for (;;) {
        copy_run(d, base + off * (int64_t)esize, s[r - 1], inner, esize);
        d += inner * (int64_t)esize;
        int ax = r - 2;
        while (ax >= 0) {
            off += s[ax];
            if (++idx[ax] < sh[ax])
                break;
            off -= s[ax] * sh[ax];
            idx[ax] = 0;
            ax--;
        }
        if (ax < 0)
            return;
    }
}

void ref_plan_make(ref_plan *p, const ref_view *out, const ref_view *const *ins, int nin)
{
    int64_t os[VKT_MAX_RANK];
    ref_contig_strides(out->rank, out->shape, os);
    p->nin = nin;
    /* Broadcast strides, right-aligned: a dim of 1 (or a missing one) reads 0. */
    int64_t st[REF_PLAN_MAX_IN][VKT_MAX_RANK];
    for (int k = 0; k < nin; k++) {
        const ref_view *v = ins[k];
        int64_t vs[VKT_MAX_RANK];
        ref_contig_strides(v->rank, v->shape, vs);
        for (int i = 0; i < out->rank; i++) {
            int j = i - (out->rank - v->rank);
            st[k][i] = (j >= 0 && v->shape[j] != 1) ? vs[j] : 0;
        }
    }
    /* Collapse the dims jointly: a merge must hold for the output and every input. */
    int r = 0;
    for (int i = 0; i < out->rank; i++) {
        if (out->shape[i] == 1)
            continue;
        int ok = r > 0 && os[r - 1] == os[i] * out->shape[i];
        for (int k = 0; ok && k < nin; k++)
            ok = p->st[k][r - 1] == st[k][i] * out->shape[i];
        if (ok) {
            p->shape[r - 1] *= out->shape[i];
            os[r - 1] = os[i];
            for (int k = 0; k < nin; k++)
                p->st[k][r - 1] = st[k][i];
            continue;
        }
        p->shape[r] = out->shape[i];
        os[r] = os[i];
        for (int k = 0; k < nin; k++)
            p->st[k][r] = st[k][i];
        r++;
    }
    if (r == 0) {
        p->shape[0] = 1;
        for (int k = 0; k < nin; k++)
            p->st[k][0] = 0;
        r = 1;
    }
    p->rank = r;
}

void ref_plan_run(const ref_plan *p, ref_row_fn row, void *ctx)
{
    for (int i = 0; i < p->rank; i++)
        if (p->shape[i] == 0)
            return;
    int r = p->rank;
    int64_t idx[VKT_MAX_RANK] = {0};
    int64_t off[REF_PLAN_MAX_IN] = {0}, inner_st[REF_PLAN_MAX_IN];
    for (int k = 0; k < p->nin; k++)
        inner_st[k] = p->st[k][r - 1];
    int64_t inner = p->shape[r - 1], o = 0;
    for (;;) {
        row(ctx, o, off, inner_st, inner);
        o += inner;
        int ax = r - 2;
        while (ax >= 0) {
            for (int k = 0; k < p->nin; k++)
                off[k] += p->st[k][ax];
            if (++idx[ax] < p->shape[ax])
                break;
            for (int k = 0; k < p->nin; k++)
                off[k] -= p->st[k][ax] * p->shape[ax];
            idx[ax] = 0;
            ax--;
        }
        if (ax < 0)
            return;
    }
}
