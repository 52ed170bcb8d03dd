/* reduce.c — the reduce family: sum, product, reduce_max, reduce_min, all, any
 * over any axis set, and argmax/argmin along one axis or the flattened tensor.
 *
 * Parts: shaders/reduce/ (reduce.comp for the reductions, argreduce.comp for
 * argmax/argmin, both on reduce.glsl); host reference backend/ref/reduce.c;
 * tests tests/vkt/test_reduce.c and tests/ref/test_reduce.c.
 *
 * The input is seen as [kept groups, reduced groups]: adjacent axes of the same
 * kind merge, so at most three of each remain and the shaders (shaders/reduce)
 * find every element from push-constant shapes and strides, with no host round
 * trip for any axis set. Each dispatch reduces per (output, part): parts split
 * a long reduction over many workgroups, and the next dispatch reduces the
 * partials as contiguous rows until one part is left. */
#include <stdlib.h>
#include <string.h>

#include "spirv_table.h"
#include "opsupport.h"

enum { RD_ARGMAX = RED__COUNT, RD_ARGMIN };

/* Work-split targets: enough (output, part) pairs to fill a large GPU several
 * times over, with chunks long enough that a partial costs little. */
#ifndef RD_TARGET_GROUPS /* overridable to tune the split on a device */
#define RD_TARGET_GROUPS 2048u
#endif
#define RD_GROUP_CHUNK_MIN 4096u
#define RD_TARGET_THREADS (RD_TARGET_GROUPS * 256u)
#define RD_THREAD_CHUNK_MIN 128u
/* A contiguous innermost run at least this long gets a team of threads per
 * output (a whole workgroup once each thread has 4 or more elements). */
#define RD_GROUP_RUN_MIN 32u
#define RD_TEAM_MIN 8u
/* Lavapipe ends an invocation's loops after 65,535 iterations in all (every
 * loop's back edges share one counter; see dot.c) and returns what it has,
 * silently. The targets above keep a walk to ~300 steps for any tensor within
 * maxStorageBufferRange, but they are tunable, so on a CPU device the plan is
 * checked against this budget (a quarter of the limit: the estimate's slack)
 * and longer walks get more parts. Other devices have no such limit. */
#define RD_CPU_LOOP_BUDGET 16384u

enum { RD_MODE_THREAD = 0, RD_MODE_GROUP = 1 };

typedef struct rd_push {
    RD_PUSH_FIELDS
} rd_push;

typedef struct rd_geom {
    uint32_t nout, nred;
    int nkeep, nredg;
    uint32_t kshape[3], kstride[3], rshape[3], rstride[3];
} rd_geom;

typedef struct rd_params {
    int code;      /* enum ref_redop, RD_ARGMAX or RD_ARGMIN */
    unsigned mask; /* reduced axes of the input */
    int axis;      /* argreduce: the normalized axis or VKT_ALL_AXES */
} rd_params;

static const int reduce_shaders[VKT_NUM_DTYPES] = {SPV_reduce_f32, SPV_reduce_f64, SPV_reduce_s32,
                                                   SPV_reduce_u8};
static const int bool_shaders[VKT_NUM_DTYPES] = {SPV_reduce_bool_f32, SPV_reduce_bool_f64,
                                                 SPV_reduce_bool_s32, SPV_reduce_bool_u8};
static const int arg_shaders[VKT_NUM_DTYPES] = {SPV_argreduce_f32, SPV_argreduce_f64,
                                                SPV_argreduce_s32, SPV_argreduce_u8};

static bool rd_is_arg(int code)
{
    return code == RD_ARGMAX || code == RD_ARGMIN;
}

/* Integer sums and products accumulate and return s32; all/any return u8. */
static vkt_dtype rd_out_dtype(int code, vkt_dtype in)
{
    if (rd_is_arg(code))
        return VKT_S32;
    if (code == RED_ALL || code == RED_ANY)
        return VKT_U8;
    if ((code == RED_SUM || code == RED_PRODUCT) && !op_is_float(in))
        return VKT_S32;
    return in;
}

static int rd_shader(int code, vkt_dtype in)
{
    if (rd_is_arg(code))
        return arg_shaders[in];
    if (code == RED_ALL || code == RED_ANY)
        return bool_shaders[in];
    if (in == VKT_U8 && (code == RED_SUM || code == RED_PRODUCT))
        return SPV_reduce_sum_u8;
    return reduce_shaders[in];
}

/* ---- geometry and work split --------------------------------------------- */

