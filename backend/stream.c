/* stream.c — the command stream: ops record dispatches and transfers into the
 * context's eager command buffer (submitted at sync points: a read to the
 * host, a fallback, vkt_sync, or every RT_BATCH_DISPATCHES dispatches), with
 * barriers only where a command touches what an earlier unsynced one wrote,
 * or writes what it read; or into an open graph, which keeps its commands
 * until the recording ends and then emits them in dependency levels: every
 * command as early as what it reads and writes allows, one barrier between
 * levels, so independent work shares a level and runs concurrently.
 * Frees made while work is recorded wait for its submission (memory.c), so a
 * completed submission is also where memory comes back, and allocation's retry
 * under memory pressure lives here. So do the profile's per-dispatch
 * timestamps, read when a buffer completes. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core.h"

/* Submitting every few hundred dispatches bounds the memory a long chain of
 * ops holds in deferred frees, without paying a submission per op. */
#define RT_BATCH_DISPATCHES 512

/* Dispatches the eager buffer's profile pool can time: the batch threshold
 * bounds a buffer's dispatches. A graph's pool is sized the same, times
 * RT_GRAPH_PROF_BATCHES. */
#define RT_PROF_EAGER RT_BATCH_DISPATCHES
#define RT_GRAPH_PROF_BATCHES 8

/* How long a sync point polls a GPU before it blocks (see wait). */
#define RT_SPIN_NS 2000000u

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
    if (t->timestamps && vkGetQueryPoolResults(ctx->device, t->timestamps, 0, 2, sizeof ts, ts,
                                               sizeof ts[0], VK_QUERY_RESULT_64_BIT) == VK_SUCCESS)
        ctx->last_gpu_ns = (double)(ts[1] - ts[0]) * period;
    /* A graph recorded while profiling keeps its timestamps: they are only
     * collected while profiling is on. */
    if (!t->nprof || !ctx->profiling ||
        !rt_grow((void **)&ctx->prof, &ctx->cap_prof, ctx->nprof + t->nprof, sizeof *ctx->prof))
        return;
    uint64_t *v = malloc(2 * t->nprof * sizeof *v);
    if (v && vkGetQueryPoolResults(ctx->device, t->prof, 0, 2 * t->nprof, 2 * t->nprof * sizeof *v,
                                   v, sizeof *v, VK_QUERY_RESULT_64_BIT) == VK_SUCCESS)
        for (uint32_t i = 0; i < t->nprof; i++)
            ctx->prof[ctx->nprof++] = (vkt_profile_entry){
                t->tags[i].op, t->tags[i].kernel, (double)(v[2 * i + 1] - v[2 * i]) * period};
    free(v);
}

/* The eager buffer, begun on first use. */
static int eager_cmd(vkt_ctx *ctx, VkCommandBuffer *out)
{
    if (ctx->device_lost)
        return err_set(VKT_EDEVICE, "the Vulkan device was lost earlier; create a new context");
    if (!ctx->recording) {
        if (ctx->profiling)
            TRY(prof_pool(ctx, &ctx->eager, RT_PROF_EAGER));
        VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
        VK_TRY(vkBeginCommandBuffer(ctx->eager.cmd, &bi));
        target_start(&ctx->eager);
        ctx->recording = true;
        ctx->pending = 0;
        ctx->barrier_seq = ctx->seq;
        ctx->bound = VK_NULL_HANDLE;
    }
    *out = ctx->eager.cmd;
    return VKT_OK;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Waits for the submission's fence. A GPU's work is polled for up to
 * RT_SPIN_NS first: a blocking wait on an H200 wakes 25 to 100 us after the
 * work ends (0.20 against 0.085 ms of host time per recorded LeNet step), as
 * long as a small step's GPU time, and a recorded step syncs every launch. A
 * CPU device (lavapipe) runs the work on the host's cores, so it blocks. */
static VkResult wait(vkt_ctx *ctx)
{
    if (ctx->props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU) {
        uint64_t until = now_ns() + RT_SPIN_NS;
        VkResult r;
        while ((r = vkGetFenceStatus(ctx->device, ctx->fence)) == VK_NOT_READY && now_ns() < until)
            ;
        if (r != VK_NOT_READY)
            return r;
    }
    return vkWaitForFences(ctx->device, 1, &ctx->fence, VK_TRUE, UINT64_MAX);
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
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .commandBufferCount = n,
                           .pCommandBuffers = cmds};
        r = vkQueueSubmit(ctx->queue, 1, &si, ctx->fence);
        if (r == VK_SUCCESS) {
            r = wait(ctx);
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
        return refused(ctx, err_set(VKT_EGRAPH,
                                    "a sync point (a read to the host, vkt_sync, a fallback) while "
                                    "recording a graph; end the recording first"));
    return submit(ctx, NULL);
}

int rt_not_recording(vkt_ctx *ctx, const char *what)
{
    if (ctx->rec)
        return refused(ctx, err_set(VKT_EGRAPH,
                                    "%s: not allowed while recording a graph (it would need the "
                                    "host at recording time, not at each launch)",
                                    what));
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
    VkMemoryBarrier mb = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
        .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                         VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                         1, &mb, 0, NULL, 0, NULL);
    ctx->barrier_seq = ctx->seq;
}

