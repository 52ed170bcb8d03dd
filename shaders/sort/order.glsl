// The order of a stable sort: NaN is the largest value (last ascending, first
// descending), equal keys keep their original order (index breaks ties), and
// the sentinel index SENT (padding) goes after everything. Needs TC, and
// IS_FLOAT for NaN handling.
#define SENT 0xffffffffu

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
    if (!nu && u != v)
        return desc ? u > v : u < v;
#else
    if (u != v)
        return desc ? u > v : u < v;
#endif
    return iu < iv;
}
