/* context.c — a context's life: the Vulkan instance, device selection, the
 * compute queue, the device's properties and the context's options. The work
 * recorded on it is the command stream's (stream.c). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core.h"

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

    return rt_init(ctx);
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
    const char *dk = getenv("VKT_DOT_KERNEL");
    if (dk && *dk)
        ctx->dot_kernel = strdup(dk);
    const char *ck = getenv("VKT_CONV_KERNEL");
    if (ck && *ck)
        ctx->conv_kernel = strdup(ck);
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
        rt_destroy(ctx);
        pl_destroy_all(ctx);
        mem_destroy_all(ctx);
        vkDestroyDevice(ctx->device, NULL);
    }
    if (ctx->instance)
        vkDestroyInstance(ctx->instance, NULL);
    free(ctx->native_disable);
    free(ctx->dot_kernel);
    free(ctx->conv_kernel);
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
