/* elementwise.c — the elementwise family: unary, binary (with broadcasting),
 * select, clip and as_type.
 *
 * Parts: shaders/elementwise/ (unary.comp, binary.comp, ternary.comp for
 * select and clip, convert.comp for as_type; cmath.glsl and cmath64.glsl for
 * the math functions); host reference backend/ref/unary.c, binary.c,
 * convert.c, math.c; tests tests/vkt/test_elementwise.c and tests/ref/
 * (test_unary.c, test_binary.c, test_convert.c, test_math.c).
 *
 * Each public op validates its arguments, works out the result's shape and
 * dtype, states its gate, and hands both a native recorder and a host
 * reference computation to exec_run(). */
#include <stdlib.h>
#include <string.h>

#include "spirv_table.h"
#include "opsupport.h"

enum { EW_UNARY, EW_BINARY, EW_SELECT, EW_CLIP, EW_CONVERT };

typedef struct ew_params {
    int code;          /* enum ref_unop / ref_binop */
    vkt_dtype compute; /* dtype the inputs are converted to */
} ew_params;

static const int unary_shaders[2][VKT_NUM_DTYPES] = {
    {SPV_unary_f32, SPV_unary_f64, SPV_unary_s32, SPV_unary_u8},
    {SPV_unary_pred_f32, SPV_unary_pred_f64, SPV_unary_pred_s32, SPV_unary_pred_u8}};
static const int binary_shaders[2][VKT_NUM_DTYPES] = {
    {SPV_binary_f32, SPV_binary_f64, SPV_binary_s32, SPV_binary_u8},
    {SPV_binary_pred_f32, SPV_binary_pred_f64, SPV_binary_pred_s32, SPV_binary_pred_u8}};
static const int select_shaders[VKT_NUM_DTYPES] = {SPV_select_f32, SPV_select_f64, SPV_select_s32,
                                                   SPV_select_u8};
static const int clip_shaders[VKT_NUM_DTYPES] = {SPV_clip_f32, SPV_clip_f64, SPV_clip_s32,
                                                 SPV_clip_u8};

/* ---- op classes (vkt.h's lists carry them; ref.h's tables read them) ----- */

static bool unary_is(int code, enum ref_class cls)
{
    return ref_unop_class((enum ref_unop)code) == cls;
}

static bool binary_is(int code, enum ref_class cls)
{
    return ref_binop_class((enum ref_binop)code) == cls;
}

static vkt_support unary_support(const op_info *info, vkt_dtype dt, const char **reason)
{
    if (unary_is(info->code, REF_INT) && op_is_float(dt)) {
        *reason = "integers only";
        return VKT_UNDEFINED;
    }
    /* Every other unary op has a native f64 form (GLSL's builtins, cmath64.glsl). */
    if (dt == VKT_F64 && info->code == UN_erfc) {
        *reason =
            "f64 erfc's kernel loses up to 508 ulp for large arguments on an H200 (tolerances.md)";
        return VKT_FALLBACK;
    }
    return VKT_NATIVE;
}

static vkt_support binary_support(const op_info *info, vkt_dtype dt, const char **reason)
{
    if (binary_is(info->code, REF_INT) && op_is_float(dt)) {
        *reason = "integers only";
        return VKT_UNDEFINED;
    }
    if (dt == VKT_F64 && info->code == BIN_pow) {
        *reason = "no double-precision pow in GLSL or cmath64.glsl yet";
        return VKT_FALLBACK;
    }
    return VKT_NATIVE;
}

/* ---- shared push constants ---------------------------------------------- */

static void fill_push(ew_push *pc, const vkt_tensor *out, const vkt_tensor *const *ins, int n)
{
    memset(pc, 0, sizeof *pc);
    pc->n = (uint32_t)out->numel;
    pc->rank = (uint32_t)out->rank;
    pc->contig = 1;
    for (int d = 0; d < out->rank; d++)
        pc->shape[d] = (uint32_t)out->shape[d];
    uint32_t *strides[3] = {pc->sa, pc->sb, pc->sc};
    for (int i = 0; i < n; i++) {
        if (ins[i]->numel != out->numel || ins[i]->rank != out->rank)
            pc->contig = 0;
        op_bcast_strides(ins[i], out->shape, out->rank, strides[i]);
    }
}

