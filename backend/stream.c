/* stream.c — the command stream: ops record dispatches and transfers into a
 * target, the context's eager command buffer (submitted at sync points: a read
 * to the host, a fallback, vkt_sync, or every RT_BATCH_DISPATCHES dispatches)
 * or an open graph's (replayed by launches), with barriers only where a
 * command touches what an earlier unsynced one wrote, or writes what it read.
 * Frees made while work is recorded wait for its submission (memory.c), so a
 * completed submission is also where memory comes back, and allocation's retry
 * under memory pressure lives here. So do the profile's per-dispatch
 * timestamps, read when a buffer completes. */
#include <stdlib.h>
#include <string.h>

#include "core.h"

/* Submitting every few hundred dispatches bounds the memory a long chain of
 * ops holds in deferred frees, without paying a submission per op. */
#define RT_BATCH_DISPATCHES 512

/* Dispatches the eager buffer's profile pool can time: the batch threshold
 * bounds a buffer's dispatches. A graph's pool is sized the same, times
 * RT_GRAPH_PROF_BATCHES. */
#define RT_PROF_EAGER RT_BATCH_DISPATCHES
#define RT_GRAPH_PROF_BATCHES 8

static bool has_timestamps(const vkt_ctx *ctx)
{
    uint32_t qn = 0;
    VkQueueFamilyProperties qf[16];
    vkGetPhysicalDeviceQueueFamilyProperties(ctx->phys, &qn, NULL);
    qn = qn > 16 ? 16 : qn;
    vkGetPhysicalDeviceQueueFamilyProperties(ctx->phys, &qn, qf);
    return qf[ctx->queue_family].timestampValidBits > 0 && ctx->props.limits.timestampPeriod > 0;
}

static int query_pool(vkt_ctx *ctx, uint32_t n, VkQueryPool *out)
{
    VkQueryPoolCreateInfo qp = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                .queryCount = n};
    VK_TRY(vkCreateQueryPool(ctx->device, &qp, NULL, out));
    return VKT_OK;
}

/* The profile pool of a target, made when profiling first needs it. */
static int prof_pool(vkt_ctx *ctx, rt_target *t, uint32_t cap)
{
    if (t->prof || !ctx->eager.timestamps)
        return VKT_OK;
    t->tags = calloc(cap, sizeof *t->tags);
    if (!t->tags)
        return err_set(VKT_ENOMEM, "out of host memory for the profile");
    int s = query_pool(ctx, 2 * cap, &t->prof);
    if (s != VKT_OK) {
        free(t->tags);
        t->tags = NULL;
        return s;
    }
    t->prof_cap = cap;
    return VKT_OK;
}

int rt_target_init(vkt_ctx *ctx, rt_target *t, bool reusable)
{
    memset(t, 0, sizeof *t);
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = ctx->pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
    VK_TRY(vkAllocateCommandBuffers(ctx->device, &cai, &t->cmd));
    if (has_timestamps(ctx))
        TRY(query_pool(ctx, 2, &t->timestamps));
    if (ctx->profiling && reusable)
        TRY(prof_pool(ctx, t, RT_PROF_EAGER * RT_GRAPH_PROF_BATCHES));
    return VKT_OK;
}

void rt_target_destroy(vkt_ctx *ctx, rt_target *t)
{
    if (t->timestamps)
        vkDestroyQueryPool(ctx->device, t->timestamps, NULL);
    if (t->prof)
        vkDestroyQueryPool(ctx->device, t->prof, NULL);
    if (t->cmd)
        vkFreeCommandBuffers(ctx->device, ctx->pool, 1, &t->cmd);
    free(t->tags);
    memset(t, 0, sizeof *t);
}

int rt_init(vkt_ctx *ctx)
{
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                   .queueFamilyIndex = ctx->queue_family};
    VK_TRY(vkCreateCommandPool(ctx->device, &pci, NULL, &ctx->pool));
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VK_TRY(vkCreateFence(ctx->device, &fci, NULL, &ctx->fence));
    TRY(rt_target_init(ctx, &ctx->eager, false));
    ctx->target = &ctx->eager;
    ctx->last_gpu_ns = -1;
    return VKT_OK;
}

