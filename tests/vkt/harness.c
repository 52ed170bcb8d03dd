/* harness.c — shared helpers of the libvkt suites (see harness.h). */
#include "harness.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

vkt_ctx *h_ctx;
bool h_accept_ftz;

int64_t h_past_range(size_t elem_bytes, int64_t extra)
{
    uint64_t range = vkt_ctx_max_tensor_bytes(h_ctx);
    int64_t n = (int64_t)(range / elem_bytes) + extra;
    if (n > (int64_t)1 << 28)
        cr_skip_test(
            "maxStorageBufferRange on %s is %llu bytes: a tensor past it is too large to test here",
            vkt_ctx_device_name(h_ctx), (unsigned long long)range);
    return n;
}

void h_setup(void)
{
    int s = vkt_ctx_create(NULL, &h_ctx);
    cr_assert_eq(s, VKT_OK, "vkt_ctx_create: %s", vkt_last_error());
}

void h_teardown(void)
{
    vkt_ctx_destroy(h_ctx);
    h_ctx = NULL;
}

/* ---- shapes ------------------------------------------------------------------ */

// clang-format off
#define S(r, ...) {r, {__VA_ARGS__}}
// clang-format on
static const h_shape shapes[] = {
    S(0, 0),
    S(1, 0),
    S(1, 1),
    S(1, 7),
    S(1, 255),
    S(1, 256),
    S(1, 257),
    S(1, 1031),
    S(2, 3, 5),
    S(2, 0, 4),
    S(2, 17, 33),
    S(3, 2, 3, 4),
    S(4, 1, 3, 1, 5),
    S(5, 2, 1, 3, 2, 3),
    S(6, 2, 3, 1, 2, 3, 2),
    S(6, 1, 1, 1, 1, 1, 1),
    S(2, 100, 41),
};
static const h_bcast bcasts[] = {
    {S(0, 0), S(1, 7), S(1, 7)},
    {S(1, 1), S(1, 257), S(1, 257)},
    {S(2, 3, 1), S(1, 5), S(2, 3, 5)},
    {S(3, 4, 1, 6), S(2, 3, 1), S(3, 4, 3, 6)},
    {S(2, 0, 3), S(1, 3), S(2, 0, 3)},
    {S(2, 5, 1), S(1, 0), S(2, 5, 0)},
    {S(6, 2, 1, 3, 1, 2, 1), S(6, 1, 4, 1, 5, 1, 3), S(6, 2, 4, 3, 5, 2, 3)},
    {S(4, 1, 300, 1, 1), S(2, 1, 7), S(4, 1, 300, 1, 7)},
    {S(2, 300, 1), S(2, 1, 300), S(2, 300, 300)},
    {S(1, 257), S(0, 0), S(1, 257)},
};
#undef S

size_t h_shapes(const h_shape **out)
{
    *out = shapes;
    return sizeof shapes / sizeof shapes[0];
}

h_shape h_huge_shape(void)
{
    return (h_shape){1, {(int64_t)65536 * 256 + 257}};
}

size_t h_bcast_pairs(const h_bcast **out)
{
    *out = bcasts;
    return sizeof bcasts / sizeof bcasts[0];
}

size_t h_numel(const h_shape *s)
{
    size_t n = 1;
    for (int i = 0; i < s->rank; i++)
        n *= (size_t)s->d[i];
    return n;
}

const char *h_shape_str(const h_shape *s)
{
    static _Thread_local char buf[128];
    int k = snprintf(buf, sizeof buf, "[");
    for (int i = 0; i < s->rank && k < (int)sizeof buf - 24; i++)
        k += snprintf(buf + k, sizeof buf - (size_t)k, "%s%lld", i ? "," : "", (long long)s->d[i]);
    snprintf(buf + k, sizeof buf - (size_t)k, "]");
    return buf;
}

/* ---- tensors ------------------------------------------------------------------- */

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void put(vkt_dtype dt, void *data, size_t i, double v)
{
    switch (dt) {
    case VKT_F32: ((float *)data)[i] = (float)v; break;
    case VKT_F64: ((double *)data)[i] = v; break;
    case VKT_S32: ((int32_t *)data)[i] = (int32_t)v; break;
    case VKT_U8: ((uint8_t *)data)[i] = (uint8_t)(int64_t)v; break;
    }
}

double h_get(vkt_dtype dt, const void *data, size_t i)
{
    switch (dt) {
    case VKT_F32: return ((const float *)data)[i];
    case VKT_F64: return ((const double *)data)[i];
    case VKT_S32: return ((const int32_t *)data)[i];
    case VKT_U8: return ((const uint8_t *)data)[i];
    }
    return NAN;
}

