/* runtime.c — Vulkan instance, device selection, the compute queue, and the
 * deferred command buffer that ops record into until a sync point. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core.h"

/* Submitting every few hundred dispatches bounds the memory a long chain of
 * ops holds in deferred frees, without paying a submission per op. */
#define RT_BATCH_DISPATCHES 512

static int rank_type(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 4;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 3;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 1;
    default: return 0;
    }
}

static bool icontains(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return true;
    return n == 0;
}

static int find_compute_queue(VkPhysicalDevice pd, uint32_t *family)
{
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
    VkQueueFamilyProperties q[16];
    if (n > 16)
        n = 16;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, q);
    /* Prefer a compute queue without graphics: on discrete GPUs it is the
     * async-compute family; any compute-capable family will do otherwise. */
    int best = -1;
    for (uint32_t i = 0; i < n; i++) {
        if (!(q[i].queueFlags & VK_QUEUE_COMPUTE_BIT))
            continue;
        if (best < 0 || !(q[i].queueFlags & VK_QUEUE_GRAPHICS_BIT))
            best = (int)i;
    }
    if (best < 0)
        return -1;
    *family = (uint32_t)best;
    return 0;
}

static bool has_extension(VkPhysicalDevice pd, const char *name)
{
    uint32_t n = 0;
    vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL);
    VkExtensionProperties *e = calloc(n ? n : 1, sizeof *e);
    if (!e)
        return false;
    vkEnumerateDeviceExtensionProperties(pd, NULL, &n, e);
    bool found = false;
    for (uint32_t i = 0; i < n && !found; i++)
        found = strcmp(e[i].extensionName, name) == 0;
    free(e);
    return found;
}

static int select_device(vkt_ctx *ctx, const char *sel)
{
    uint32_t n = 0;
    VkResult r = vkEnumeratePhysicalDevices(ctx->instance, &n, NULL);
    if (r != VK_SUCCESS || n == 0)
        return err_set(VKT_ENODEV, "no Vulkan device found: install a Vulkan driver "
                                   "(on Debian, `apt-get install mesa-vulkan-drivers` gives the "
                                   "lavapipe CPU device)");
    VkPhysicalDevice pds[16];
    if (n > 16)
        n = 16;
    vkEnumeratePhysicalDevices(ctx->instance, &n, pds);
    int chosen = -1;
    if (sel && *sel) {
        char *end;
        long idx = strtol(sel, &end, 10);
        bool numeric = *end == '\0';
        for (uint32_t i = 0; i < n && chosen < 0; i++) {
            VkPhysicalDeviceProperties p;
            vkGetPhysicalDeviceProperties(pds[i], &p);
            if (numeric ? idx == (long)i : icontains(p.deviceName, sel))
                chosen = (int)i;
        }
        if (chosen < 0)
            return err_set(VKT_ENODEV, "VKT_DEVICE=%s matches none of the %u Vulkan device(s)", sel, n);
    } else {
        int best_rank = -1;
        for (uint32_t i = 0; i < n; i++) {
            VkPhysicalDeviceProperties p;
            vkGetPhysicalDeviceProperties(pds[i], &p);
            uint32_t fam;
            if (p.apiVersion < VK_API_VERSION_1_2 || find_compute_queue(pds[i], &fam) != 0)
                continue;
            if (!has_extension(pds[i], VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME))
                continue;
            if (rank_type(p.deviceType) > best_rank) {
                best_rank = rank_type(p.deviceType);
                chosen = (int)i;
            }
        }
        if (chosen < 0)
            return err_set(VKT_ENODEV, "no Vulkan 1.2 device with compute and push descriptors "
                                       "(on Debian, `apt-get install mesa-vulkan-drivers`)");
    }
    ctx->phys = pds[chosen];
    if (find_compute_queue(ctx->phys, &ctx->queue_family) != 0)
        return err_set(VKT_ENODEV, "the selected Vulkan device has no compute queue");
    if (!has_extension(ctx->phys, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME))
        return err_set(VKT_ENODEV, "the selected Vulkan device lacks VK_KHR_push_descriptor");
    return VKT_OK;
}

static int create_device(vkt_ctx *ctx)
{
    vkGetPhysicalDeviceProperties(ctx->phys, &ctx->props);
    vkGetPhysicalDeviceMemoryProperties(ctx->phys, &ctx->memprops);

    VkPhysicalDeviceSubgroupProperties sg = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sg};
    vkGetPhysicalDeviceProperties2(ctx->phys, &p2);
    ctx->subgroup_size = sg.subgroupSize ? sg.subgroupSize : 1;

    VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f12};
    vkGetPhysicalDeviceFeatures2(ctx->phys, &f2);
    ctx->has_f64 = f2.features.shaderFloat64;
    ctx->has_int8_storage = f12.storageBuffer8BitAccess;
    if (!ctx->has_int8_storage)
        return err_set(VKT_ENODEV, "the Vulkan device lacks storageBuffer8BitAccess (u8 tensors)");

    VkPhysicalDeviceVulkan12Features en12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
        .storageBuffer8BitAccess = VK_TRUE,
        .shaderInt8 = f12.shaderInt8,
        .uniformAndStorageBuffer8BitAccess = f12.uniformAndStorageBuffer8BitAccess,
    };
    VkPhysicalDeviceFeatures2 en = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &en12};
    en.features.shaderFloat64 = f2.features.shaderFloat64;
    en.features.shaderInt64 = f2.features.shaderInt64;

    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                   .queueFamilyIndex = ctx->queue_family,
                                   .queueCount = 1,
                                   .pQueuePriorities = &prio};
    const char *exts[] = {VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                              .pNext = &en,
                              .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &qci,
                              .enabledExtensionCount = 1,
                              .ppEnabledExtensionNames = exts};
    VK_TRY(vkCreateDevice(ctx->phys, &dci, NULL, &ctx->device));
    vkGetDeviceQueue(ctx->device, ctx->queue_family, 0, &ctx->queue);
    ctx->push_descriptors =
        (PFN_vkCmdPushDescriptorSetKHR)vkGetDeviceProcAddr(ctx->device, "vkCmdPushDescriptorSetKHR");
    if (!ctx->push_descriptors)
        return err_set(VKT_ENODEV, "vkCmdPushDescriptorSetKHR is not available");

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

