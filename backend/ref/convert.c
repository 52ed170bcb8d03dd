/* convert.c — dtype conversion, fill and iota: the rules of vkt_as_type in one
 * place (floats truncate toward zero and saturate, NaN -> 0; s32 -> u8 keeps the
 * low byte). */
#include "common.h"

#define CONV(TS, TD, EXPR)                                                                         \
    do {                                                                                           \
        const TS *s_ = x->data;                                                                    \
        TD *d_ = out->data;                                                                        \
        for (size_t i = 0; i < n; i++) {                                                           \
            TS v = s_[i];                                                                          \
            d_[i] = (EXPR);                                                                        \
        }                                                                                          \
    } while (0)

int ref_convert(const ref_view *x, ref_view *out)
{
    size_t n = ref_numel(x);
    if (n == 0)
        return VKT_OK;
    if (x->dtype == out->dtype) {
        memcpy(out->data, x->data, n * ref_esize(x->dtype));
        return VKT_OK;
    }
    switch (x->dtype) {
    case VKT_F32:
        switch (out->dtype) {
        case VKT_F64: CONV(float, double, (double)v); break;
        case VKT_S32: CONV(float, int32_t, ref_f2s32(v)); break;
        default: CONV(float, uint8_t, ref_f2u8(v)); break;
        }
        break;
    case VKT_F64:
        switch (out->dtype) {
        case VKT_F32: CONV(double, float, (float)v); break;
        case VKT_S32: CONV(double, int32_t, ref_f2s32(v)); break;
        default: CONV(double, uint8_t, ref_f2u8(v)); break;
        }
        break;
    case VKT_S32:
        switch (out->dtype) {
        case VKT_F32: CONV(int32_t, float, (float)v); break;
        case VKT_F64: CONV(int32_t, double, (double)v); break;
        default: CONV(int32_t, uint8_t, (uint8_t)v); break; /* low byte, as C does */
        }
        break;
    default:
        switch (out->dtype) {
        case VKT_F32: CONV(uint8_t, float, (float)v); break;
        case VKT_F64: CONV(uint8_t, double, (double)v); break;
        default: CONV(uint8_t, int32_t, (int32_t)v); break;
        }
        break;
    }
    return VKT_OK;
}

int ref_fill(ref_view *out, double value)
{
    size_t n = ref_numel(out), es = ref_esize(out->dtype);
    if (n == 0)
        return VKT_OK;
    ref_store_double(out->dtype, out->data, 0, value);
    /* Doubling copies: log2(n) memcpys instead of n stores through a switch. */
    char *d = out->data;
    size_t done = 1;
    while (done < n) {
        size_t k = done < n - done ? done : n - done;
        memcpy(d + done * es, d, k * es);
        done += k;
    }
    return VKT_OK;
}

/* An index is an integer, so it converts with integer rules: it wraps in s32 and
 * u8 (as XLA's integer iota does) instead of saturating like a float would. */
static void store_index(vkt_dtype dt, void *p, size_t i, int64_t k)
{
    switch (dt) {
    case VKT_F32: ((float *)p)[i] = (float)k; break;
    case VKT_F64: ((double *)p)[i] = (double)k; break;
    case VKT_S32: ((int32_t *)p)[i] = (int32_t)(uint32_t)k; break;
    default: ((uint8_t *)p)[i] = (uint8_t)k; break;
    }
}

int ref_iota(ref_view *out, int axis)
{
    size_t n = ref_numel(out);
    if (n == 0)
        return VKT_OK;
    if (axis == VKT_ALL_AXES || out->rank == 0) {
        for (size_t i = 0; i < n; i++)
            store_index(out->dtype, out->data, i, (int64_t)i);
        return VKT_OK;
    }
    int64_t inner = 1;
    for (int i = axis + 1; i < out->rank; i++)
        inner *= out->shape[i];
    int64_t dim = out->shape[axis];
    for (size_t i = 0; i < n; i++)
        store_index(out->dtype, out->data, i, ((int64_t)i / inner) % dim);
    return VKT_OK;
}