static vkt_tensor *make(vkt_dtype dt, const h_shape *s, void *data)
{
    vkt_tensor *t = NULL;
    int st = vkt_tensor_from_host(h_ctx, dt, s->d, s->rank, data, &t);
    free(data);
    cr_assert_eq(st, VKT_OK, "vkt_tensor_from_host %s %s: %s", vkt_dtype_name(dt), h_shape_str(s),
                 vkt_last_error());
    return t;
}

vkt_tensor *h_rand(vkt_dtype dt, const h_shape *s, double lo, double hi, uint64_t seed)
{
    size_t n = h_numel(s);
    void *data = malloc(n * vkt_dtype_size(dt) + 1);
    cr_assert(data);
    uint64_t st = seed * 0x2545f4914f6cdd1dull + 1;
    if (dt == VKT_U8) {
        lo = lo < 0 ? 0 : lo;
        hi = hi > 255 ? 255 : hi;
    } else if (dt == VKT_S32) {
        lo = lo < INT32_MIN ? INT32_MIN : lo;
        hi = hi > INT32_MAX ? INT32_MAX : hi;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t r = splitmix(&st);
        if (dt == VKT_F32 || dt == VKT_F64) {
            put(dt, data, i, lo + (hi - lo) * ((double)(r >> 11) / 9007199254740992.0));
        } else {
            int64_t l = (int64_t)ceil(lo), span = (int64_t)floor(hi) - l + 1;
            put(dt, data, i, (double)(l + (int64_t)(r % (uint64_t)span)));
        }
    }
    return make(dt, s, data);
}

vkt_tensor *h_from(vkt_dtype dt, const h_shape *s, const double *vals, size_t nvals)
{
    size_t n = h_numel(s);
    void *data = malloc(n * vkt_dtype_size(dt) + 1);
    cr_assert(data);
    for (size_t i = 0; i < n; i++)
        put(dt, data, i, vals[i % nvals]);
    return make(dt, s, data);
}

vkt_tensor *h_scalar(vkt_dtype dt, double v)
{
    h_shape s = {0, {0}};
    return h_from(dt, &s, &v, 1);
}

void *h_read(const vkt_tensor *t)
{
    size_t nb = vkt_tensor_nbytes(t);
    void *d = malloc(nb + 1);
    cr_assert(d);
    int s = vkt_tensor_read(t, d, nb);
    cr_assert_eq(s, VKT_OK, "vkt_tensor_read: %s", vkt_last_error());
    return d;
}

/* ---- poisoning -------------------------------------------------------------------- */

/* One 8-byte word repeated from the range's start: as f64 it is a NaN, each of
 * its 4-byte halves is an f32 NaN, and as s32/u8 it is unlikely data. Results
 * start 16-byte aligned, so every element sees the same bytes the fill wrote. */
static const uint8_t poison_word[8] = {0xab, 0xab, 0xa5, 0x7f, 0xab, 0xab, 0xf4, 0x7f};

void h_poison_fill(void *buf, size_t nbytes)
{
    for (size_t i = 0; i < nbytes; i++)
        ((uint8_t *)buf)[i] = poison_word[i % 8];
}

void h_poison(vkt_ctx *ctx, size_t nbytes)
{
    int s = vkt_sync(ctx);
    cr_assert_eq(s, VKT_OK, "vkt_sync: %s", vkt_last_error());
    uint8_t *fill = malloc(nbytes + 8);
    cr_assert(fill);
    h_poison_fill(fill, nbytes);
    int64_t shape[1] = {(int64_t)nbytes};
    vkt_tensor *p = NULL;
    s = vkt_tensor_from_host(ctx, VKT_U8, shape, 1, fill, &p);
    free(fill);
    cr_assert_eq(s, VKT_OK, "poison tensor: %s", vkt_last_error());
    vkt_tensor_free(p);
}

bool h_is_poison(vkt_dtype dt, const void *data, size_t i)
{
    size_t sz = vkt_dtype_size(dt);
    const uint8_t *b = (const uint8_t *)data + i * sz;
    for (size_t k = 0; k < sz; k++)
        if (b[k] != poison_word[(i * sz + k) % 8])
            return false;
    return true;
}

/* ---- comparisons ---------------------------------------------------------------- */

double h_ulp(vkt_dtype dt, double a, double b)
{
    if (a == b)
        return 0;
    if (dt == VKT_F32) {
        float fa = (float)a, fb = (float)b;
        int32_t ia, ib;
        memcpy(&ia, &fa, 4);
        memcpy(&ib, &fb, 4);
        /* Map sign-magnitude onto a monotonic integer line. */
        int64_t la = ia < 0 ? (int64_t)INT32_MIN - ia : ia,
                lb = ib < 0 ? (int64_t)INT32_MIN - ib : ib;
        return fabs((double)(la - lb));
    }
    int64_t ia, ib;
    memcpy(&ia, &a, 8);
    memcpy(&ib, &b, 8);
    long double la = ia < 0 ? (long double)INT64_MIN - ia : ia,
                lb = ib < 0 ? (long double)INT64_MIN - ib : ib;
    return (double)fabsl(la - lb);
}