/* Converts every input to dt on the device; temporaries go in owned[]. */
static int convert_all(const vkt_tensor **ins, int n, vkt_dtype dt, vkt_tensor **owned)
{
    for (int i = 0; i < n; i++)
        TRY(op_device_convert(ins[i], dt, &ins[i], &owned[i]));
    return VKT_OK;
}

static void free_all(vkt_tensor **owned, int n)
{
    for (int i = 0; i < n; i++)
        vkt_tensor_free(owned[i]);
}

/* ---- unary ---------------------------------------------------------------- */

static int unary_native(exec_call *c)
{
    const ew_params *p = c->params;
    const vkt_tensor *x = c->in[0];
    vkt_tensor *tmp = NULL;
    int s = op_device_convert(x, p->compute, &x, &tmp);
    if (s == VKT_OK) {
        ew_push pc;
        fill_push(&pc, c->out, &x, 1);
        tn_storage *bufs[2] = {x->st, c->out->st};
        int shader = unary_shaders[unary_is(p->code, REF_PRED)][p->compute];
        uint64_t n = c->out->numel;
        /* An f32 op on f32 input is one step a graph may fuse. */
        rt_ew ew = {.kind = FU_UNARY,
                    .op = (uint32_t)p->code,
                    .nin = 1,
                    .n = (uint32_t)c->out->numel,
                    .div = {1},
                    .mod = {(uint32_t)c->out->numel}};
        bool fusable = false;
        if (p->compute == VKT_F32 && !unary_is(p->code, REF_PRED)) {
            shader = SPV_unary_f32_v4; /* four elements a thread, 16-byte loads and stores */
            n = n / 4 > 0 ? n / 4 : 1;
            fusable = !tmp;
        }
        s = op_dispatch_ew(c->out->ctx, shader, (uint32_t)p->code, &pc, sizeof pc, bufs, 2, n,
                           fusable ? &ew : NULL);
    }
    vkt_tensor_free(tmp);
    return s;
}

static int unary_host(exec_call *c, const ref_view *in, ref_view *out)
{
    const ew_params *p = c->params;
    ref_view x;
    void *owned;
    TRY(op_host_convert(&in[0], p->compute, &x, &owned));
    int s = ref_unary((enum ref_unop)p->code, &x, out);
    free(owned);
    return s;
}

static int run_unary(const op_info *info, const vkt_tensor *x, vkt_tensor **out)
{
    err_clear();
    if (!out)
        return err_set(VKT_EINVAL, "vkt_%s: out is NULL", info->name);
    *out = NULL;
    TRY(tn_check_tensor(x, info->name, "x"));
    ew_params p = {info->code, x->dtype};
    if (unary_is(info->code, REF_MATH) && !op_is_float(x->dtype))
        p.compute = VKT_F32;
    vkt_dtype odt = unary_is(info->code, REF_PRED) ? VKT_U8 : p.compute;
    exec_call c = {.info = info,
                   .in = {x},
                   .nin = 1,
                   .dtype = x->dtype,
                   .native = unary_native,
                   .host = unary_host,
                   .params = &p};
    TRY(tn_new(x->ctx, odt, x->shape, x->rank, &c.out));
    return exec_run(&c, out);
}

/* ---- binary ---------------------------------------------------------------- */

