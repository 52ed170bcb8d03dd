/* graph.c — recorded steps: the ops called between vkt_graph_begin and
 * vkt_graph_end go into a command buffer of the graph's own, replayed by each
 * launch in one submission (stream.c records and submits, fuse.c fuses the
 * elementwise chains when the recording ends; this file owns the graph's
 * life).
 *
 * The graph holds every storage its recorded work uses (tn_storage.holds), so
 * their memory outlives the tensors freed during the recording (the step's
 * intermediates) and the ranges freed then (staging) stay with it too. The
 * storages still owned by tensors when the recording ends are the bound ones:
 * a launch after one of them was freed is an error, not a write into memory
 * that may have been handed out again. */
#include <stdlib.h>
#include <string.h>

#include "core.h"

struct vkt_graph {
    vkt_ctx *ctx;
    rt_target target;
    rt_log log;
    bool *bound; /* per log.storages: owned by a tensor when the recording ended */
};

/* The recording under way on each context, until vkt_graph_end. */
static vkt_graph *graph_of(const vkt_ctx *ctx)
{
    return ctx->rec ? (vkt_graph *)((char *)ctx->rec - offsetof(vkt_graph, log)) : NULL;
}

static void release(vkt_graph *g)
{
    vkt_ctx *ctx = g->ctx;
    for (size_t i = 0; i < g->log.nst; i++)
        tn_unhold(ctx, g->log.storages[i]);
    for (size_t i = 0; i < g->log.nheld; i++)
        mem_free(ctx, &g->log.held[i]);
    rt_target_destroy(ctx, &g->target);
    free(g->log.storages);
    free(g->log.ops);
    free(g->log.held);
    free(g->bound);
    free(g);
}

VKT_API int vkt_graph_begin(vkt_ctx *ctx)
{
    err_clear();
    if (!ctx)
        return err_set(VKT_EINVAL, "vkt_graph_begin: ctx is NULL");
    if (ctx->rec)
        return err_set(VKT_EGRAPH,
                       "vkt_graph_begin: a graph is already being recorded on this context");
    vkt_graph *g = calloc(1, sizeof *g);
    if (!g)
        return err_set(VKT_ENOMEM, "vkt_graph_begin: out of host memory");
    g->ctx = ctx;
    int s = rt_target_init(ctx, &g->target, true);
    if (s == VKT_OK)
        s = rt_record_begin(ctx, &g->target, &g->log);
    if (s != VKT_OK)
        release(g);
    return s;
}

VKT_API int vkt_graph_end(vkt_ctx *ctx, vkt_graph **out)
{
    err_clear();
    if (!ctx || !out)
        return err_set(VKT_EINVAL, "vkt_graph_end: ctx or out is NULL");
    *out = NULL;
    vkt_graph *g = graph_of(ctx);
    if (!g)
        return err_set(VKT_EGRAPH, "vkt_graph_end: no graph is being recorded on this context");
    int s = g->log.status == VKT_OK ? fu_graph(ctx, &g->log) : VKT_OK;
    int e = rt_record_end(ctx);
    if (s == VKT_OK)
        s = e;
    if (s == VKT_OK && g->log.status != VKT_OK)
        s = err_set(g->log.status,
                    "vkt_graph_end: a call failed during the recording (%s), so the graph would "
                    "lack its work",
                    vkt_status_name(g->log.status));
    if (s == VKT_OK) {
        g->bound = calloc(g->log.nst ? g->log.nst : 1, sizeof *g->bound);
        if (!g->bound)
            s = err_set(VKT_ENOMEM, "vkt_graph_end: out of host memory");
    }
    if (s != VKT_OK) {
        release(g);
        return s;
    }
    for (size_t i = 0; i < g->log.nst; i++)
        g->bound[i] = !g->log.storages[i]->orphan;
    *out = g;
    return VKT_OK;
}

VKT_API int vkt_graph_launch(vkt_graph *g)
{
    err_clear();
    if (!g)
        return err_set(VKT_EINVAL, "vkt_graph_launch: graph is NULL");
    for (size_t i = 0; i < g->log.nst; i++)
        if (g->bound[i] && g->log.storages[i]->orphan)
            return err_set(VKT_EGRAPH,
                           "vkt_graph_launch: a tensor bound to the graph (%zu bytes) was freed; "
                           "keep the graph's tensors until the graph is freed",
                           g->log.storages[i]->nbytes);
    return rt_launch(g->ctx, &g->target, &g->log);
}

VKT_API size_t vkt_graph_dispatches(const vkt_graph *g)
{
    return g ? g->log.dispatches : 0;
}

VKT_API size_t vkt_graph_levels(const vkt_graph *g)
{
    return g ? g->log.levels : 0;
}

VKT_API void vkt_graph_free(vkt_graph *g)
{
    if (g)
        release(g);
}