static bool measuring(void)
{
    const char *m = getenv("H_MEASURE");
    return m && *m == '1';
}

h_err h_compare(const vkt_tensor *got, const vkt_tensor *want, h_tol tol, const char *what)
{
    h_err e = {0, 0, 0, 0};
    vkt_dtype dt = vkt_tensor_dtype(want);
    cr_assert_eq(vkt_tensor_dtype(got), dt, "%s: dtype %s, want %s", what,
                 vkt_dtype_name(vkt_tensor_dtype(got)), vkt_dtype_name(dt));
    int rank = vkt_tensor_rank(want);
    cr_assert_eq(vkt_tensor_rank(got), rank, "%s: rank %d, want %d", what, vkt_tensor_rank(got),
                 rank);
    for (int i = 0; i < rank; i++)
        cr_assert_eq(vkt_tensor_shape(got)[i], vkt_tensor_shape(want)[i],
                     "%s: dim %d is %lld, want %lld", what, i, (long long)vkt_tensor_shape(got)[i],
                     (long long)vkt_tensor_shape(want)[i]);
    size_t n = vkt_tensor_numel(want);
    void *g = h_read(got), *w = h_read(want);
    bool fl = dt == VKT_F32 || dt == VKT_F64;
    for (size_t i = 0; i < n; i++) {
        double gv = h_get(dt, g, i), wv = h_get(dt, w, i);
        if (h_is_poison(dt, g, i) && !h_is_poison(dt, w, i)) {
            free(g);
            free(w);
            cr_assert_fail("%s: element %zu was never written (poison), want %.9g", what, i, wv);
        }
        bool ok;
        if (!fl)
            ok = gv == wv;
        else if (isnan(wv) || isnan(gv))
            ok = isnan(wv) && isnan(gv);
        else if (isinf(wv) || isinf(gv))
            ok = gv == wv;
        else if (h_accept_ftz && dt == VKT_F32 && gv == 0 && fabs(wv) < FLT_MIN &&
                 signbit(gv) == signbit(wv))
            ok = true;
        else {
            double d = fabs(gv - wv), rel = wv != 0 ? d / fabs(wv) : (d ? INFINITY : 0),
                   u = h_ulp(dt, gv, wv);
            /* H_MEASURE=1 collects finite errors without judging them. */
            ok = d <= tol.abs + tol.rel * fabs(wv) || u <= tol.ulp || measuring();
            if (d > e.max_abs)
                e.max_abs = d;
            if (rel > e.max_rel && fabs(wv) > 1e-30)
                e.max_rel = rel;
            if (u > e.max_ulp)
                e.max_ulp = u;
        }
        if (!ok) {
            free(g);
            free(w);
            cr_assert_fail("%s: element %zu of %zu is %.17g, want %.17g (tol abs %g rel %g ulp %g)",
                           what, i, n, gv, wv, tol.abs, tol.rel, tol.ulp);
        }
    }
    e.n = n;
    free(g);
    free(w);
    return e;
}

int h_oracle(h_call f, vkt_tensor *const *in, const void *arg, vkt_tensor **out)
{
    int s = vkt_ctx_set_native_disable(h_ctx, "all");
    cr_assert_eq(s, VKT_OK);
    int r = f(in, arg, out);
    h_native_disable_env();
    return r;
}

void h_native_disable_env(void)
{
    const char *env = getenv("VKT_NATIVE_DISABLE");
    int s = vkt_ctx_set_native_disable(h_ctx, env ? env : "");
    cr_assert_eq(s, VKT_OK, "vkt_ctx_set_native_disable: %s", vkt_last_error());
}

/* ---- the path ------------------------------------------------------------------------ */

h_mark h_mark_now(void)
{
    h_mark m;
    m.n = vkt_stats(m.e, H_MAX_OPS);
    cr_assert(m.n <= H_MAX_OPS, "vkt_stats lists %zu ops, the harness holds %d", m.n, H_MAX_OPS);
    return m;
}

static vkt_stats_entry moved(const h_mark *m, const vkt_stats_entry *now)
{
    vkt_stats_entry d = *now;
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->e[i].op, now->op) == 0) {
            d.native -= m->e[i].native;
            d.fallback -= m->e[i].fallback;
            d.host -= m->e[i].host;
        }
    return d;
}

bool h_gated(const char *op, vkt_dtype dt, size_t bytes)
{
    if (bytes > vkt_ctx_max_tensor_bytes(h_ctx))
        return true;
    for (size_t i = 0; i < vkt_op_count(); i++)
        if (strcmp(vkt_op_name(i), op) == 0)
            return vkt_op_support(i, dt, NULL) == VKT_FALLBACK;
    cr_assert_fail("op %s ran but is not in the support matrix", op);
    return false;
}