static int binary_native(exec_call *c)
{
    const ew_params *p = c->params;
    const vkt_tensor *ins[2] = {c->in[0], c->in[1]};
    vkt_tensor *owned[2] = {0};
    int s = convert_all(ins, 2, p->compute, owned);
    if (s == VKT_OK) {
        ew_push pc;
        fill_push(&pc, c->out, ins, 2);
        tn_storage *bufs[3] = {ins[0]->st, ins[1]->st, c->out->st};
        bool pred = binary_is(p->code, REF_PRED);
        int shader = binary_shaders[pred][p->compute];
        uint64_t n = c->out->numel;
        /* binary_f32_v4 streams the four IEEE operations */
        bool v4op = p->code == BIN_add || p->code == BIN_subtract || p->code == BIN_multiply ||
                    p->code == BIN_divide;
        if (pc.contig && p->compute == VKT_F32 && v4op) {
            shader = SPV_binary_f32_v4;
            n = n / 4 > 0 ? n / 4 : 1;
        }
        /* An f32 op on f32 inputs whose broadcasts fuse is one step a graph
         * may fuse. */
        rt_ew ew = {
            .kind = FU_BINARY, .op = (uint32_t)p->code, .nin = 2, .n = (uint32_t)c->out->numel};
        bool fusable = p->compute == VKT_F32 && !pred && !owned[0] && !owned[1] &&
                       op_ew_pattern(c->out->shape, c->out->rank, pc.sa, &ew.div[0], &ew.mod[0]) &&
                       op_ew_pattern(c->out->shape, c->out->rank, pc.sb, &ew.div[1], &ew.mod[1]);
        s = op_dispatch_ew(c->out->ctx, shader, (uint32_t)p->code, &pc, sizeof pc, bufs, 3, n,
                           fusable ? &ew : NULL);
    }
    free_all(owned, 2);
    return s;
}

static int binary_host(exec_call *c, const ref_view *in, ref_view *out)
{
    const ew_params *p = c->params;
    ref_view v[2];
    void *owned[2];
    int s = op_host_convert_n(in, 2, p->compute, v, owned);
    if (s == VKT_OK)
        s = ref_binary((enum ref_binop)p->code, &v[0], &v[1], out);
    free(owned[0]);
    free(owned[1]);
    return s;
}

static int run_binary(const op_info *info, const vkt_tensor *a, const vkt_tensor *b,
                      vkt_tensor **out)
{
    err_clear();
    if (!out)
        return err_set(VKT_EINVAL, "vkt_%s: out is NULL", info->name);
    *out = NULL;
    TRY(tn_check_tensor(a, info->name, "a"));
    TRY(tn_check_tensor(b, info->name, "b"));
    ew_params p = {info->code, op_promote(a->dtype, b->dtype)};
    if (binary_is(info->code, REF_MATH) && !op_is_float(p.compute))
        p.compute = VKT_F32;
    int64_t shape[VKT_MAX_RANK];
    int rank;
    const vkt_tensor *ins[2] = {a, b};
    TRY(op_broadcast_shape(info->name, ins, 2, shape, &rank));
    exec_call c = {.info = info,
                   .in = {a, b},
                   .nin = 2,
                   .dtype = p.compute,
                   .native = binary_native,
                   .host = binary_host,
                   .params = &p};
    TRY(tn_new(a->ctx, binary_is(info->code, REF_PRED) ? VKT_U8 : p.compute, shape, rank, &c.out));
    return exec_run(&c, out);
}

/* ---- select and clip ------------------------------------------------------ */

static int ternary_native(exec_call *c)
{
    const ew_params *p = c->params;
    const vkt_tensor *ins[3] = {c->in[0], c->in[1], c->in[2]};
    vkt_tensor *owned[5] = {0};
    int s = VKT_OK;
    bool sel = p->code == EW_SELECT;
    if (sel && ins[0]->dtype != VKT_U8) {
        /* Any nonzero predicate is true: (p == 0) == 0, as u8, in two passes. */
        for (int k = 0; k < 2 && s == VKT_OK; k++) {
            const vkt_tensor *src = ins[0];
            s = tn_new(src->ctx, VKT_U8, src->shape, src->rank, &owned[3 + k]);
            if (s == VKT_OK)
                s = tn_alloc_device(owned[3 + k]);
            if (s == VKT_OK) {
                ew_push pc;
                fill_push(&pc, src, &src, 1);
                tn_storage *bufs[2] = {src->st, owned[3 + k]->st};
                s = op_dispatch(src->ctx, unary_shaders[1][src->dtype], UN_logical_not, &pc,
                                sizeof pc, bufs, 2, src->numel);
                ins[0] = owned[3 + k];
            }
        }
    }
    if (s == VKT_OK)
        s = convert_all(ins + (sel ? 1 : 0), sel ? 2 : 3, p->compute, owned + (sel ? 1 : 0));
    if (s == VKT_OK) {
        ew_push pc;
        fill_push(&pc, c->out, ins, 3);
        tn_storage *bufs[4] = {ins[0]->st, ins[1]->st, ins[2]->st, c->out->st};
        int shader = sel ? select_shaders[p->compute] : clip_shaders[p->compute];
        s = op_dispatch(c->out->ctx, shader, 0, &pc, sizeof pc, bufs, 4, c->out->numel);
    }
    free_all(owned, 5);
    return s;
}

