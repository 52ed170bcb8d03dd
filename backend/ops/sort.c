/* sort.c — the sort family: vkt_sort and vkt_argsort, stable, along any axis.
 *
 * Parts: shaders/sort/ (block.comp, merge.comp; order.glsl); host reference
 * backend/ref/sort.c; tests tests/vkt/test_sort.c and tests/ref/test_sort.c.
 *
 * Natively in two steps: a bitonic sort in shared memory of blocks of up to
 * 2,048 elements of each row (several short rows share a workgroup), ordering
 * (key, index) pairs so that equal keys keep their order; then, for longer
 * rows, merge passes that double the sorted runs, each element placing itself
 * by a binary search in the neighbouring run. The last step writes the result:
 * the indices, or the values copied bit for bit through them. Rows are read in
 * place through the axis's stride, so every axis runs without a transpose.
 *
 * Lavapipe ends an invocation's loops after 65,535 iterations in all; no row
 * length comes near it: a block pass walks ~440 loop steps per 2,048-slot
 * group (one group per workgroup below 65,535 of them), a merge pass one
 * binary search (at most 32 steps) per element, and rows of any length take
 * more dispatches (one per doubling), not longer loops. */
#include <stdlib.h>

#include "spirv_table.h"
#include "opsupport.h"

#define SORT_SLOTS 2048u

typedef struct sort_params {
    int axis;
    bool descending, arg;
} sort_params;

typedef struct sort_push {
    SORT_PUSH_FIELDS
} sort_push;

static const int block_shaders[VKT_NUM_DTYPES] = {SPV_sort_block_f32, SPV_sort_block_f64,
                                                  SPV_sort_block_s32, SPV_sort_block_u8};
static const int merge_shaders[VKT_NUM_DTYPES] = {SPV_sort_merge_f32, SPV_sort_merge_f64,
                                                  SPV_sort_merge_s32, SPV_sort_merge_u8};

/* Rows (outer x inner), their length n and the stride between their elements. */
static void sort_geometry(const vkt_tensor *x, int axis, uint64_t *rows, uint64_t *n,
                          uint64_t *inner)
{
    uint64_t outer = 1;
    *inner = 1;
    *n = x->rank > 0 ? (uint64_t)x->shape[axis] : 1;
    for (int d = 0; d < axis; d++)
        outer *= (uint64_t)x->shape[d];
    for (int d = axis + 1; d < x->rank; d++)
        *inner *= (uint64_t)x->shape[d];
    *rows = outer * *inner;
}

static uint32_t sort_block_size(uint64_t n)
{
    uint32_t b = 1;
    while (b < n && b < SORT_SLOTS)
        b <<= 1;
    return b;
}

static int sort_scratch(const vkt_tensor *x, uint64_t count, vkt_tensor **out)
{
    int64_t shape[1] = {(int64_t)count};
    TRY(tn_new(x->ctx, VKT_S32, shape, 1, out));
    int s = tn_alloc_device(*out);
    if (s != VKT_OK) {
        vkt_tensor_free(*out);
        *out = NULL;
    }
    return s;
}