void rt_destroy(vkt_ctx *ctx)
{
    if (ctx->recording)
        rt_flush(ctx);
    vkDeviceWaitIdle(ctx->device);
    if (ctx->pool)
        rt_target_destroy(ctx, &ctx->eager);
    if (ctx->fence)
        vkDestroyFence(ctx->device, ctx->fence, NULL);
    if (ctx->pool)
        vkDestroyCommandPool(ctx->device, ctx->pool, NULL);
    free(ctx->prof);
}

/* Starts a target's buffer: its queries reset and the start stamped. */
static void target_start(rt_target *t)
{
    if (t->timestamps) {
        vkCmdResetQueryPool(t->cmd, t->timestamps, 0, 2);
        vkCmdWriteTimestamp(t->cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, t->timestamps, 0);
    }
    if (t->prof)
        vkCmdResetQueryPool(t->cmd, t->prof, 0, 2 * t->prof_cap);
    t->nprof = 0;
}

static void target_finish(rt_target *t)
{
    if (t->timestamps)
        vkCmdWriteTimestamp(t->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, t->timestamps, 1);
}

/* After a target's buffer completed: its GPU time, and its dispatches' times
 * appended to the profile. */
static void target_collect(vkt_ctx *ctx, const rt_target *t)
{
    uint64_t ts[2];
    double period = ctx->props.limits.timestampPeriod;
    if (t->timestamps && vkGetQueryPoolResults(ctx->device, t->timestamps, 0, 2, sizeof ts, ts, sizeof ts[0],
                                               VK_QUERY_RESULT_64_BIT) == VK_SUCCESS)
        ctx->last_gpu_ns = (double)(ts[1] - ts[0]) * period;
    /* A graph recorded while profiling keeps its timestamps: they are only
     * collected while profiling is on. */
    if (!t->nprof || !ctx->profiling ||
        !rt_grow((void **)&ctx->prof, &ctx->cap_prof, ctx->nprof + t->nprof, sizeof *ctx->prof))
        return;
    uint64_t *v = malloc(2 * t->nprof * sizeof *v);
    if (v && vkGetQueryPoolResults(ctx->device, t->prof, 0, 2 * t->nprof, 2 * t->nprof * sizeof *v, v, sizeof *v,
                                   VK_QUERY_RESULT_64_BIT) == VK_SUCCESS)
        for (uint32_t i = 0; i < t->nprof; i++)
            ctx->prof[ctx->nprof++] = (vkt_profile_entry){t->tags[i].op, t->tags[i].kernel,
                                                          (double)(v[2 * i + 1] - v[2 * i]) * period};
    free(v);
}

int rt_cmd(vkt_ctx *ctx, VkCommandBuffer *out)
{
    if (ctx->device_lost)
        return err_set(VKT_EDEVICE, "the Vulkan device was lost earlier; create a new context");
    if (!ctx->rec && !ctx->recording) {
        if (ctx->profiling)
            TRY(prof_pool(ctx, &ctx->eager, RT_PROF_EAGER));
        VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
        VK_TRY(vkBeginCommandBuffer(ctx->eager.cmd, &bi));
        target_start(&ctx->eager);
        ctx->recording = true;
        ctx->pending = 0;
        ctx->barrier_seq = ctx->seq;
    }
    *out = ctx->target->cmd;
    return VKT_OK;
}

/* Submits the eager buffer (when begun) and then `graph` (when not NULL) in
 * one submission, waits, and collects both. */
