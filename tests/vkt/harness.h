/* harness.h — what every libvkt test suite shares: a context per test, seeded
 * random tensors, poisoned result memory, the host reference as the oracle, and
 * tolerant comparisons that say which element differs and by how much.
 *
 * Prefix h_. The oracle is the same op run with every native path disabled
 * (vkt_ctx_set_native_disable(ctx, "all")), so it is exactly what a fallback
 * would compute; the host reference itself is checked by the ref suite.
 *
 * A check of a native op checks its path as well as its value: values alone
 * cannot see a fallback, which computes the same result. Every native run is
 * counted twice, by libvkt's own counters (vkt_stats) and by libfbcount's
 * census of the call (the suites link libfbcount, as an application would),
 * and fails unless the op ran natively or the static gates say that it falls
 * back for that dtype and size. So VKT_NATIVE_DISABLE=<op> makes the op's
 * suite fail, naming it. */
#ifndef VKT_TEST_HARNESS_H
#define VKT_TEST_HARNESS_H

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fbcount.h"
#include "vkt.h"

/* ---- context ---------------------------------------------------------------- */

/* The context of the running test: created by h_setup, destroyed by h_teardown.
 * Use as `TestSuite(x, .init = h_setup, .fini = h_teardown)`. */
extern vkt_ctx *h_ctx;
void h_setup(void);
void h_teardown(void);

/* Asserts that a libvkt call returned VKT_OK, printing vkt_last_error() if not. */
#define H_OK(call)                                                                                 \
    do {                                                                                           \
        int h_ok_s_ = (call);                                                                      \
        cr_assert_eq(h_ok_s_, VKT_OK, "%s -> %s: %s", #call, vkt_status_name(h_ok_s_),             \
                     vkt_last_error());                                                            \
    } while (0)

/* ---- shapes ----------------------------------------------------------------- */

typedef struct h_shape {
    int rank;
    int64_t d[VKT_MAX_RANK];
} h_shape;

/* The standard shape list: rank 0..6, sizes 0, 1, odd, one workgroup (256) and
 * either side of it, several workgroups. Returns the count; *out is static. */
size_t h_shapes(const h_shape **out);
/* One shape past 65,535 workgroups of 256 along a single axis (2^24 + 257
 * elements): slow on lavapipe, so suites use it once or twice. */
h_shape h_huge_shape(void);
/* Pairs of shapes that broadcast together (and the expected result shape),
 * including size-0 and rank-changing cases. */
typedef struct h_bcast {
    h_shape a, b, out;
} h_bcast;
size_t h_bcast_pairs(const h_bcast **out);
size_t h_numel(const h_shape *s);
/* "[2,3,4]" in a static per-thread buffer, for messages. */
const char *h_shape_str(const h_shape *s);

/* ---- tensors ------------------------------------------------------------------ */

/* Seeded random tensor: floats uniform in [lo, hi]; integers uniform in the
 * integer range [lo, hi] (clamped to the dtype: u8 to 0..255). */
vkt_tensor *h_rand(vkt_dtype dt, const h_shape *s, double lo, double hi, uint64_t seed);
/* Tensor of dtype dt whose elements are vals[i % nvals] (converted as C does,
 * NaN/Inf kept for floats). */
vkt_tensor *h_from(vkt_dtype dt, const h_shape *s, const double *vals, size_t nvals);
/* Rank-0 tensor holding v. */
vkt_tensor *h_scalar(vkt_dtype dt, double v);
/* The tensor's elements, malloc'ed (free with free()); a sync point. */
void *h_read(const vkt_tensor *t);
/* Element i of a host buffer of dtype dt as a double. */
double h_get(vkt_dtype dt, const void *data, size_t i);

/* ---- poisoning ---------------------------------------------------------------- */

/* Fills the device range that the next op's result will get with a pattern
 * (an 8-byte word that is a NaN as f64 and as both f32 halves), so an element the
 * op never writes reads back as poison instead of stale plausible data.
 *
 * How: sync (so frees are not deferred), allocate an nbytes tensor filled with
 * the pattern, free it. The sub-allocator is first-fit in a fixed block order,
 * so the next allocation of the same size lands exactly on that range (the
 * freed range is the first hole that fits it, and merging with neighbours only
 * grows that hole at the same aligned start). Guaranteed when: the next
 * device allocation in this context is the result (true for exec_run, which
 * allocates the result before native temporaries; host-resident inputs moved
 * up are allocated first and break it), its size rounds to the same 16 bytes,
 * and nbytes <= 32 MiB (larger ranges get dedicated blocks that are returned
 * to the driver on free). test_elementwise.c checks the landing white-box. */