/* The path check of both: `gates` false holds every op to the native path. */
static void expect_moves(const h_mark *m, fbcount_census *c, bool gates, vkt_dtype dt, size_t bytes,
                         const char *what)
{
    h_mark now = h_mark_now();
    uint64_t fallbacks = 0;
    size_t ran = 0;
    for (size_t i = 0; i < now.n; i++) {
        vkt_stats_entry d = moved(m, &now.e[i]);
        if (!d.native && !d.fallback && !d.host)
            continue;
        ran++;
        fallbacks += d.fallback;
        cr_assert_eq(d.host, 0, "%s: vkt_%s ran %llu time(s) on the host (host-resident inputs)",
                     what, d.op, (unsigned long long)d.host);
        if (gates && h_gated(d.op, dt, bytes))
            cr_assert_eq(d.native, 0,
                         "%s: vkt_%s ran natively %llu time(s) where the gates say %s of %zu bytes "
                         "falls back",
                         what, d.op, (unsigned long long)d.native, vkt_dtype_name(dt), bytes);
        else if (gates)
            cr_assert_eq(
                d.fallback, 0,
                "%s: vkt_%s fell back %llu time(s) (census: %llu) where the gates admit %s "
                "of %zu bytes: a silent fallback",
                what, d.op, (unsigned long long)d.fallback,
                (unsigned long long)(c ? fbcount_census_total(c) : 0), vkt_dtype_name(dt), bytes);
        else
            cr_assert_eq(d.fallback, 0, "%s: vkt_%s did not run natively (%llu fallback)", what,
                         d.op, (unsigned long long)d.fallback);
    }
    cr_assert(ran > 0, "%s: no libvkt op ran", what);
    if (c)
        cr_assert_eq(fbcount_census_total(c), fallbacks,
                     "%s: libfbcount counted %llu fallbacks, libvkt %llu", what,
                     (unsigned long long)fbcount_census_total(c), (unsigned long long)fallbacks);
}

void h_expect_path(const h_mark *m, fbcount_census *c, vkt_dtype dt, size_t bytes, const char *what)
{
    expect_moves(m, c, true, dt, bytes, what);
}

void h_expect_native(const h_mark *m, const char *what)
{
    expect_moves(m, NULL, false, VKT_F32, 0, what);
}

int h_run(h_call f, vkt_tensor *const *in, int nin, const void *arg, vkt_tensor **out,
          const char *what)
{
    static const int order[VKT_NUM_DTYPES] = {
        [VKT_U8] = 0, [VKT_S32] = 1, [VKT_F32] = 2, [VKT_F64] = 3};
    vkt_dtype dt = VKT_U8;
    size_t bytes = 0;
    for (int i = 0; i < nin; i++) {
        if (order[vkt_tensor_dtype(in[i])] > order[dt])
            dt = vkt_tensor_dtype(in[i]);
        if (vkt_tensor_nbytes(in[i]) > bytes)
            bytes = vkt_tensor_nbytes(in[i]);
    }
    h_mark m = h_mark_now();
    fbcount_scope_begin();
    int s = f(in, arg, out);
    fbcount_census *c = fbcount_scope_end();
    if (s == VKT_OK) {
        if (vkt_tensor_nbytes(*out) > bytes)
            bytes = vkt_tensor_nbytes(*out);
        h_expect_path(&m, c, dt, bytes, what);
    }
    fbcount_census_free(c);
    return s;
}

h_err h_check(h_call f, vkt_tensor *const *in, int nin, const void *arg, h_tol tol,
              const char *what)
{
    vkt_tensor *want = NULL, *got = NULL;
    int rs = h_oracle(f, in, arg, &want);
    h_poison(h_ctx, rs == VKT_OK ? vkt_tensor_nbytes(want) : 0);
    int ns = h_run(f, in, nin, arg, &got, what);
    cr_assert_eq(ns, rs, "%s: native status %s (%s), reference %s", what, vkt_status_name(ns),
                 vkt_last_error(), vkt_status_name(rs));
    h_err e = {0, 0, 0, 0};
    if (rs != VKT_OK) {
        cr_assert_null(got, "%s: *out not NULL after an error", what);
        return e;
    }
    e = h_compare(got, want, tol, what);
    vkt_tensor_free(got);
    vkt_tensor_free(want);
    const char *rep = getenv("H_REPORT");
    if (rep && *rep == '1' && e.n)
        printf("H_REPORT %s abs %.3g rel %.3g ulp %.0f\n", what, e.max_abs, e.max_rel, e.max_ulp);
    return e;
}
