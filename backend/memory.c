/* memory.c — a sub-allocator over large VkDeviceMemory blocks.
 *
 * Each block is one allocation bound to one VkBuffer that spans it; tensors get
 * aligned ranges of that buffer. Frees are deferred to the next completed
 * submission, because recorded but unsubmitted dispatches may still read the
 * range: reusing it earlier would be a write-after-read hazard. Frees made
 * while a graph is recording go to the graph, which may use the range at every
 * launch and frees it with itself. */
#include <stdlib.h>
#include <string.h>

#include "core.h"

#define MEM_BLOCK_SIZE ((VkDeviceSize)64 << 20)

typedef struct mem_hole {
    VkDeviceSize offset, size;
    struct mem_hole *next;
} mem_hole;

struct mem_block {
    VkDeviceMemory memory;
    VkBuffer buffer;
    VkDeviceSize size;
    void *mapped;
    mem_kind kind;
    bool dedicated;  /* holds one large range; released when it is freed */
    mem_hole *holes; /* free ranges sorted by offset */
    mem_block *next;
};

/* Empty dedicated blocks kept for reuse, as a GPU caching allocator does: a
 * training step frees and reallocates the same large tensors every step, and
 * a fresh vkAllocateMemory of hundreds of MiB costs milliseconds. */
#define MEM_SPARE_MAX ((VkDeviceSize)4 << 30)

struct mem_state {
    mem_block *blocks;
    mem_block *spare; /* empty dedicated blocks, newest first */
    VkDeviceSize spare_bytes;
    mem_range *deferred;
    size_t ndeferred, cap;
};

static VkDeviceSize align_up(VkDeviceSize v, VkDeviceSize a)
{
    return (v + a - 1) / a * a;
}

static int find_type(const vkt_ctx *ctx, uint32_t bits, VkMemoryPropertyFlags want, uint32_t *out)
{
    for (uint32_t i = 0; i < ctx->memprops.memoryTypeCount; i++)
        if ((bits & (1u << i)) && (ctx->memprops.memoryTypes[i].propertyFlags & want) == want) {
            *out = i;
            return 0;
        }
    return -1;
}

static int block_create(vkt_ctx *ctx, VkDeviceSize size, mem_kind kind, bool dedicated,
                        mem_block **out)
{
    mem_block *b = calloc(1, sizeof *b);
    mem_hole *h = calloc(1, sizeof *h);
    if (!b || !h) {
        free(b);
        free(h);
        return err_set(VKT_ENOMEM, "out of host memory");
    }
    VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                              .size = size,
                              .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                       VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                       VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                              .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VkResult r = vkCreateBuffer(ctx->device, &bci, NULL, &b->buffer);
    VkMemoryRequirements req = {0};
    uint32_t type = 0;
    int s = VKT_OK;
    if (r == VK_SUCCESS) {
        vkGetBufferMemoryRequirements(ctx->device, b->buffer, &req);
        VkMemoryPropertyFlags host =
            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        VkMemoryPropertyFlags want = kind == MEM_STAGING ? host
                                     : kind == MEM_UPLOAD || ctx->unified
                                         ? host | VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT
                                         : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
        if (find_type(ctx, req.memoryTypeBits, want, &type) != 0 &&
            (kind == MEM_UPLOAD ||
             find_type(ctx, req.memoryTypeBits, kind != MEM_DEVICE || ctx->unified ? host : 0,
                       &type) != 0))
            s = err_set(VKT_ENOMEM, "no suitable Vulkan memory type");
        if (s == VKT_OK) {
            /* A large tensor's block is a dedicated allocation in Vulkan's
             * sense too, which lets the driver choose its placement and page
             * size for that one buffer. (A speed-up once credited to this on
             * an H200 was the GPU's clock warming up: tools/bench/RESULTS.md.) */
            VkMemoryDedicatedAllocateInfo one = {
                .sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO, .buffer = b->buffer};
            VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                        .pNext = dedicated ? &one : NULL,
                                        .allocationSize = req.size,
                                        .memoryTypeIndex = type};
            r = vkAllocateMemory(ctx->device, &mai, NULL, &b->memory);
        }
    }
    if (s == VKT_OK && r == VK_SUCCESS)
        r = vkBindBufferMemory(ctx->device, b->buffer, b->memory, 0);
    bool mappable =
        ctx->memprops.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    if (s == VKT_OK && r == VK_SUCCESS && mappable)
        r = vkMapMemory(ctx->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped);
    if (s == VKT_OK && r != VK_SUCCESS)
        s = err_vk(r, "allocating device memory");
    if (s != VKT_OK) {
        if (b->memory)
            vkFreeMemory(ctx->device, b->memory, NULL);
        if (b->buffer)
            vkDestroyBuffer(ctx->device, b->buffer, NULL);
        free(b);
        free(h);
        return s;
    }
    b->size = size;
    b->kind = kind;
    b->dedicated = dedicated;
    h->offset = 0;
    h->size = size;
    b->holes = h;
    *out = b;
    return VKT_OK;
}

