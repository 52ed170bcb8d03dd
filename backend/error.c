/* error.c — per-thread error messages behind vkt_last_error(). */
#include <stdarg.h>
#include <stdio.h>

#include "core.h"

static _Thread_local char err_msg[512];

int err_set(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err_msg, sizeof err_msg, fmt, ap);
    va_end(ap);
    return status;
}

void err_clear(void)
{
    err_msg[0] = '\0';
}

static const char *vk_result_name(VkResult r)
{
    switch (r) {
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    default: return "VkResult";
    }
}

int err_vk(VkResult r, const char *what)
{
    int status = VKT_EDEVICE;
    if (r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY)
        status = VKT_ENOMEM;
    return err_set(status, "%s failed: %s (%d)", what, vk_result_name(r), (int)r);
}

VKT_API const char *vkt_last_error(void)
{
    return err_msg;
}

VKT_API const char *vkt_status_name(int status)
{
    switch (status) {
#define STATUS_NAME(name, value)                                                                   \
    case value: return #name;
        VKT_STATUSES(STATUS_NAME)
#undef STATUS_NAME
    default: return "VKT_E?";
    }
}
