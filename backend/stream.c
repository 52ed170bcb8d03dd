/* stream.c — the command stream: ops record dispatches and transfers into the
 * context's command buffer, which is submitted at sync points (a read to the
 * host, a fallback, vkt_sync, or every RT_BATCH_DISPATCHES dispatches), with
 * barriers only where a dispatch reads what an unsynced one wrote. Frees made
 * while work is recorded wait for its submission (memory.c), so a completed
 * submission is also where memory comes back, and allocation's retry under
 * memory pressure lives here. */
#include <stdlib.h>

#include "core.h"

/* Submitting every few hundred dispatches bounds the memory a long chain of
 * ops holds in deferred frees, without paying a submission per op. */
#define RT_BATCH_DISPATCHES 512

int rt_init(vkt_ctx *ctx)
{
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                   .queueFamilyIndex = ctx->queue_family};
    VK_TRY(vkCreateCommandPool(ctx->device, &pci, NULL, &ctx->pool));
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = ctx->pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
    VK_TRY(vkAllocateCommandBuffers(ctx->device, &cai, &ctx->cmd));
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VK_TRY(vkCreateFence(ctx->device, &fci, NULL, &ctx->fence));
    uint32_t qn = 0;
    VkQueueFamilyProperties qf[16];
    vkGetPhysicalDeviceQueueFamilyProperties(ctx->phys, &qn, NULL);
    qn = qn > 16 ? 16 : qn;
    vkGetPhysicalDeviceQueueFamilyProperties(ctx->phys, &qn, qf);
    if (qf[ctx->queue_family].timestampValidBits > 0 && ctx->props.limits.timestampPeriod > 0) {
        VkQueryPoolCreateInfo qp = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                    .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                    .queryCount = 2};
        VK_TRY(vkCreateQueryPool(ctx->device, &qp, NULL, &ctx->timestamps));
    }
    ctx->last_gpu_ns = -1;
    return VKT_OK;
}

void rt_destroy(vkt_ctx *ctx)
{
    if (ctx->recording)
        rt_flush(ctx);
    vkDeviceWaitIdle(ctx->device);
    if (ctx->timestamps)
        vkDestroyQueryPool(ctx->device, ctx->timestamps, NULL);
    if (ctx->fence)
        vkDestroyFence(ctx->device, ctx->fence, NULL);
    if (ctx->pool)
        vkDestroyCommandPool(ctx->device, ctx->pool, NULL);
}

int rt_cmd(vkt_ctx *ctx, VkCommandBuffer *out)
{
    if (ctx->device_lost)
        return err_set(VKT_EDEVICE, "the Vulkan device was lost earlier; create a new context");
    if (!ctx->recording) {
        VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
        VK_TRY(vkBeginCommandBuffer(ctx->cmd, &bi));
        if (ctx->timestamps) {
            vkCmdResetQueryPool(ctx->cmd, ctx->timestamps, 0, 2);
            vkCmdWriteTimestamp(ctx->cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, ctx->timestamps, 0);
        }
        ctx->recording = true;
        ctx->pending = 0;
        ctx->barrier_seq = ctx->seq;
    }
    *out = ctx->cmd;
    return VKT_OK;
}

int rt_flush(vkt_ctx *ctx)
{
    if (!ctx->recording) {
        mem_collect(ctx);
        return VKT_OK;
    }
    ctx->recording = false;
    if (ctx->timestamps)
        vkCmdWriteTimestamp(ctx->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, ctx->timestamps, 1);
    VkResult r = vkEndCommandBuffer(ctx->cmd);
    if (r == VK_SUCCESS) {
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &ctx->cmd};
        r = vkQueueSubmit(ctx->queue, 1, &si, ctx->fence);
        if (r == VK_SUCCESS) {
            r = vkWaitForFences(ctx->device, 1, &ctx->fence, VK_TRUE, UINT64_MAX);
            vkResetFences(ctx->device, 1, &ctx->fence);
        }
    }
    vkResetCommandBuffer(ctx->cmd, 0);
    ctx->barrier_seq = ctx->seq;
    ctx->pending = 0;
    if (r == VK_ERROR_DEVICE_LOST)
        ctx->device_lost = true;
    if (r != VK_SUCCESS)
        return err_vk(r, "submitting recorded work");
    uint64_t ts[2];
    if (ctx->timestamps && vkGetQueryPoolResults(ctx->device, ctx->timestamps, 0, 2, sizeof ts, ts, sizeof ts[0],
                                                 VK_QUERY_RESULT_64_BIT) == VK_SUCCESS)
        ctx->last_gpu_ns = (double)(ts[1] - ts[0]) * ctx->props.limits.timestampPeriod;
    mem_collect(ctx);
    return VKT_OK;
}

void rt_before_read(vkt_ctx *ctx, VkCommandBuffer cmd, const tn_storage *st)
{
    if (st->write_seq <= ctx->barrier_seq)
        return;
    /* One global barrier orders every earlier write (shader or transfer) before
     * every later access; finer per-buffer barriers buy nothing on compute. */
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                           VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0,
                         NULL, 0, NULL);
    ctx->barrier_seq = ctx->seq;
}

void rt_after_write(vkt_ctx *ctx, tn_storage *st)
{
    st->write_seq = ctx->seq;
}

int rt_recorded(vkt_ctx *ctx)
{
    if (++ctx->pending >= RT_BATCH_DISPATCHES)
        return rt_flush(ctx);
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

int rt_alloc(vkt_ctx *ctx, VkDeviceSize size, bool staging, mem_range *out)
{
    if (mem_alloc(ctx, size, staging, out) == VKT_OK)
        return VKT_OK;
    /* Deferred frees and spare blocks may hold the memory this needs. */
    TRY(rt_flush(ctx));
    mem_trim(ctx);
    return mem_alloc(ctx, size, staging, out);
}