/* Merges adjacent axes of one kind (size-1 axes vanish), so the groups
 * alternate and rank 6 leaves at most three kept and three reduced. */
static void rd_geometry(const int64_t *shape, int rank, unsigned mask, rd_geom *g)
{
    memset(g, 0, sizeof *g);
    g->nout = 1;
    g->nred = 1;
    int64_t stride[VKT_MAX_RANK];
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        stride[d] = s;
        s *= shape[d];
    }
    int last = -1; /* kind of the previous group: 0 kept, 1 reduced */
    for (int d = 0; d < rank; d++) {
        int red = (mask >> d) & 1u;
        if (red)
            g->nred *= (uint32_t)shape[d];
        else
            g->nout *= (uint32_t)shape[d];
        if (shape[d] == 1)
            continue;
        uint32_t *gs = red ? g->rshape : g->kshape, *gt = red ? g->rstride : g->kstride;
        int *n = red ? &g->nredg : &g->nkeep;
        if (last == red) {
            gs[*n - 1] *= (uint32_t)shape[d];
            gt[*n - 1] = (uint32_t)stride[d];
        } else {
            gs[*n] = (uint32_t)shape[d];
            gt[*n] = (uint32_t)stride[d];
            ++*n;
        }
        last = red;
    }
    if (g->nredg == 0 || g->nred == 0) {
        /* Nothing to reduce (one element each) or an empty set (the identity). */
        g->nredg = 1;
        g->rshape[0] = 1;
        g->rstride[0] = 0;
    }
}

/* Cuts the reduced range into about nparts chunks (4-aligned for vec4 loads)
 * and sizes the team: it shrinks until each thread has about 4 elements. */
static void rd_split(const rd_geom *g, uint32_t mode, bool vec4, uint32_t nparts, uint32_t *team,
                     rd_push *pc)
{
    uint32_t chunk = g->nred ? g->nred : 1;
    if (nparts > 1) {
        chunk = (g->nred + nparts - 1) / nparts;
        if (vec4)
            chunk = (chunk + 3) & ~3u; /* every part starts 4-aligned */
        nparts = (g->nred + chunk - 1) / chunk;
    } else {
        nparts = 1;
    }
    pc->chunk = chunk;
    pc->nparts = nparts;
    *team = 256;
    while (mode == RD_MODE_GROUP && *team > RD_TEAM_MIN && *team * 4 > chunk)
        *team /= 2;
}

/* Loop iterations one invocation runs for a plan, counted as lavapipe counts
 * them (each loop entry costs one more than its trip count; red_next's carry
 * loop one per element when the reduced set has several groups), rounded up. */
static uint64_t rd_trips(const rd_geom *g, uint32_t mode, bool vec4, uint32_t team,
                         const rd_push *pc)
{
    uint64_t total = (uint64_t)pc->nout * pc->nparts,
             per_group = mode == RD_MODE_GROUP ? 256 / team : 256;
    uint64_t groups = (total + per_group - 1) / per_group;
    if (groups > 65535)
        groups = 65535;
    uint64_t passes = groups ? (total + groups * per_group - 1) / (groups * per_group) : 0, item;
    if (mode == RD_MODE_THREAD) {
        item = (uint64_t)pc->chunk * (g->nredg > 1 ? 2 : 1) + 2;
    } else {
        uint64_t steps = vec4 ? pc->chunk / 4 + 4 : pc->chunk, log2t = 0;
        for (uint32_t t = team; t > 1; t >>= 1)
            log2t++;
        item = (steps + team - 1) / team + 4 + log2t;
    }
    return passes * (item + 1);
}

