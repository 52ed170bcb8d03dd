/* context.c — a context's life: the Vulkan instance, device selection, the
 * compute queue, the device's properties and the context's options, whose
 * names are checked here, once, against the public op list (matrix.c) and
 * the kernel lists (kernels.h). The work recorded on it is the command
 * stream's (stream.c). */
#include <ctype.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core.h"
#include "kernels.h"
#include "opname.h" /* rules/: the closest names to a typo, one rule with fbcount's */

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
            return err_set(VKT_ENODEV, "VKT_DEVICE=%s matches none of the %u Vulkan device(s)", sel,
                           n);
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

    VkPhysicalDeviceVulkan12Features f12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                    .pNext = &f12};
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
    VkPhysicalDeviceFeatures2 en = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                    .pNext = &en12};
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
    ctx->push_descriptors = (PFN_vkCmdPushDescriptorSetKHR)vkGetDeviceProcAddr(
        ctx->device, "vkCmdPushDescriptorSetKHR");
    if (!ctx->push_descriptors)
        return err_set(VKT_ENODEV, "vkCmdPushDescriptorSetKHR is not available");

    return rt_init(ctx);
}

/* ---- options: names checked against the op list and kernels.h ------------ */

/* Whether the n bytes at name are a public op's name (vkt_op_name) or "all". */
static bool op_known(const char *name, size_t n)
{
    if (n == 3 && memcmp(name, "all", 3) == 0)
        return true;
    for (size_t i = 0, count = vkt_op_count(); i < count; i++) {
        const char *op = vkt_op_name(i);
        if (strlen(op) == n && memcmp(op, name, n) == 0)
            return true;
    }
    return false;
}

/* Turns "a, b" into ",a,b," (*out, NULL for none), keeping the names of ops
 * only; the first other name goes to bad (NUL-terminated, cut to badcap). */
static int parse_disable(const char *ops, char **out, char *bad, size_t badcap)
{
    size_t n = strlen(ops), j = 0;
    char *list = malloc(n + 3);
    if (!list)
        return VKT_ENOMEM;
    bad[0] = '\0';
    list[j++] = ',';
    for (const char *p = ops; *p;) {
        while (*p == ',' || isspace((unsigned char)*p))
            p++;
        const char *start = p;
        while (*p && *p != ',' && !isspace((unsigned char)*p))
            p++;
        size_t len = (size_t)(p - start);
        if (len == 0)
            continue;
        if (!op_known(start, len)) {
            if (!bad[0])
                snprintf(bad, badcap, "%.*s", (int)len, start);
            continue;
        }
        memcpy(list + j, start, len);
        j += len;
        list[j++] = ',';
    }
    list[j] = '\0';
    *out = j > 1 ? list : NULL;
    if (j <= 1)
        free(list);
    return VKT_OK;
}

/* The index of name in a kernel list, or -1. */
static int kernel_index(const char *const *names, int count, const char *name)
{
    for (int k = 0; k < count; k++)
        if (strcmp(names[k], name) == 0)
            return k;
    return -1;
}

#define KERNEL_NAME(name) #name,
static const char *const dot_kernel_names[DK__COUNT] = {DOT_KERNELS(KERNEL_NAME)};
static const char *const conv_kernel_names[CK__COUNT] = {CONV_KERNELS(KERNEL_NAME)};
#undef KERNEL_NAME

/* One warning per variable and process: every context reads the same
 * environment, and a test or a tool makes many. */
static atomic_bool warned_disable, warned_dot, warned_conv;

/* A kernel-override variable's kernel: its index in names, else (unset, or
 * a name that is none, which warns once) 0, the automatic choice. */
static int kernel_from_env(const char *var, const char *const *names, int count,
                           atomic_bool *warned)
{
    const char *v = getenv(var);
    if (!v || !*v)
        return 0;
    int k = kernel_index(names, count, v);
    if (k >= 0)
        return k;
    if (!atomic_exchange(warned, true)) {
        fprintf(stderr, "libvkt: %s=%s names no kernel (", var, v);
        for (int i = 0; i < count; i++)
            fprintf(stderr, "%s%s", i ? ", " : "", names[i]);
        fprintf(stderr, "); choosing automatically\n");
    }
    return 0;
}

/* "'dto' (did you mean dot?)": the ops closest to a name that names none (rules/opname.h),
 * for a person who typed it in a variable or an argument. */
static void suggest(const char *bad, char *out, size_t cap)
{
    const char *known[512], *close[3];
    size_t n = 0;
    for (size_t i = 0, count = vkt_op_count(); i < count && n < 512; i++)
        known[n++] = vkt_op_name(i);
    static const fbr_names none = {0};
    size_t k = fbr_op_closest(bad, known, n, &none, close, 3);
    int len = snprintf(out, cap, "'%s'", bad);
    for (size_t i = 0; i < k && len > 0 && (size_t)len < cap; i++)
        len +=
            snprintf(out + len, cap - (size_t)len, "%s%s", i ? ", " : " (did you mean ", close[i]);
    if (k && len > 0 && (size_t)len < cap)
        snprintf(out + len, cap - (size_t)len, "?)");
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
    char bad[64];
    if (nd && *nd && parse_disable(nd, &ctx->native_disable, bad, sizeof bad) == VKT_OK && bad[0] &&
        !atomic_exchange(&warned_disable, true)) {
        char named[160];
        suggest(bad, named, sizeof named);
        fprintf(stderr,
                "libvkt: VKT_NATIVE_DISABLE names no op %s; ignoring that name "
                "(vkt-ops-matrix lists every op, or \"all\")\n",
                named);
    }
    ctx->dot_kernel = kernel_from_env("VKT_DOT_KERNEL", dot_kernel_names, DK__COUNT, &warned_dot);
    ctx->conv_kernel =
        kernel_from_env("VKT_CONV_KERNEL", conv_kernel_names, CK__COUNT, &warned_conv);
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
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                .pApplicationInfo = &app};
    VkResult r = vkCreateInstance(&ici, NULL, &ctx->instance);
    int s = VKT_OK;
    if (r != VK_SUCCESS) {
        s = err_set(VKT_ENODEV,
                    "cannot create a Vulkan instance (%d): install a Vulkan driver "
                    "(on Debian, `apt-get install mesa-vulkan-drivers`)",
                    (int)r);
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
    err_clear();
    if (!ctx || !ops)
        return err_set(VKT_EINVAL, "vkt_ctx_set_native_disable: NULL argument");
    char *list = NULL, bad[64];
    if (parse_disable(ops, &list, bad, sizeof bad) != VKT_OK)
        return err_set(VKT_ENOMEM, "vkt_ctx_set_native_disable: out of host memory");
    if (bad[0]) {
        char named[160];
        suggest(bad, named, sizeof named);
        free(list);
        return err_set(VKT_EINVAL,
                       "vkt_ctx_set_native_disable: %s is no op's name (vkt_op_name and "
                       "vkt-ops-matrix list them, or \"all\"); nothing changed",
                       named);
    }
    free(ctx->native_disable);
    ctx->native_disable = list;
    return VKT_OK;
}

VKT_API int vkt_ctx_set_fallback_result(vkt_ctx *ctx, vkt_residency where)
{
    if (!ctx || (where != VKT_DEVICE && where != VKT_HOST))
        return err_set(VKT_EINVAL, "vkt_ctx_set_fallback_result: bad argument");
    ctx->fallback_result = where;
    return VKT_OK;
}
