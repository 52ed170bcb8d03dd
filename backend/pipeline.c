/* pipeline.c — compute pipelines built once per (shader, specialization) and
 * cached; dispatches bind buffers with push descriptors and shapes with push
 * constants, so recording an op allocates nothing on the device. */
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "core.h"
#include "spirv_table.h"

typedef struct pl_key {
    int shader;
    int nspec;
    uint32_t spec[PL_MAX_SPEC];
} pl_key;

typedef struct pl_entry {
    pl_key key;
    VkPipeline pipeline;
    int nbufs;
    UT_hash_handle hh;
} pl_entry;

struct pl_state {
    pl_entry *cache;
    VkShaderModule modules[SPV__COUNT];
    VkDescriptorSetLayout set_layouts[PL_MAX_BINDINGS + 1];
    VkPipelineLayout layouts[PL_MAX_BINDINGS + 1];
};

static int layout_for(vkt_ctx *ctx, int nbufs, VkPipelineLayout *out)
{
    struct pl_state *p = ctx->pl;
    if (!p->layouts[nbufs]) {
        VkDescriptorSetLayoutBinding b[PL_MAX_BINDINGS];
        for (int i = 0; i < nbufs; i++)
            b[i] =
                (VkDescriptorSetLayoutBinding){.binding = (uint32_t)i,
                                               .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                               .descriptorCount = 1,
                                               .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
        VkDescriptorSetLayoutCreateInfo dl = {
            .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
            .flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR,
            .bindingCount = (uint32_t)nbufs,
            .pBindings = b};
        VK_TRY(vkCreateDescriptorSetLayout(ctx->device, &dl, NULL, &p->set_layouts[nbufs]));
        VkPushConstantRange pc = {
            .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = PL_PUSH_SIZE};
        VkPipelineLayoutCreateInfo pli = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                          .setLayoutCount = 1,
                                          .pSetLayouts = &p->set_layouts[nbufs],
                                          .pushConstantRangeCount = 1,
                                          .pPushConstantRanges = &pc};
        VK_TRY(vkCreatePipelineLayout(ctx->device, &pli, NULL, &p->layouts[nbufs]));
    }
    *out = p->layouts[nbufs];
    return VKT_OK;
}

static int pipeline_for(vkt_ctx *ctx, const pl_dispatch *d, VkPipeline *out,
                        VkPipelineLayout *layout)
{
    if (!ctx->pl) {
        ctx->pl = calloc(1, sizeof *ctx->pl);
        if (!ctx->pl)
            return err_set(VKT_ENOMEM, "out of host memory");
    }
    struct pl_state *p = ctx->pl;
    TRY(layout_for(ctx, d->nbufs, layout));
    pl_key key;
    memset(&key, 0, sizeof key);
    key.shader = d->shader;
    key.nspec = d->nspec;
    memcpy(key.spec, d->spec, sizeof(uint32_t) * (size_t)d->nspec);
    pl_entry *e;
    HASH_FIND(hh, p->cache, &key, sizeof key, e);
    if (e) {
        *out = e->pipeline;
        return VKT_OK;
    }
    if (!p->modules[d->shader]) {
        VkShaderModuleCreateInfo smi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                        .codeSize = spv_table[d->shader].size,
                                        .pCode = spv_table[d->shader].code};
        VK_TRY(vkCreateShaderModule(ctx->device, &smi, NULL, &p->modules[d->shader]));
    }
    VkSpecializationMapEntry map[PL_MAX_SPEC];
    for (int i = 0; i < d->nspec; i++)
        map[i] = (VkSpecializationMapEntry){.constantID = (uint32_t)i,
                                            .offset = (uint32_t)(i * sizeof(uint32_t)),
                                            .size = sizeof(uint32_t)};
    VkSpecializationInfo si = {.mapEntryCount = (uint32_t)d->nspec,
                               .pMapEntries = map,
                               .dataSize = sizeof(uint32_t) * (size_t)d->nspec,
                               .pData = key.spec};
    VkComputePipelineCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = p->modules[d->shader],
                  .pName = "main",
                  .pSpecializationInfo = d->nspec ? &si : NULL},
        .layout = *layout};
    VkPipeline pipe;
    VK_TRY(vkCreateComputePipelines(ctx->device, VK_NULL_HANDLE, 1, &ci, NULL, &pipe));
    e = calloc(1, sizeof *e);
    if (!e) {
        vkDestroyPipeline(ctx->device, pipe, NULL);
        return err_set(VKT_ENOMEM, "out of host memory");
    }
    e->key = key;
    e->pipeline = pipe;
    e->nbufs = d->nbufs;
    HASH_ADD(hh, p->cache, key, sizeof key, e);
    *out = pipe;
    return VKT_OK;
}