static void before_read(vkt_ctx *ctx, VkCommandBuffer cmd, tn_storage *st)
{
    if (st->write_seq > ctx->barrier_seq)
        barrier(ctx, cmd);
    st->read_seq = ctx->seq + 1;
}

static void before_write(vkt_ctx *ctx, VkCommandBuffer cmd, tn_storage *st)
{
    if (st->write_seq > ctx->barrier_seq || st->read_seq > ctx->barrier_seq)
        barrier(ctx, cmd);
}

static void emit(vkt_ctx *ctx, VkCommandBuffer cmd, const rt_command *c, VkPipeline *bound)
{
    if (c->copy) {
        vkCmdCopyBuffer(cmd, c->src, c->dst, 1, &c->region);
        return;
    }
    VkWriteDescriptorSet w[RT_MAX_BINDINGS];
    for (uint32_t i = 0; i < c->nbufs; i++)
        w[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                      .dstBinding = i,
                                      .descriptorCount = 1,
                                      .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                      .pBufferInfo = &c->bi[i]};
    /* Push descriptors and constants are set per dispatch anyway; binding the
     * pipeline again when it did not change would only cost the driver. */
    if (*bound != c->pipe) {
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, c->pipe);
        *bound = c->pipe;
    }
    ctx->push_descriptors(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, c->layout, 0, c->nbufs, w);
    if (c->push_size)
        vkCmdPushConstants(cmd, c->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, c->push_size, c->push);
    vkCmdDispatch(cmd, c->groups[0], c->groups[1], c->groups[2]);
}

/* Around one dispatch of target t when it is timed: behind a barrier, so
 * that the time is the dispatch's own. */
static bool timed(const vkt_ctx *ctx, const rt_target *t)
{
    return ctx->profiling && t->prof && t->nprof < t->prof_cap;
}

static void emit_timed(vkt_ctx *ctx, rt_target *t, const rt_command *c, VkPipeline *bound)
{
    barrier(ctx, t->cmd);
    vkCmdWriteTimestamp(t->cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, t->prof, 2 * t->nprof);
    emit(ctx, t->cmd, c, bound);
    vkCmdWriteTimestamp(t->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, t->prof, 2 * t->nprof + 1);
    t->tags[t->nprof++] = c->tag;
}

/* Keeps a command for the open graph, which holds every storage it uses. */
static int keep(vkt_ctx *ctx, rt_command *c)
{
    rt_log *log = ctx->rec;
    if (!rt_grow((void **)&log->cmds, &log->cap_cmds, log->ncmds + 1, sizeof *log->cmds))
        return err_set(VKT_ENOMEM, "out of host memory recording a graph");
    for (int i = 0; i < c->nst; i++)
        logged(ctx, c->st[i]);
    c->order = (uint32_t)log->ncmds;
    log->cmds[log->ncmds++] = *c;
    if (!c->copy)
        log->dispatches++;
    return VKT_OK;
}