static int ternary_host(exec_call *c, const ref_view *in, ref_view *out)
{
    const ew_params *p = c->params;
    bool sel = p->code == EW_SELECT;
    ref_view v[3] = {in[0], in[1], in[2]};
    void *owned[3] = {0};
    int s = VKT_OK;
    for (int i = sel ? 1 : 0; i < 3 && s == VKT_OK; i++)
        s = op_host_convert(&in[i], p->compute, &v[i], &owned[i]);
    if (s == VKT_OK)
        s = sel ? ref_select(&v[0], &v[1], &v[2], out) : ref_clip(&v[0], &v[1], &v[2], out);
    for (int i = 0; i < 3; i++)
        free(owned[i]);
    return s;
}

static int run_ternary(const op_info *info, int kind, const vkt_tensor *const ins[3],
                       vkt_tensor **out)
{
    static const char *const names[2][3] = {{"pred", "on_true", "on_false"}, {"x", "lo", "hi"}};
    err_clear();
    if (!out)
        return err_set(VKT_EINVAL, "vkt_%s: out is NULL", info->name);
    *out = NULL;
    for (int i = 0; i < 3; i++)
        TRY(tn_check_tensor(ins[i], info->name, names[kind == EW_CLIP][i]));
    ew_params p = {kind,
                   kind == EW_SELECT ? op_promote(ins[1]->dtype, ins[2]->dtype) : ins[0]->dtype};
    int64_t shape[VKT_MAX_RANK];
    int rank;
    TRY(op_broadcast_shape(info->name, ins, 3, shape, &rank));
    exec_call c = {.info = info,
                   .in = {ins[0], ins[1], ins[2]},
                   .nin = 3,
                   .native = ternary_native,
                   .host = ternary_host,
                   .params = &p};
    TRY(tn_new(ins[0]->ctx, p.compute, shape, rank, &c.out));
    return exec_run(&c, out);
}

/* ---- as_type ---------------------------------------------------------------- */

static int convert_native(exec_call *c)
{
    const vkt_tensor *x = c->in[0];
    /* Same dtype is a copy, so the result owns its storage like every op's. */
    ew_push pc = {.n = (uint32_t)x->numel, .contig = 1};
    tn_storage *bufs[2] = {x->st, c->out->st};
    return op_dispatch(x->ctx, op_convert_shader(x->dtype, c->out->dtype), 0, &pc, sizeof pc, bufs,
                       2, x->numel);
}

static int convert_host(exec_call *c, const ref_view *in, ref_view *out)
{
    (void)c;
    return ref_convert(&in[0], out);
}

/* ---- public functions and the family table ------------------------------- */

#define UNARY_INFO(name, cls) OP_ENTRY(name, unary_support, UN_##name),
#define BINARY_INFO(name, cls) OP_ENTRY(name, binary_support, BIN_##name),
enum { EWI_SELECT = UN__COUNT + BIN__COUNT, EWI_CLIP, EWI_AS_TYPE, EWI__COUNT };
static const op_info ew_ops[EWI__COUNT] = {
    VKT_UNARY_OPS(UNARY_INFO) VKT_BINARY_OPS(BINARY_INFO)[EWI_SELECT] =
        OP_ENTRY(select, NULL, EW_SELECT),
    [EWI_CLIP] = OP_ENTRY(clip, NULL, EW_CLIP),
    [EWI_AS_TYPE] = OP_ENTRY(as_type, NULL, EW_CONVERT),
};
const op_table op_table_elementwise = {ew_ops, EWI__COUNT};