static void block_destroy(vkt_ctx *ctx, mem_block *b)
{
    while (b->holes) {
        mem_hole *n = b->holes->next;
        free(b->holes);
        b->holes = n;
    }
    if (b->mapped)
        vkUnmapMemory(ctx->device, b->memory);
    vkDestroyBuffer(ctx->device, b->buffer, NULL);
    vkFreeMemory(ctx->device, b->memory, NULL);
    free(b);
}

static bool block_take(mem_block *b, VkDeviceSize size, VkDeviceSize align, VkDeviceSize *offset)
{
    for (mem_hole **pp = &b->holes; *pp; pp = &(*pp)->next) {
        mem_hole *h = *pp;
        VkDeviceSize start = align_up(h->offset, align);
        if (start + size > h->offset + h->size)
            continue;
        /* Alignment padding at the front stays a hole of its own. */
        VkDeviceSize end = start + size, hend = h->offset + h->size;
        if (start > h->offset) {
            mem_hole *tail = NULL;
            if (end < hend) {
                tail = malloc(sizeof *tail);
                if (!tail)
                    return false;
                tail->offset = end;
                tail->size = hend - end;
                tail->next = h->next;
                h->next = tail;
            }
            h->size = start - h->offset;
        } else if (end < hend) {
            h->offset = end;
            h->size = hend - end;
        } else {
            *pp = h->next;
            free(h);
        }
        *offset = start;
        return true;
    }
    return false;
}

static void block_give(mem_block *b, VkDeviceSize offset, VkDeviceSize size)
{
    mem_hole **pp = &b->holes;
    while (*pp && (*pp)->offset < offset)
        pp = &(*pp)->next;
    mem_hole *next = *pp;
    /* Merge with the hole before (the one whose next pointer we hold) and after. */
    mem_hole *prev = NULL;
    for (mem_hole *h = b->holes; h && h != next; h = h->next)
        prev = h;
    if (prev && prev->offset + prev->size == offset) {
        prev->size += size;
        if (next && prev->offset + prev->size == next->offset) {
            prev->size += next->size;
            prev->next = next->next;
            free(next);
        }
        return;
    }
    if (next && offset + size == next->offset) {
        next->offset = offset;
        next->size += size;
        return;
    }
    mem_hole *h = malloc(sizeof *h);
    if (!h)
        return; /* the range leaks inside the block; never a crash */
    h->offset = offset;
    h->size = size;
    h->next = next;
    *pp = h;
}

/* The smallest spare block that fits `size` without wasting more than half. */
static mem_block *spare_take(struct mem_state *m, VkDeviceSize size, mem_kind kind)
{
    mem_block **best = NULL;
    for (mem_block **pp = &m->spare; *pp; pp = &(*pp)->next) {
        mem_block *b = *pp;
        if (b->kind == kind && b->size >= size && b->size / 2 <= size &&
            (!best || b->size < (*best)->size))
            best = pp;
    }
    if (!best)
        return NULL;
    mem_block *b = *best;
    *best = b->next;
    m->spare_bytes -= b->size;
    return b;
}

/* Returns spare blocks to the driver, oldest first, until at most `keep`
 * bytes remain. */
static void spare_release(vkt_ctx *ctx, VkDeviceSize keep)
{
    struct mem_state *m = ctx->mem;
    while (m->spare_bytes > keep) {
        mem_block **pp = &m->spare;
        while ((*pp)->next)
            pp = &(*pp)->next;
        mem_block *b = *pp;
        *pp = NULL;
        m->spare_bytes -= b->size;
        block_destroy(ctx, b);
    }
}

static int alloc_kind(vkt_ctx *ctx, VkDeviceSize size, mem_kind kind, mem_range *out);

int mem_alloc(vkt_ctx *ctx, VkDeviceSize size, mem_kind kind, mem_range *out)
{
    if (kind != MEM_UPLOAD)
        return alloc_kind(ctx, size, kind, out);
    /* Host-visible device memory is often a small window (256 MiB without
     * resizable BAR): uploads that do not fit it, or devices without it,
     * stage through host memory as reads do. */
    if (!ctx->unified && alloc_kind(ctx, size, MEM_UPLOAD, out) == VKT_OK)
        return VKT_OK;
    err_clear();
    return alloc_kind(ctx, size, MEM_STAGING, out);
}