static void read_env(vkt_ctx *ctx)
{
    const char *fr = getenv("VKT_FALLBACK_RESULT");
    ctx->fallback_result = VKT_DEVICE;
    if (fr && strcmp(fr, "host") == 0)
        ctx->fallback_result = VKT_HOST;
    else if (fr && *fr && strcmp(fr, "device") != 0)
        fprintf(stderr, "libvkt: VKT_FALLBACK_RESULT=%s is not device|host; using device\n", fr);
    const char *nd = getenv("VKT_NATIVE_DISABLE");
    if (nd && *nd)
        vkt_ctx_set_native_disable(ctx, nd);
}

VKT_API int vkt_ctx_create(const char *device, vkt_ctx **out)
{
    err_clear();
    if (!out)
        return err_set(VKT_EINVAL, "vkt_ctx_create: out is NULL");
    *out = NULL;
    vkt_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return err_set(VKT_ENOMEM, "vkt_ctx_create: out of host memory");
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                             .pApplicationName = "libvkt",
                             .pEngineName = "libvkt",
                             .apiVersion = VK_API_VERSION_1_2};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    VkResult r = vkCreateInstance(&ici, NULL, &ctx->instance);
    int s = VKT_OK;
    if (r != VK_SUCCESS) {
        s = err_set(VKT_ENODEV, "cannot create a Vulkan instance (%d): install a Vulkan driver "
                                "(on Debian, `apt-get install mesa-vulkan-drivers`)", (int)r);
        free(ctx);
        return s;
    }
    if (!device || !*device)
        device = getenv("VKT_DEVICE");
    s = select_device(ctx, device);
    if (s == VKT_OK)
        s = create_device(ctx);
    if (s != VKT_OK) {
        vkt_ctx_destroy(ctx);
        return s;
    }
    /* Host-visible device-local memory is used directly on unified-memory
     * devices (lavapipe, integrated GPUs); a discrete GPU gets device-local
     * storage and staging copies, since its mapped window is slow or small. */
    ctx->unified = ctx->props.deviceType != VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
    read_env(ctx);
    *out = ctx;
    return VKT_OK;
}

VKT_API void vkt_ctx_destroy(vkt_ctx *ctx)
{
    if (!ctx)
        return;
    if (ctx->device) {
        if (ctx->recording)
            rt_flush(ctx);
        vkDeviceWaitIdle(ctx->device);
        pl_destroy_all(ctx);
        mem_destroy_all(ctx);
        if (ctx->timestamps)
            vkDestroyQueryPool(ctx->device, ctx->timestamps, NULL);
        if (ctx->fence)
            vkDestroyFence(ctx->device, ctx->fence, NULL);
        if (ctx->pool)
            vkDestroyCommandPool(ctx->device, ctx->pool, NULL);
        vkDestroyDevice(ctx->device, NULL);
    }
    if (ctx->instance)
        vkDestroyInstance(ctx->instance, NULL);
    free(ctx->native_disable);
    free(ctx);
}

VKT_API const char *vkt_ctx_device_name(const vkt_ctx *ctx)
{
    return ctx ? ctx->props.deviceName : "";
}

VKT_API uint64_t vkt_ctx_max_tensor_bytes(const vkt_ctx *ctx)
{
    return ctx ? ctx->props.limits.maxStorageBufferRange : 0;
}

VKT_API int vkt_ctx_set_native_disable(vkt_ctx *ctx, const char *ops)
{
    if (!ctx || !ops)
        return err_set(VKT_EINVAL, "vkt_ctx_set_native_disable: NULL argument");
    size_t n = strlen(ops);
    char *list = malloc(n + 3);
    if (!list)
        return err_set(VKT_ENOMEM, "vkt_ctx_set_native_disable: out of host memory");
    /* Stored as ",a,b," so a lookup is one strstr of ",name,". */
    size_t j = 0;
    list[j++] = ',';
    for (size_t i = 0; i < n; i++)
        if (!isspace((unsigned char)ops[i]))
            list[j++] = ops[i];
    list[j++] = ',';
    list[j] = '\0';
    free(ctx->native_disable);
    ctx->native_disable = j > 2 ? list : NULL;
    if (j <= 2)
        free(list);
    return VKT_OK;
}

VKT_API int vkt_ctx_set_fallback_result(vkt_ctx *ctx, vkt_residency where)
{
    if (!ctx || (where != VKT_DEVICE && where != VKT_HOST))
        return err_set(VKT_EINVAL, "vkt_ctx_set_fallback_result: bad argument");
    ctx->fallback_result = where;
    return VKT_OK;
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