/* Chooses the kernel shape for one dispatch and fills its push constants. */
static void rd_plan(const rd_geom *g, bool pairs_in, bool cpu, uint32_t *mode, uint32_t *team,
                    bool *vec4, rd_push *pc)
{
    memset(pc, 0, sizeof *pc);
    pc->nout = g->nout;
    pc->nred = g->nred;
    memcpy(pc->kshape, g->kshape, sizeof pc->kshape);
    memcpy(pc->kstride, g->kstride, sizeof pc->kstride);
    memcpy(pc->rshape, g->rshape, sizeof pc->rshape);
    memcpy(pc->rstride, g->rstride, sizeof pc->rstride);
    uint32_t run = g->rstride[g->nredg - 1] == 1 ? g->rshape[g->nredg - 1] : 0;
    uint32_t nparts = 1;
    if (run >= RD_GROUP_RUN_MIN) {
        /* Rows: a team of threads walks each contiguous reduced run. */
        *mode = RD_MODE_GROUP;
        *vec4 = g->nredg == 1 && !pairs_in && (g->nout == 1 || g->nred % 4 == 0);
        if (g->nred >= 2 * RD_GROUP_CHUNK_MIN && g->nout < RD_TARGET_GROUPS) {
            uint32_t want = (RD_TARGET_GROUPS + g->nout - 1) / g->nout,
                     most = g->nred / RD_GROUP_CHUNK_MIN;
            nparts = want < most ? want : most;
        }
    } else {
        /* Columns or short runs: a thread per output; neighbouring threads
         * read neighbouring elements whenever the innermost axis is kept. */
        *mode = RD_MODE_THREAD;
        *vec4 = false;
        if (g->nred >= 2 * RD_THREAD_CHUNK_MIN && g->nout < RD_TARGET_THREADS) {
            uint32_t want = (RD_TARGET_THREADS + g->nout - 1) / g->nout,
                     most = g->nred / RD_THREAD_CHUNK_MIN;
            nparts = want < most ? want : most;
        }
    }
    rd_split(g, *mode, *vec4, nparts, team, pc);
    /* Halving the chunks halves each item's walk; passes grow only once the
     * grid is full, where the walk is bounded by numel / 16.7M items anyway. */
    while (cpu && pc->chunk > 4 && rd_trips(g, *mode, *vec4, *team, pc) > RD_CPU_LOOP_BUDGET)
        rd_split(g, *mode, *vec4, pc->nparts * 2, team, pc);
}

/* ---- native -------------------------------------------------------------- */

static int rd_temp(vkt_ctx *ctx, vkt_dtype dt, uint32_t nout, uint32_t nparts, vkt_tensor **out)
{
    int64_t shape[2] = {nout, nparts};
    TRY(tn_new(ctx, dt, shape, 2, out));
    int s = tn_alloc_device(*out);
    if (s != VKT_OK) {
        vkt_tensor_free(*out);
        *out = NULL;
    }
    return s;
}

static int rd_dispatch(vkt_ctx *ctx, int shader, int code, uint32_t mode, uint32_t team,
                       const rd_geom *g, bool vec4, uint32_t pairs, const rd_push *pc,
                       tn_storage *const *bufs, int nbufs, const rt_epi *epi)
{
    /* an f32 reduction's pass may take fused programs in a graph */
    rt_form form = {RT_FORM_REDUCE, 0, 0, SPV_reduce_f32_pro};
    pl_dispatch d = {.shader = shader,
                     .nspec = 7,
                     .nbufs = nbufs,
                     .push = pc,
                     .push_size = sizeof *pc,
                     .epi = epi,
                     .form = shader == SPV_reduce_f32 ? &form : NULL};
    d.spec[0] = (uint32_t)(code == RD_ARGMAX ? 0 : code == RD_ARGMIN ? 1 : code);
    d.spec[1] = mode;
    d.spec[2] = (uint32_t)g->nkeep;
    d.spec[3] = (uint32_t)g->nredg;
    d.spec[4] = vec4;
    d.spec[5] = pairs;
    d.spec[6] = mode == RD_MODE_GROUP ? team : 256;
    for (int i = 0; i < nbufs; i++) {
        d.bufs[i] = bufs[i];
        d.writes[i] = false;
    }
    /* Outputs: binding 1 for reductions, 2 and 3 for argreduce. */
    if (nbufs == 2) {
        d.writes[1] = true;
    } else {
        d.writes[2] = true;
        d.writes[3] = (pairs & 2u) != 0;
    }
    uint64_t n = (uint64_t)pc->nout * pc->nparts;
    if (mode == RD_MODE_GROUP) {
        uint64_t teams = 256 / team, groups = (n + teams - 1) / teams;
        d.groups[0] = (uint32_t)(groups > 65535 ? 65535 : groups);
        d.groups[1] = d.groups[2] = 1;
    } else {
        pl_grid(n, 256, d.groups);
    }
    return pl_run(ctx, &d);
}