static int sort_native(exec_call *c)
{
    const sort_params *p = c->params;
    const vkt_tensor *x = c->in[0];
    vkt_ctx *ctx = x->ctx;
    if (x->numel == 0)
        return VKT_OK;
    uint64_t rows, n, inner;
    sort_geometry(x, p->axis, &rows, &n, &inner);
    uint32_t blk = sort_block_size(n);
    uint64_t nb = (n + blk - 1) / blk;
    sort_push pc = {.rows = (uint32_t)rows,
                    .n = (uint32_t)n,
                    .inner = (uint32_t)inner,
                    .blk = blk,
                    .nb = (uint32_t)nb,
                    .ngroups = (uint32_t)((rows * nb * blk + SORT_SLOTS - 1) / SORT_SLOTS),
                    .desc = p->descending,
                    .arg = p->arg,
                    .final_ = nb == 1};
    vkt_tensor *scratch[2] = {NULL, NULL};
    int s = VKT_OK;
    if (nb > 1) {
        s = sort_scratch(x, rows * n, &scratch[0]);
        if (s == VKT_OK)
            s = sort_scratch(x, rows * n, &scratch[1]);
    }
    if (s == VKT_OK) {
        tn_storage *mid = nb > 1 ? scratch[0]->st : c->out->st;
        pl_dispatch d = {.shader = block_shaders[x->dtype],
                         .nbufs = 3,
                         .bufs = {x->st, mid, c->out->st},
                         .writes = {false, nb > 1, nb == 1},
                         .push = &pc,
                         .push_size = sizeof pc,
                         .groups = {pc.ngroups > 65535 ? 65535 : pc.ngroups, 1, 1}};
        s = pl_run(ctx, &d);
    }
    int cur = 0;
    for (uint64_t w = blk; s == VKT_OK && w < n; w *= 2) {
        pc.w = (uint32_t)w;
        pc.final_ = 2 * w >= n;
        tn_storage *next = pc.final_ ? c->out->st : scratch[1 - cur]->st;
        pl_dispatch d = {.shader = merge_shaders[x->dtype],
                         .nbufs = 4,
                         .bufs = {x->st, scratch[cur]->st, next, c->out->st},
                         .writes = {false, false, !pc.final_, pc.final_ != 0},
                         .push = &pc,
                         .push_size = sizeof pc};
        pl_grid(rows * n, 256, d.groups);
        s = pl_run(ctx, &d);
        cur = 1 - cur;
    }
    vkt_tensor_free(scratch[0]);
    vkt_tensor_free(scratch[1]);
    return s;
}

static int sort_host(exec_call *c, const ref_view *in, ref_view *out)
{
    const sort_params *p = c->params;
    return ref_sort(&in[0], p->axis, p->descending, p->arg, out);
}

static const op_info sort_ops[] = {OP_ENTRY(sort, NULL, 0), OP_ENTRY(argsort, NULL, 1)};
const op_table op_table_sort = {sort_ops, sizeof sort_ops / sizeof sort_ops[0]};

static int run_sort(const op_info *info, const vkt_tensor *x, int axis, bool descending,
                    vkt_tensor **out)
{
    err_clear();
    if (!out)
        return err_set(VKT_EINVAL, "vkt_%s: out is NULL", info->name);
    *out = NULL;
    TRY(tn_check_tensor(x, info->name, "x"));
    sort_params p = {.descending = descending, .arg = info->code == 1};
    /* A scalar is a row of one: axis 0 (or -1) is accepted for it. */
    TRY(op_axis(info->name, axis, x->rank > 0 ? x->rank : 1, &p.axis));
    exec_call c = {
        .info = info, .in = {x}, .nin = 1, .native = sort_native, .host = sort_host, .params = &p};
    uint64_t rows, n, inner;
    sort_geometry(x, p.axis, &rows, &n, &inner);
    uint64_t blk = sort_block_size(n);
    if (rows * ((n + blk - 1) / blk) * blk + SORT_SLOTS > UINT32_MAX)
        c.gate = "rows padded to sort blocks exceed 2^32 slots (32-bit shader indexing)";
    /* Rows longer than one block merge through two s32 index buffers of the whole
     * tensor, which must bind like any storage buffer. */
    else if (n > blk && rows * n * sizeof(int32_t) > x->ctx->props.limits.maxStorageBufferRange)
        c.gate = "merge scratch (4 bytes an element) exceeds maxStorageBufferRange";
    TRY(tn_new(x->ctx, p.arg ? VKT_S32 : x->dtype, x->shape, x->rank, &c.out));
    return exec_run(&c, out);
}

VKT_API int vkt_sort(const vkt_tensor *x, int axis, bool descending, vkt_tensor **out)
{
    return run_sort(&sort_ops[0], x, axis, descending, out);
}

VKT_API int vkt_argsort(const vkt_tensor *x, int axis, bool descending, vkt_tensor **out)
{
    return run_sort(&sort_ops[1], x, axis, descending, out);
}