#define UNARY_DEF(name, cls)                                                                       \
    VKT_API int vkt_##name(const vkt_tensor *x, vkt_tensor **out)                                  \
    {                                                                                              \
        return run_unary(&ew_ops[UN_##name], x, out);                                              \
    }
#define BINARY_DEF(name, cls)                                                                      \
    VKT_API int vkt_##name(const vkt_tensor *a, const vkt_tensor *b, vkt_tensor **out)             \
    {                                                                                              \
        return run_binary(&ew_ops[UN__COUNT + BIN_##name], a, b, out);                             \
    }
VKT_UNARY_OPS(UNARY_DEF)
VKT_BINARY_OPS(BINARY_DEF)

VKT_API int vkt_select(const vkt_tensor *pred, const vkt_tensor *on_true,
                       const vkt_tensor *on_false, vkt_tensor **out)
{
    const vkt_tensor *ins[3] = {pred, on_true, on_false};
    return run_ternary(&ew_ops[EWI_SELECT], EW_SELECT, ins, out);
}

VKT_API int vkt_clip(const vkt_tensor *x, const vkt_tensor *lo, const vkt_tensor *hi,
                     vkt_tensor **out)
{
    const vkt_tensor *ins[3] = {x, lo, hi};
    return run_ternary(&ew_ops[EWI_CLIP], EW_CLIP, ins, out);
}

VKT_API int vkt_as_type(const vkt_tensor *x, vkt_dtype dtype, vkt_tensor **out)
{
    const op_info *info = &ew_ops[EWI_AS_TYPE];
    err_clear();
    if (!out)
        return err_set(VKT_EINVAL, "vkt_as_type: out is NULL");
    *out = NULL;
    TRY(tn_check_tensor(x, info->name, "x"));
    if ((unsigned)dtype >= VKT_NUM_DTYPES)
        return err_set(VKT_EDTYPE, "vkt_as_type: invalid dtype %d", (int)dtype);
    exec_call c = {
        .info = info, .in = {x}, .nin = 1, .native = convert_native, .host = convert_host};
    TRY(tn_new(x->ctx, dtype, x->shape, x->rank, &c.out));
    return exec_run(&c, out);
}

/* ---- device property: f32 subnormals ------------------------------------- */

/* 2^-140 + 0 through the f32 add kernel, dispatched directly so that no op is
 * counted: a device that flushes returns 0. */
VKT_API int vkt_ctx_flushes_subnormals(vkt_ctx *ctx)
{
    err_clear();
    if (!ctx)
        return err_set(VKT_EINVAL, "vkt_ctx_flushes_subnormals: ctx is NULL");
    if (ctx->flush_known)
        return ctx->flushes;
    const float in[2] = {0x1p-140f, 0.0f};
    const float zero[2] = {0.0f, 0.0f};
    float got[2] = {1.0f, 1.0f};
    int64_t shape[1] = {2};
    vkt_tensor *x = NULL, *y = NULL, *o = NULL;
    int s = vkt_tensor_from_host(ctx, VKT_F32, shape, 1, in, &x);
    if (s == VKT_OK)
        s = vkt_tensor_from_host(ctx, VKT_F32, shape, 1, zero, &y);
    if (s == VKT_OK)
        s = tn_new(ctx, VKT_F32, shape, 1, &o);
    if (s == VKT_OK)
        s = tn_alloc_device(o);
    if (s == VKT_OK) {
        const vkt_tensor *ins[2] = {x, y};
        ew_push pc;
        fill_push(&pc, o, ins, 2);
        tn_storage *bufs[3] = {x->st, y->st, o->st};
        s = op_dispatch(ctx, SPV_binary_f32, (uint32_t)BIN_add, &pc, sizeof pc, bufs, 3, 2);
    }
    if (s == VKT_OK)
        s = vkt_tensor_read(o, got, sizeof got);
    vkt_tensor_free(x);
    vkt_tensor_free(y);
    vkt_tensor_free(o);
    if (s != VKT_OK)
        return s;
    ctx->flush_known = true;
    ctx->flushes = got[0] == 0.0f;
    return ctx->flushes;
}