static int submit(vkt_ctx *ctx, rt_target *graph)
{
    VkCommandBuffer cmds[2];
    uint32_t n = 0;
    VkResult r = VK_SUCCESS;
    bool eager = ctx->recording;
    if (eager) {
        ctx->recording = false;
        target_finish(&ctx->eager);
        r = vkEndCommandBuffer(ctx->eager.cmd);
        cmds[n++] = ctx->eager.cmd;
    }
    if (graph)
        cmds[n++] = graph->cmd;
    if (r == VK_SUCCESS && n > 0) {
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = n, .pCommandBuffers = cmds};
        r = vkQueueSubmit(ctx->queue, 1, &si, ctx->fence);
        if (r == VK_SUCCESS) {
            r = vkWaitForFences(ctx->device, 1, &ctx->fence, VK_TRUE, UINT64_MAX);
            vkResetFences(ctx->device, 1, &ctx->fence);
        }
    }
    if (eager)
        vkResetCommandBuffer(ctx->eager.cmd, 0);
    ctx->barrier_seq = ctx->submit_seq = ctx->seq;
    ctx->pending = 0;
    if (r == VK_ERROR_DEVICE_LOST)
        ctx->device_lost = true;
    if (r != VK_SUCCESS)
        return err_vk(r, "submitting recorded work");
    if (eager)
        target_collect(ctx, &ctx->eager);
    if (graph)
        target_collect(ctx, graph);
    mem_collect(ctx);
    return VKT_OK;
}

/* A call refused during a recording fails the recording too: the graph would lack what the
 * caller asked for, and vkt_graph_end reports the first such refusal. */
static int refused(vkt_ctx *ctx, int s)
{
    if (ctx->rec->status == VKT_OK)
        ctx->rec->status = s;
    return s;
}

int rt_flush(vkt_ctx *ctx)
{
    if (ctx->rec)
        return refused(ctx, err_set(VKT_EGRAPH, "a sync point (a read to the host, vkt_sync, a fallback) while "
                                                "recording a graph; end the recording first"));
    return submit(ctx, NULL);
}

int rt_not_recording(vkt_ctx *ctx, const char *what)
{
    if (ctx->rec)
        return refused(ctx, err_set(VKT_EGRAPH, "%s: not allowed while recording a graph (it would need the "
                                                "host at recording time, not at each launch)", what));
    return VKT_OK;
}

/* Registers a storage with the open recording, which holds it for the graph. */
static void logged(vkt_ctx *ctx, tn_storage *st)
{
    rt_log *log = ctx->rec;
    if (!log || st->rec_gen == ctx->rec_gen)
        return;
    if (!rt_grow((void **)&log->storages, &log->cap_st, log->nst + 1, sizeof *log->storages)) {
        if (log->status == VKT_OK)
            log->status = err_set(VKT_ENOMEM, "out of host memory recording a graph");
        return;
    }
    st->rec_gen = ctx->rec_gen;
    st->holds++;
    log->storages[log->nst++] = st;
}

/* One global barrier orders every earlier command (shader or transfer) before
 * every later one; finer per-buffer barriers buy nothing on compute. */
static void barrier(vkt_ctx *ctx, VkCommandBuffer cmd)
{
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                           VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0,
                         NULL, 0, NULL);
    ctx->barrier_seq = ctx->seq;
}

void rt_before_read(vkt_ctx *ctx, VkCommandBuffer cmd, tn_storage *st)
{
    logged(ctx, st);
    if (st->write_seq > ctx->barrier_seq)
        barrier(ctx, cmd);
    st->read_seq = ctx->seq + 1;
}

void rt_before_write(vkt_ctx *ctx, VkCommandBuffer cmd, tn_storage *st)
{
    logged(ctx, st);
    if (st->write_seq > ctx->barrier_seq || st->read_seq > ctx->barrier_seq)
        barrier(ctx, cmd);
}

void rt_after_write(vkt_ctx *ctx, tn_storage *st)
{
    logged(ctx, st);
    st->write_seq = ctx->seq;
}

void rt_dispatch_begin(vkt_ctx *ctx, VkCommandBuffer cmd)
{
    rt_target *t = ctx->target;
    if (!ctx->profiling || !t->prof || t->nprof >= t->prof_cap)
        return;
    barrier(ctx, cmd);
    vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, t->prof, 2 * t->nprof);
}

void rt_dispatch_end(vkt_ctx *ctx, VkCommandBuffer cmd, const char *kernel)
{
    rt_target *t = ctx->target;
    if (!ctx->profiling || !t->prof || t->nprof >= t->prof_cap)
        return;
    vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, t->prof, 2 * t->nprof + 1);
    t->tags[t->nprof++] = (rt_tag){ctx->cur_op, kernel};
}