void h_poison(vkt_ctx *ctx, size_t nbytes);
/* Writes the pattern over a host buffer (for checking the checks). */
void h_poison_fill(void *buf, size_t nbytes);
/* True when element i of a dtype-dt buffer holds the poison pattern. */
bool h_is_poison(vkt_dtype dt, const void *data, size_t i);

/* ---- the oracle and comparisons -------------------------------------------------- */

/* Tolerance: |got - want| <= abs + rel * |want|, or within `ulp` units in the
 * last place (f32/f64). Integers and u8 always compare exactly. NaN must meet
 * NaN, infinities must match in sign. */
typedef struct h_tol {
    double abs, rel, ulp;
} h_tol;
/* An element count just past the device's maxStorageBufferRange for elements of
 * elem_bytes, plus extra; skips the calling test where that would pass 2^28
 * elements (4 GiB ranges, as on an H200, are too large to test here). */
int64_t h_past_range(size_t elem_bytes, int64_t extra);
/* While set, an f32 result whose reference is below FLT_MIN may come back as a
 * zero of its sign: for arithmetic on devices that flush subnormals. */
extern bool h_accept_ftz;
#define H_EXACT ((h_tol){0, 0, 0})

/* Largest errors seen by one comparison (for measuring tolerances). */
typedef struct h_err {
    double max_abs, max_rel, max_ulp;
    size_t n;
} h_err;

/* One op call on up to 8 inputs with an op-specific argument. */
typedef int (*h_call)(vkt_tensor *const *in, const void *arg, vkt_tensor **out);

/* Runs f under the oracle (native paths disabled, on the same context and
 * inputs), then natively on poisoned memory through h_run (so the path is
 * checked); asserts equal statuses, equal shapes and dtypes, and elements
 * within tol. `what` names the case in failures. Returns the measured errors;
 * with H_REPORT=1 in the environment prints them, and H_MEASURE=1 turns
 * tolerance failures off (NaN, Inf and poison still fail) to measure an op's
 * real errors when setting tolerances.md. */
h_err h_check(h_call f, vkt_tensor *const *in, int nin, const void *arg, h_tol tol,
              const char *what);
/* Compares two results element by element (same dtype and shape asserted). */
h_err h_compare(const vkt_tensor *got, const vkt_tensor *want, h_tol tol, const char *what);
/* Runs f with every native path disabled: the host reference's result. The
 * context's list goes back to what VKT_NATIVE_DISABLE asked for afterwards. */
int h_oracle(h_call f, vkt_tensor *const *in, const void *arg, vkt_tensor **out);
/* Sets the context's list of disabled ops back to VKT_NATIVE_DISABLE's (the
 * environment's, "" when unset): what a native run must run under. */
void h_native_disable_env(void);

/* ---- the path ----------------------------------------------------------------------- */

/* libvkt's per-op counters at one moment. */
#define H_MAX_OPS 160
typedef struct h_mark {
    size_t n;
    vkt_stats_entry e[H_MAX_OPS];
} h_mark;
h_mark h_mark_now(void);

/* Whether the static gates send op `op` down the fallback for inputs of dtype
 * dt with `bytes` as its largest tensor: the support matrix (vkt_op_support)
 * says so for dt, or a tensor is past vkt_ctx_max_tensor_bytes. */
bool h_gated(const char *op, vkt_dtype dt, size_t bytes);

/* Asserts how the ops called since m ran, from the counters: each op that ran
 * ran natively, or, where h_gated(op, dt, bytes), through the fallback; no
 * host-resident run; at least one op ran. c, libfbcount's census of the same
 * calls, must hold exactly the fallbacks the counters show. */
void h_expect_path(const h_mark *m, fbcount_census *c, vkt_dtype dt, size_t bytes,
                   const char *what);

/* Runs f natively, as h_check does: under a census and between two readings of
 * the counters, then asserts the path (h_expect_path) for the inputs' merged
 * dtype (u8 < s32 < f32 < f64) and the largest of inputs and result. A call
 * that fails is not checked (it ran nothing). Returns f's status. */
int h_run(h_call f, vkt_tensor *const *in, int nin, const void *arg, vkt_tensor **out,
          const char *what);

/* Asserts that every op called since m ran natively (at least one did). */
void h_expect_native(const h_mark *m, const char *what);

/* A libvkt call on device-resident inputs of dtypes the gates admit: asserts
 * VKT_OK, that nothing fell back (libfbcount's census of the call), and that
 * the counters show every op it called ran natively. */
#define H_NATIVE(call)                                                                             \
    do {                                                                                           \
        h_mark h_native_m_ = h_mark_now();                                                         \
        FBCOUNT_ASSERT_NONE(H_OK(call));                                                           \
        h_expect_native(&h_native_m_, #call);                                                      \
    } while (0)
/* Distance in units in the last place between two finite values of dt. */
double h_ulp(vkt_dtype dt, double a, double b);

#endif
