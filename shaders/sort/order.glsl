// The order of a stable sort: NaN is the largest value (last ascending, first
// descending), equal keys keep their original order (index breaks ties), and
// the sentinel index SENT (padding) goes after everything. Needs TC, and
// IS_FLOAT for NaN handling.
#define SENT 0xffffffffu

#if defined(IS_FLOAT)
#include "floatbits.glsl"
// f32 keys compare on the bits, so a driver that flushes subnormals still
// orders 1e-40 above 0 (the H200's would call them equal); f64 as is.
bool ord_lt(float u, float v) { return fb_lt(u, v); }
bool ord_ne(float u, float v) { return !fb_eq(u, v); }
bool ord_lt(double u, double v) { return u < v; }
bool ord_ne(double u, double v) { return u != v; }
#endif

bool sort_before(TC u, uint iu, TC v, uint iv, bool desc)
{
    if (iu == SENT)
        return false;
    if (iv == SENT)
        return true;
#if defined(IS_FLOAT)
    bool nu = isnan(u), nv = isnan(v);
    if (nu != nv)
        return desc ? nu : nv;
    if (!nu && ord_ne(u, v))
        return desc ? ord_lt(v, u) : ord_lt(u, v);
#else
    if (u != v)
        return desc ? u > v : u < v;
#endif
    return iu < iv;
}
