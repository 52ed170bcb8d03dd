/* exec.c — the op runner: the residency model and the one fallback exit.
 *
 * Every public op builds an exec_call and hands it here, so the rules of
 * DESIGN.md live in one place: host-resident inputs run on the host reference
 * and report host_resident_op; admitted device inputs run natively; anything a
 * gate refuses is downloaded, computed by the reference and leaves through
 * host_result, called through the PLT so an interposer sees every fallback. */
#include <stdlib.h>
#include <string.h>

#include "core.h"

static bool disabled(const vkt_ctx *ctx, const char *name)
{
    if (!ctx->native_disable)
        return false;
    if (strstr(ctx->native_disable, ",all,"))
        return true;
    char key[64];
    size_t n = strlen(name);
    if (n + 3 > sizeof key)
        return false;
    key[0] = ',';
    memcpy(key + 1, name, n);
    key[n + 1] = ',';
    key[n + 2] = '\0';
    return strstr(ctx->native_disable, key) != NULL;
}

const char *exec_size_gate(const vkt_ctx *ctx, const vkt_tensor *t)
{
    if (t->nbytes > ctx->props.limits.maxStorageBufferRange)
        return "tensor larger than maxStorageBufferRange";
    if (t->numel > 0x7fffffffu)
        return "more than 2^31 elements";
    return NULL;
}

static void release_views(void **bufs, int n)
{
    for (int i = 0; i < n; i++)
        free(bufs[i]);
}

static int run_on_host(exec_call *c, bool fallback)
{
    ref_view in[EXEC_MAX_INPUTS];
    void *owned[EXEC_MAX_INPUTS] = {0};
    int s = VKT_OK;
    for (int i = 0; i < c->nin && s == VKT_OK; i++) {
        const vkt_tensor *t = c->in[i];
        if (t->st->where == VKT_HOST) {
            in[i] = tn_view(t, t->st->host);
            continue;
        }
        owned[i] = malloc(t->nbytes ? t->nbytes : 1);
        if (!owned[i])
            s = err_set(VKT_ENOMEM, "vkt_%s: out of host memory for a fallback input", c->info->name);
        else
            s = tn_download(t, owned[i]);
        in[i] = tn_view(t, owned[i]);
    }
    void *data = NULL;
    if (s == VKT_OK) {
        data = malloc(c->out->nbytes ? c->out->nbytes : 1);
        if (!data)
            s = err_set(VKT_ENOMEM, "vkt_%s: out of host memory for the result", c->info->name);
    }
    if (s == VKT_OK) {
        ref_view out = tn_view(c->out, data);
        s = c->host(c, in, &out);
    }
    release_views(owned, c->nin);
    if (s != VKT_OK) {
        free(data);
        return s;
    }
    if (fallback) {
        s = host_result(c->out, data, c->out->nbytes);
        free(data);
        if (s == VKT_OK)
            atomic_fetch_add(&c->info->counters->fallback, 1);
        return s;
    }
    tn_adopt_host(c->out, data);
    if (!c->out->st)
        return err_set(VKT_ENOMEM, "vkt_%s: out of host memory", c->info->name);
    atomic_fetch_add(&c->info->counters->host, 1);
    host_resident_op(c->out, c->out->nbytes);
    return VKT_OK;
}

static int run(exec_call *c)
{
    vkt_ctx *ctx = c->out->ctx;
    int nhost = 0;
    for (int i = 0; i < c->nin; i++) {
        if (c->in[i]->ctx != ctx)
            return err_set(VKT_ECTX, "vkt_%s: inputs belong to different contexts", c->info->name);
        nhost += c->in[i]->st->where == VKT_HOST;
    }
    if (c->nin > 0 && nhost == c->nin)
        return run_on_host(c, false);

    const char *gate = c->gate;
    if (!gate && disabled(ctx, c->info->name))
        gate = "disabled by VKT_NATIVE_DISABLE";
    if (!gate && c->out->dtype == VKT_F64 && !ctx->has_f64)
        gate = "device lacks shaderFloat64";
    for (int i = 0; i < c->nin && !gate; i++)
        gate = exec_size_gate(ctx, c->in[i]);
    if (!gate)
        gate = exec_size_gate(ctx, c->out);
    if (gate)
        return run_on_host(c, true);

    /* Mixed inputs: host tensors come back up, so the op runs on the GPU. */
    for (int i = 0; i < c->nin; i++)
        if (c->in[i]->st->where == VKT_HOST)
            TRY(tn_move((vkt_tensor *)c->in[i], VKT_DEVICE));
    TRY(tn_alloc_device(c->out));
    TRY(c->native(c));
    atomic_fetch_add(&c->info->counters->native, 1);
    return VKT_OK;
}

int exec_run(exec_call *c, vkt_tensor **result)
{
    int s = run(c);
    if (s != VKT_OK) {
        vkt_tensor_free(c->out);
        *result = NULL;
        return s;
    }
    *result = c->out;
    return VKT_OK;
}