/* Counts an eager command; submits at the batch-size threshold. */
static int eager_recorded(vkt_ctx *ctx)
{
    if (++ctx->pending >= RT_BATCH_DISPATCHES)
        return rt_flush(ctx);
    return VKT_OK;
}

/* An eager command: the barriers its storages need, then the command. */
static int eager(vkt_ctx *ctx, const rt_command *c)
{
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    TRY(eager_cmd(ctx, &cmd));
    for (int i = 0; i < c->nst; i++) {
        if (c->writes[i])
            before_write(ctx, cmd, c->st[i]);
        else
            before_read(ctx, cmd, c->st[i]);
    }
    if (!c->copy && timed(ctx, &ctx->eager))
        emit_timed(ctx, &ctx->eager, c, &ctx->bound);
    else
        emit(ctx, cmd, c, &ctx->bound);
    ctx->seq++;
    for (int i = 0; i < c->nst; i++)
        if (c->writes[i])
            c->st[i]->write_seq = ctx->seq;
    return eager_recorded(ctx);
}

int rt_dispatch(vkt_ctx *ctx, const rt_dispatch_desc *d)
{
    rt_command c;
    memset(&c, 0, sizeof c);
    c.pipe = d->pipe;
    c.layout = d->layout;
    c.nbufs = (uint32_t)d->nbufs;
    c.push_size = d->push_size;
    if (d->push_size)
        memcpy(c.push, d->push, d->push_size);
    memcpy(c.groups, d->groups, sizeof c.groups);
    c.tag = (rt_tag){ctx->cur_op, d->kernel};
    if (d->ew) {
        c.has_ew = true;
        c.ew = *d->ew;
    }
    if (d->form)
        c.form = *d->form;
    if (d->epi) {
        c.has_epi = true;
        c.epi = *d->epi;
    }
    if (d->epi || d->form) {
        c.nspec = (uint32_t)d->nspec;
        memcpy(c.spec, d->spec, sizeof(uint32_t) * (size_t)d->nspec);
    }
    c.nst = d->nbufs;
    for (int i = 0; i < d->nbufs; i++) {
        tn_storage *st = d->bufs[i];
        c.bi[i] = (VkDescriptorBufferInfo){
            .buffer = st->dev.buffer, .offset = st->dev.offset, .range = st->dev.size};
        c.st[i] = st;
        c.writes[i] = d->writes[i];
    }
    return ctx->rec ? keep(ctx, &c) : eager(ctx, &c);
}

int rt_copy(vkt_ctx *ctx, VkBuffer src, VkDeviceSize src_off, tn_storage *src_st, VkBuffer dst,
            VkDeviceSize dst_off, tn_storage *dst_st, VkDeviceSize size)
{
    rt_command c;
    memset(&c, 0, sizeof c);
    c.copy = true;
    c.src = src;
    c.dst = dst;
    c.region = (VkBufferCopy){.srcOffset = src_off, .dstOffset = dst_off, .size = size};
    if (src_st) {
        c.st[c.nst] = src_st;
        c.writes[c.nst++] = false;
    }
    if (dst_st) {
        c.st[c.nst] = dst_st;
        c.writes[c.nst++] = true;
    }
    return ctx->rec ? keep(ctx, &c) : eager(ctx, &c);
}

int rt_upload_const(vkt_ctx *ctx, VkBuffer src, VkDeviceSize src_off, tn_storage *dst_st,
                    VkDeviceSize size)
{
    if (!ctx->rec)
        return rt_copy(ctx, src, src_off, NULL, dst_st->dev.buffer, dst_st->dev.offset, dst_st,
                       size);
    /* The graph begins with a barrier, and a launch submits the eager buffer
     * ahead of it; rt_record_end puts a barrier behind these copies for the
     * eager work that follows. */
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    TRY(eager_cmd(ctx, &cmd));
    VkBufferCopy region = {.srcOffset = src_off, .dstOffset = dst_st->dev.offset, .size = size};
    vkCmdCopyBuffer(cmd, src, dst_st->dev.buffer, 1, &region);
    ctx->eager_in_rec = true;
    ctx->pending++;
    return VKT_OK;
}