static int alloc_kind(vkt_ctx *ctx, VkDeviceSize size, mem_kind kind, mem_range *out)
{
    if (!ctx->mem) {
        ctx->mem = calloc(1, sizeof *ctx->mem);
        if (!ctx->mem)
            return err_set(VKT_ENOMEM, "out of host memory");
    }
    VkDeviceSize align = ctx->props.limits.minStorageBufferOffsetAlignment;
    if (align < 16)
        align = 16;
    size = align_up(size ? size : 16, 16);
    mem_block *b;
    VkDeviceSize off;
    if (size <= MEM_BLOCK_SIZE / 2) {
        for (b = ctx->mem->blocks; b; b = b->next)
            if (!b->dedicated && b->kind == kind && block_take(b, size, align, &off))
                goto found;
        TRY(block_create(ctx, MEM_BLOCK_SIZE, kind, false, &b));
    } else if (!(b = spare_take(ctx->mem, size, kind))) {
        TRY(block_create(ctx, size, kind, true, &b));
    }
    b->next = ctx->mem->blocks;
    ctx->mem->blocks = b;
    if (!block_take(b, size, align, &off))
        return err_set(VKT_ENOMEM, "device memory block too small");
found:
    out->block = b;
    out->buffer = b->buffer;
    out->offset = off;
    out->size = size;
    out->mapped = b->mapped ? (char *)b->mapped + off : NULL;
    return VKT_OK;
}

void mem_trim(vkt_ctx *ctx)
{
    if (ctx->mem)
        spare_release(ctx, 0);
}

void mem_free(vkt_ctx *ctx, mem_range *r)
{
    if (!r->block || !ctx->mem)
        return;
    struct mem_state *m = ctx->mem;
    if (ctx->rec) {
        /* A graph's recorded work may use the range at every launch. */
        rt_log *log = ctx->rec;
        if (!rt_grow((void **)&log->held, &log->cap_held, log->nheld + 1, sizeof *log->held))
            return; /* leaks a range rather than risk a hazard */
        log->held[log->nheld++] = *r;
    } else if (!ctx->recording) {
        block_give(r->block, r->offset, r->size);
        if (r->block->dedicated)
            mem_collect(ctx);
    } else {
        if (m->ndeferred == m->cap) {
            size_t cap = m->cap ? m->cap * 2 : 64;
            mem_range *d = realloc(m->deferred, cap * sizeof *d);
            if (!d)
                return; /* leaks a range rather than risk a hazard */
            m->deferred = d;
            m->cap = cap;
        }
        m->deferred[m->ndeferred++] = *r;
    }
    memset(r, 0, sizeof *r);
}

void mem_collect(vkt_ctx *ctx)
{
    struct mem_state *m = ctx->mem;
    if (!m)
        return;
    for (size_t i = 0; i < m->ndeferred; i++)
        block_give(m->deferred[i].block, m->deferred[i].offset, m->deferred[i].size);
    m->ndeferred = 0;
    /* Empty dedicated blocks become spares, within a budget of an eighth of
     * the largest heap (at most MEM_SPARE_MAX); the oldest go back first. */
    VkDeviceSize heap = 0;
    for (uint32_t i = 0; i < ctx->memprops.memoryHeapCount; i++)
        if (ctx->memprops.memoryHeaps[i].size > heap)
            heap = ctx->memprops.memoryHeaps[i].size;
    VkDeviceSize budget = heap / 8 < MEM_SPARE_MAX ? heap / 8 : MEM_SPARE_MAX;
    for (mem_block **pp = &m->blocks; *pp;) {
        mem_block *b = *pp;
        if (b->dedicated && b->holes && b->holes->offset == 0 && b->holes->size == b->size) {
            *pp = b->next;
            b->next = m->spare;
            m->spare = b;
            m->spare_bytes += b->size;
        } else {
            pp = &b->next;
        }
    }
    spare_release(ctx, budget);
}

void mem_destroy_all(vkt_ctx *ctx)
{
    struct mem_state *m = ctx->mem;
    if (!m)
        return;
    spare_release(ctx, 0);
    while (m->blocks) {
        mem_block *n = m->blocks->next;
        block_destroy(ctx, m->blocks);
        m->blocks = n;
    }
    free(m->deferred);
    free(m);
    ctx->mem = NULL;
}