static int rd_native(exec_call *c)
{
    const rd_params *p = c->params;
    const vkt_tensor *x = c->in[0];
    vkt_tensor *out = c->out;
    vkt_ctx *ctx = out->ctx;
    if (out->numel == 0)
        return VKT_OK;
    bool arg = rd_is_arg(p->code), cpu = ctx->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    rd_geom g;
    rd_geometry(x->shape, x->rank, p->mask, &g);
    /* src: what this pass reads (values, and indices for argreduce partials). */
    vkt_tensor *src = NULL, *src_idx = NULL;
    vkt_dtype src_dt = x->dtype;
    tn_storage *src_st = x->st;
    int s = VKT_OK;
    for (int pass = 0; s == VKT_OK; pass++) {
        rd_push pc;
        uint32_t mode, team;
        bool vec4;
        rd_plan(&g, arg && pass > 0, cpu, &mode, &team, &vec4, &pc);
        bool last = pc.nparts == 1;
        vkt_tensor *dst = NULL, *dst_val = NULL;
        if (!last) {
            s = rd_temp(ctx, out->dtype, pc.nout, pc.nparts, &dst);
            if (s == VKT_OK && arg)
                s = rd_temp(ctx, src_dt, pc.nout, pc.nparts, &dst_val);
        }
        if (s == VKT_OK) {
            tn_storage *dst_st = last ? out->st : dst->st;
            int shader = rd_shader(p->code, src_dt);
            if (arg) {
                uint32_t pairs = (pass > 0 ? 1u : 0u) | (last ? 0u : 2u);
                /* Unused bindings get a harmless buffer the kernel never touches. */
                tn_storage *bufs[4] = {src_st, src_idx ? src_idx->st : src_st, dst_st,
                                       dst_val ? dst_val->st : dst_st};
                s = rd_dispatch(ctx, shader, p->code, mode, team, &g, vec4, pairs, &pc, bufs, 4,
                                NULL);
            } else {
                tn_storage *bufs[2] = {src_st, dst_st};
                /* the last pass of an f32 reduction stores each output once, at
                 * its index: a graph may fuse an elementwise program there */
                rt_epi epi = {SPV_reduce_f32_epi, 1, pc.nout};
                bool fusable = last && shader == SPV_reduce_f32;
                s = rd_dispatch(ctx, shader, p->code, mode, team, &g, vec4, 0, &pc, bufs, 2,
                                fusable ? &epi : NULL);
            }
        }
        vkt_tensor_free(src);
        vkt_tensor_free(src_idx);
        src = src_idx = NULL;
        if (s != VKT_OK || last) {
            vkt_tensor_free(dst);
            vkt_tensor_free(dst_val);
            break;
        }
        /* The partials [nout, nparts] become contiguous rows for the next pass. */
        if (arg) {
            src = dst_val;
            src_idx = dst;
        } else {
            src = dst;
            src_dt = out->dtype;
        }
        src_st = src->st;
        uint32_t nout = pc.nout, nparts = pc.nparts;
        memset(&g, 0, sizeof g);
        g.nout = nout;
        g.nred = nparts;
        g.nkeep = nout > 1;
        g.kshape[0] = nout;
        g.kstride[0] = nparts;
        g.nredg = 1;
        g.rshape[0] = nparts;
        g.rstride[0] = 1;
    }
    return s;
}

/* ---- host ------------------------------------------------------------------ */

static int rd_host(exec_call *c, const ref_view *in, ref_view *out)
{
    const rd_params *p = c->params;
    if (rd_is_arg(p->code))
        return ref_argreduce(p->code == RD_ARGMAX, &in[0], p->axis, out);
    /* The reference takes integer sums and products already widened to s32. */
    vkt_dtype acc = (p->code == RED_SUM || p->code == RED_PRODUCT) ? out->dtype : in[0].dtype;
    ref_view x;
    void *owned;
    TRY(op_host_convert(&in[0], acc, &x, &owned));
    int s = ref_reduce((enum ref_redop)p->code, &x, p->mask, out);
    free(owned);
    if (s == VKT_ENOMEM)
        return err_set(s, "vkt_%s: out of host memory", c->info->name);
    return s;
}

/* ---- public functions ------------------------------------------------------- */

static int rd_run(const op_info *info, const vkt_tensor *x, const rd_params *p, bool keep,
                  vkt_tensor **out)
{
    int64_t shape[VKT_MAX_RANK];
    int rank = 0;
    for (int d = 0; d < x->rank; d++) {
        if (!((p->mask >> d) & 1u))
            shape[rank++] = x->shape[d];
        else if (keep)
            shape[rank++] = 1;
    }
    exec_call c = {
        .info = info, .in = {x}, .nin = 1, .native = rd_native, .host = rd_host, .params = p};
    TRY(tn_new(x->ctx, rd_out_dtype(p->code, x->dtype), shape, rank, &c.out));
    return exec_run(&c, out);
}