int pl_run(vkt_ctx *ctx, const pl_dispatch *d)
{
    if (d->shader < 0 || d->shader >= SPV__COUNT || d->nbufs > PL_MAX_BINDINGS ||
        d->nspec > PL_MAX_SPEC || d->push_size > PL_PUSH_SIZE ||
        ((d->epi || d->form) && d->nspec > RT_MAX_SPEC))
        return err_set(VKT_EINVAL, "internal: bad dispatch description");
    if (d->groups[0] == 0 || d->groups[1] == 0 || d->groups[2] == 0)
        return VKT_OK;
    VkPipeline pipe = VK_NULL_HANDLE;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    TRY(pipeline_for(ctx, d, &pipe, &layout));
    rt_dispatch_desc r = {.pipe = pipe,
                          .layout = layout,
                          .nbufs = d->nbufs,
                          .push = d->push,
                          .push_size = d->push_size,
                          .groups = {d->groups[0], d->groups[1], d->groups[2]},
                          .kernel = spv_table[d->shader].name,
                          .ew = d->ew,
                          .epi = d->epi,
                          .form = d->form,
                          .nspec = d->nspec,
                          .spec = d->spec};
    for (int i = 0; i < d->nbufs; i++) {
        r.bufs[i] = d->bufs[i];
        r.writes[i] = d->writes[i];
    }
    return rt_dispatch(ctx, &r);
}

int pl_get(vkt_ctx *ctx, int shader, const uint32_t *spec, int nspec, int nbufs, VkPipeline *pipe,
           VkPipelineLayout *layout)
{
    pl_dispatch d = {.shader = shader, .nspec = nspec, .nbufs = nbufs};
    memcpy(d.spec, spec, sizeof(uint32_t) * (size_t)nspec);
    return pipeline_for(ctx, &d, pipe, layout);
}

void pl_grid(uint64_t n, uint32_t local, uint32_t groups[3])
{
    uint64_t g = (n + local - 1) / local;
    /* Past 65,535 groups the shaders' grid-stride loop takes over; a larger y
     * would also work, but a bounded grid keeps occupancy predictable. */
    groups[0] = (uint32_t)(g > 65535 ? 65535 : g);
    groups[1] = 1;
    groups[2] = 1;
    if (g == 0)
        groups[0] = 0;
}

void pl_destroy_all(vkt_ctx *ctx)
{
    struct pl_state *p = ctx->pl;
    if (!p)
        return;
    pl_entry *e, *tmp;
    HASH_ITER(hh, p->cache, e, tmp)
    {
        HASH_DEL(p->cache, e);
        vkDestroyPipeline(ctx->device, e->pipeline, NULL);
        free(e);
    }
    for (int i = 0; i < SPV__COUNT; i++)
        if (p->modules[i])
            vkDestroyShaderModule(ctx->device, p->modules[i], NULL);
    for (int i = 0; i <= PL_MAX_BINDINGS; i++) {
        if (p->layouts[i])
            vkDestroyPipelineLayout(ctx->device, p->layouts[i], NULL);
        if (p->set_layouts[i])
            vkDestroyDescriptorSetLayout(ctx->device, p->set_layouts[i], NULL);
    }
    free(p);
    ctx->pl = NULL;
}