int rt_alloc(vkt_ctx *ctx, VkDeviceSize size, mem_kind kind, mem_range *out)
{
    if (mem_alloc(ctx, size, kind, out) == VKT_OK)
        return VKT_OK;
    /* Deferred frees and spare blocks may hold the memory this needs (a
     * recording cannot submit, but can still return spares). */
    if (!ctx->rec)
        TRY(rt_flush(ctx));
    mem_trim(ctx);
    return mem_alloc(ctx, size, kind, out);
}

/* ---- graph recordings ------------------------------------------------------- */

int rt_record_begin(vkt_ctx *ctx, rt_target *t, rt_log *log)
{
    if (ctx->rec)
        return err_set(VKT_EGRAPH,
                       "vkt_graph_begin: a graph is already being recorded on this context");
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
    ctx->eager_in_rec = false;
    return VKT_OK;
}

/* Levels: a command goes one level past the last write of what it reads and
 * past the last read or write of what it writes, in recording order, so no
 * two commands of a level conflict and the levels are as few as the longest
 * chain of dependencies. */
static uint32_t level(rt_log *log)
{
    uint32_t nlev = 0;
    for (size_t i = 0; i < log->ncmds; i++)
        for (int k = 0; k < log->cmds[i].nst; k++)
            log->cmds[i].st[k]->lv_write = log->cmds[i].st[k]->lv_read = 0;
    for (size_t i = 0; i < log->ncmds; i++) {
        rt_command *c = &log->cmds[i];
        uint32_t l = 0;
        for (int k = 0; k < c->nst; k++) {
            tn_storage *st = c->st[k];
            if (st->lv_write > l)
                l = st->lv_write;
            if (c->writes[k] && st->lv_read > l)
                l = st->lv_read;
        }
        c->level = l;
        for (int k = 0; k < c->nst; k++) {
            tn_storage *st = c->st[k];
            if (c->writes[k])
                st->lv_write = l + 1;
            else if (st->lv_read < l + 1)
                st->lv_read = l + 1;
        }
        if (l + 1 > nlev)
            nlev = l + 1;
    }
    return nlev;
}

/* Level first, then pipeline, so a level binds each pipeline once. */
static int by_level(const void *pa, const void *pb)
{
    const rt_command *a = pa, *b = pb;
    if (a->level != b->level)
        return a->level < b->level ? -1 : 1;
    if (a->pipe != b->pipe)
        return (uintptr_t)a->pipe < (uintptr_t)b->pipe ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

/* Emits a graph's commands: in levels, or, when it is timed, one at a time in
 * recording order as the eager buffer would run them. */
static void emit_graph(vkt_ctx *ctx, rt_target *t, rt_log *log)
{
    VkPipeline bound = VK_NULL_HANDLE;
    log->levels = level(log);
    if (t->prof) {
        for (size_t i = 0; i < log->ncmds; i++) {
            const rt_command *c = &log->cmds[i];
            if (!c->copy && timed(ctx, t)) {
                emit_timed(ctx, t, c, &bound);
            } else {
                barrier(ctx, t->cmd);
                emit(ctx, t->cmd, c, &bound);
            }
        }
        return;
    }
    if (log->ncmds > 1) /* an empty graph has no array to sort */
        qsort(log->cmds, log->ncmds, sizeof *log->cmds, by_level);
    for (size_t i = 0; i < log->ncmds; i++) {
        if (i > 0 && log->cmds[i].level != log->cmds[i - 1].level)
            barrier(ctx, t->cmd);
        emit(ctx, t->cmd, &log->cmds[i], &bound);
    }
}

int rt_record_end(vkt_ctx *ctx)
{
    rt_target *t = ctx->target;
    rt_log *log = ctx->rec;
    ctx->rec = NULL;
    ctx->target = &ctx->eager;
    if (log->status == VKT_OK)
        emit_graph(ctx, t, log);
    free(log->cmds);
    log->cmds = NULL;
    log->ncmds = log->cap_cmds = 0;
    if (ctx->eager_in_rec)
        barrier(ctx, ctx->eager.cmd);
    ctx->eager_in_rec = false;
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
        return err_set(VKT_EGRAPH,
                       "vkt_graph_launch: a graph is being recorded on this context; end it first");
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