static int rd_reduce(const op_info *info, const vkt_tensor *x, const int *axes, int naxes,
                     bool keep, vkt_tensor **out)
{
    err_clear();
    if (!out)
        return err_set(VKT_EINVAL, "vkt_%s: out is NULL", info->name);
    *out = NULL;
    TRY(tn_check_tensor(x, info->name, "x"));
    rd_params p = {info->code, 0, 0};
    TRY(op_axes_mask(info->name, axes, naxes, x->rank, &p.mask));
    return rd_run(info, x, &p, keep, out);
}

static int rd_argreduce(const op_info *info, const vkt_tensor *x, int axis, bool keep,
                        vkt_tensor **out)
{
    err_clear();
    if (!out)
        return err_set(VKT_EINVAL, "vkt_%s: out is NULL", info->name);
    *out = NULL;
    TRY(tn_check_tensor(x, info->name, "x"));
    rd_params p = {info->code, 0, VKT_ALL_AXES};
    if (axis == VKT_ALL_AXES) {
        p.mask = x->rank ? (1u << x->rank) - 1 : 0;
    } else {
        TRY(op_axis(info->name, axis, x->rank, &p.axis));
        p.mask = 1u << p.axis;
    }
    return rd_run(info, x, &p, keep, out);
}

enum {
    RDI_SUM,
    RDI_PRODUCT,
    RDI_MAX,
    RDI_MIN,
    RDI_ALL,
    RDI_ANY,
    RDI_ARGMAX,
    RDI_ARGMIN,
    RDI__COUNT
};
static const op_info rd_ops[RDI__COUNT] = {
    [RDI_SUM] = OP_ENTRY(sum, NULL, RED_SUM),
    [RDI_PRODUCT] = OP_ENTRY(product, NULL, RED_PRODUCT),
    [RDI_MAX] = OP_ENTRY(reduce_max, NULL, RED_MAX),
    [RDI_MIN] = OP_ENTRY(reduce_min, NULL, RED_MIN),
    [RDI_ALL] = OP_ENTRY(all, NULL, RED_ALL),
    [RDI_ANY] = OP_ENTRY(any, NULL, RED_ANY),
    [RDI_ARGMAX] = OP_ENTRY(argmax, NULL, RD_ARGMAX),
    [RDI_ARGMIN] = OP_ENTRY(argmin, NULL, RD_ARGMIN),
};
const op_table op_table_reduce = {rd_ops, RDI__COUNT};

VKT_API int vkt_sum(const vkt_tensor *x, const int *axes, int naxes, bool keep_axes,
                    vkt_tensor **out)
{
    return rd_reduce(&rd_ops[RDI_SUM], x, axes, naxes, keep_axes, out);
}

VKT_API int vkt_product(const vkt_tensor *x, const int *axes, int naxes, bool keep_axes,
                        vkt_tensor **out)
{
    return rd_reduce(&rd_ops[RDI_PRODUCT], x, axes, naxes, keep_axes, out);
}

VKT_API int vkt_reduce_max(const vkt_tensor *x, const int *axes, int naxes, bool keep_axes,
                           vkt_tensor **out)
{
    return rd_reduce(&rd_ops[RDI_MAX], x, axes, naxes, keep_axes, out);
}

VKT_API int vkt_reduce_min(const vkt_tensor *x, const int *axes, int naxes, bool keep_axes,
                           vkt_tensor **out)
{
    return rd_reduce(&rd_ops[RDI_MIN], x, axes, naxes, keep_axes, out);
}

VKT_API int vkt_all(const vkt_tensor *x, const int *axes, int naxes, bool keep_axes,
                    vkt_tensor **out)
{
    return rd_reduce(&rd_ops[RDI_ALL], x, axes, naxes, keep_axes, out);
}

VKT_API int vkt_any(const vkt_tensor *x, const int *axes, int naxes, bool keep_axes,
                    vkt_tensor **out)
{
    return rd_reduce(&rd_ops[RDI_ANY], x, axes, naxes, keep_axes, out);
}

VKT_API int vkt_argmax(const vkt_tensor *x, int axis, bool keep_axis, vkt_tensor **out)
{
    return rd_argreduce(&rd_ops[RDI_ARGMAX], x, axis, keep_axis, out);
}

VKT_API int vkt_argmin(const vkt_tensor *x, int axis, bool keep_axis, vkt_tensor **out)
{
    return rd_argreduce(&rd_ops[RDI_ARGMIN], x, axis, keep_axis, out);
}