int rt_recorded(vkt_ctx *ctx)
{
    if (ctx->rec) {
        ctx->rec->dispatches++;
        return VKT_OK;
    }
    if (++ctx->pending >= RT_BATCH_DISPATCHES)
        return rt_flush(ctx);
    return VKT_OK;
}

int rt_alloc(vkt_ctx *ctx, VkDeviceSize size, bool staging, mem_range *out)
{
    if (mem_alloc(ctx, size, staging, out) == VKT_OK)
        return VKT_OK;
    /* Deferred frees and spare blocks may hold the memory this needs (a
     * recording cannot submit, but can still return spares). */
    if (!ctx->rec)
        TRY(rt_flush(ctx));
    mem_trim(ctx);
    return mem_alloc(ctx, size, staging, out);
}

/* ---- graph recordings ------------------------------------------------------- */

int rt_record_begin(vkt_ctx *ctx, rt_target *t, rt_log *log)
{
    if (ctx->rec)
        return err_set(VKT_EGRAPH, "vkt_graph_begin: a graph is already being recorded on this context");
    TRY(rt_flush(ctx));
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VK_TRY(vkBeginCommandBuffer(t->cmd, &bi));
    target_start(t);
    /* Orders the graph after whatever ran before it in the same submission,
     * and each launch after the last. */
    barrier(ctx, t->cmd);
    memset(log, 0, sizeof *log);
    ctx->rec = log;
    ctx->rec_gen++;
    ctx->target = t;
    return VKT_OK;
}

int rt_record_end(vkt_ctx *ctx)
{
    rt_target *t = ctx->target;
    ctx->rec = NULL;
    ctx->target = &ctx->eager;
    ctx->barrier_seq = ctx->seq;
    target_finish(t);
    VK_TRY(vkEndCommandBuffer(t->cmd));
    return VKT_OK;
}

void rt_log_op(vkt_ctx *ctx, op_counters *counters)
{
    rt_log *log = ctx->rec;
    if (!rt_grow((void **)&log->ops, &log->cap_ops, log->nops + 1, sizeof *log->ops)) {
        if (log->status == VKT_OK)
            log->status = err_set(VKT_ENOMEM, "out of host memory recording a graph");
        return;
    }
    log->ops[log->nops++] = counters;
}

int rt_launch(vkt_ctx *ctx, rt_target *t, const rt_log *log)
{
    if (ctx->rec)
        return err_set(VKT_EGRAPH, "vkt_graph_launch: a graph is being recorded on this context; end it first");
    if (ctx->device_lost)
        return err_set(VKT_EDEVICE, "the Vulkan device was lost earlier; create a new context");
    TRY(submit(ctx, t));
    for (size_t i = 0; i < log->nops; i++)
        atomic_fetch_add(&log->ops[i]->native, 1);
    return VKT_OK;
}

VKT_API double vkt_ctx_last_gpu_ns(const vkt_ctx *ctx)
{
    return ctx ? ctx->last_gpu_ns : -1;
}

VKT_API int vkt_sync(vkt_ctx *ctx)
{
    err_clear();
    if (!ctx)
        return err_set(VKT_EINVAL, "vkt_sync: ctx is NULL");
    return rt_flush(ctx);
}

VKT_API int vkt_ctx_set_profiling(vkt_ctx *ctx, bool on)
{
    err_clear();
    if (!ctx)
        return err_set(VKT_EINVAL, "vkt_ctx_set_profiling: ctx is NULL");
    /* A buffer begun without the profile pool cannot start timing midway. */
    if (on && !ctx->profiling && !ctx->rec)
        TRY(rt_flush(ctx));
    ctx->profiling = on;
    return VKT_OK;
}

VKT_API size_t vkt_profile_read(vkt_ctx *ctx, vkt_profile_entry *entries, size_t cap)
{
    if (!ctx)
        return 0;
    size_t n = ctx->nprof, k = n < cap ? n : cap;
    if (!entries || k == 0)
        return n;
    memcpy(entries, ctx->prof, k * sizeof *entries);
    memmove(ctx->prof, ctx->prof + k, (n - k) * sizeof *ctx->prof);
    ctx->nprof = n - k;
    return n;
}
