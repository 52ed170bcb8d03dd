/* exec.c — the op runner: the residency model and the one fallback exit.
 *
 * Every public op builds an exec_call and hands it here, so the rules of
 * vkt(3) (RESIDENCY AND FALLBACKS) live in one place: host-resident inputs run on the host
 * reference and report host_resident_op; admitted device inputs run natively; anything a
 * gate refuses is downloaded, computed by the reference and leaves through
 * host_result, called through the PLT so an interposer sees every fallback.
 * A view (reshape) only shares storage: it is counted where its input lives
 * and is never gated, since nothing is allocated, bound or computed. While a
 * graph records, native calls are logged for its launches to count, and a
 * call that would fall back or run on the host is refused. */
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "core.h"

static const char HOST_RESIDENT[] = "inputs are host-resident";

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

/* Whether the native path would need shaderFloat64: any f64 operand, unless
 * the op only moves f64 bits. Checked per call because an f64 input can give
 * a result of another dtype (comparisons, argmax, as_type). */
static bool needs_f64(const exec_call *c)
{
    if (c->f64_as_bits)
        return false;
    if (c->out->dtype == VKT_F64)
        return true;
    for (int i = 0; i < c->nin; i++)
        if (exec_in(c, i)->dtype == VKT_F64)
            return true;
    return false;
}

/* Host views of every input (downloading DEVICE ones) for the reference. */
static int host_inputs(exec_call *c, ref_view *in, void **owned)
{
    for (int i = 0; i < c->nin; i++) {
        const vkt_tensor *t = exec_in(c, i);
        if (t->st->where == VKT_HOST) {
            in[i] = tn_view(t, t->st->host);
            continue;
        }
        owned[i] = malloc(t->nbytes ? t->nbytes : 1);
        if (!owned[i])
            return err_set(VKT_ENOMEM, "vkt_%s: out of host memory for a fallback input",
                           c->info->name);
        in[i] = tn_view(t, owned[i]);
        TRY(tn_download(t, owned[i]));
    }
    return VKT_OK;
}

/* When this thread's current host work began, for vkt_fallback_started_ns: set as an op
 * leaves the GPU (before its inputs come down) and cleared once its result is handed over,
 * so a census can say what a fallback cost, downloads and upload included. */
static _Thread_local uint64_t host_started;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

VKT_API uint64_t vkt_fallback_started_ns(void)
{
    return host_started;
}

static int run_on_host_timed(exec_call *c, bool fallback);

static int run_on_host(exec_call *c, bool fallback)
{
    host_started = now_ns();
    int s = run_on_host_timed(c, fallback);
    host_started = 0;
    return s;
}

static int run_on_host_timed(exec_call *c, bool fallback)
{
    ref_view in_small[EXEC_MAX_INPUTS];
    void *owned_small[EXEC_MAX_INPUTS] = {0};
    ref_view *in = in_small;
    void **owned = owned_small;
    int s = VKT_OK;
    if (c->nin > EXEC_MAX_INPUTS) {
        in = malloc(sizeof *in * (size_t)c->nin);
        owned = calloc((size_t)c->nin, sizeof *owned);
        if (!in || !owned)
            s = err_set(VKT_ENOMEM, "vkt_%s: out of host memory for %d inputs", c->info->name,
                        c->nin);
    }
    if (s == VKT_OK)
        s = host_inputs(c, in, owned);
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
    for (int i = 0; owned && i < c->nin; i++)
        free(owned[i]);
    if (in != in_small) {
        free(in);
        free(owned);
    }
    if (s != VKT_OK) {
        free(data);
        return s;
    }
    if (fallback) {
        s = host_result(c->out, data, c->out->nbytes);
        free(data);
        /* An interposer's host_result may refuse the fallback without calling
         * libvkt's: the op fails with that status, and exec_run frees out. */
        if (s == VKT_EREFUSED)
            return err_set(VKT_EREFUSED,
                           "vkt_%s: the fallback to the host was refused by the host_result exit "
                           "(FBCOUNT_MODE=error)",
                           c->info->name);
        if (s == VKT_OK && c->into)
            s = tn_copy(c->into, c->out);
        if (s == VKT_OK)
            atomic_fetch_add(&c->info->counters->fallback, 1);
        return s;
    }
    tn_adopt_host(c->out, data);
    if (!c->out->st)
        return err_set(VKT_ENOMEM, "vkt_%s: out of host memory", c->info->name);
    if (c->into)
        TRY(tn_copy(c->into, c->out));
    atomic_fetch_add(&c->info->counters->host, 1);
    host_resident_op(c->out, c->out->nbytes);
    return VKT_OK;
}

/* A view runs where its input lives: on the device it is native work (none),
 * on the host it is host-resident work the census must see like any other. */
static int run_view(exec_call *c)
{
    const vkt_tensor *x = c->in[0];
    vkt_ctx *ctx = c->out->ctx;
    if (c->nin != 1 || c->in_list || x->nbytes != c->out->nbytes)
        return err_set(VKT_EINVAL, "vkt_%s: a view takes one input of the result's size",
                       c->info->name);
    if (x->st->where == VKT_HOST && ctx->rec)
        return err_set(VKT_EGRAPH,
                       "vkt_%s: its input is host-resident, and a graph records device work only",
                       c->info->name);
    c->out->st = x->st;
    c->out->st->refs++;
    if (x->st->where == VKT_HOST) {
        ctx->last_gate = HOST_RESIDENT;
        atomic_fetch_add(&c->info->counters->host, 1);
        host_started = now_ns();
        host_resident_op(c->out, c->out->nbytes);
        host_started = 0;
        return VKT_OK;
    }
    ctx->last_gate = NULL;
    if (ctx->rec)
        rt_log_op(ctx, c->info->counters);
    else
        atomic_fetch_add(&c->info->counters->native, 1);
    return VKT_OK;
}

static int run(exec_call *c)
{
    vkt_ctx *ctx = c->out->ctx;
    const char *why = NULL;
    if (c->info->support && c->info->support(c->info, c->dtype, &why) == VKT_UNDEFINED)
        return err_set(VKT_EDTYPE, "vkt_%s: not defined for %s (%s)", c->info->name,
                       vkt_dtype_name(c->dtype), why ? why : "no kernel or reference");
    int nhost = 0;
    for (int i = 0; i < c->nin; i++) {
        const vkt_tensor *t = exec_in(c, i);
        if (t->ctx != ctx)
            return err_set(VKT_ECTX, "vkt_%s: inputs belong to different contexts", c->info->name);
        nhost += t->st->where == VKT_HOST;
    }
    if (c->view)
        return run_view(c);
    if (c->nin > 0 && nhost == c->nin) {
        ctx->last_gate = HOST_RESIDENT;
        if (ctx->rec)
            return err_set(VKT_EGRAPH,
                           "vkt_%s: its inputs are host-resident, and a graph records device work "
                           "only",
                           c->info->name);
        return run_on_host(c, false);
    }

    /* The gates, in the order their reasons are reported. */
    const char *gate = NULL;
    if (c->info->support && c->info->support(c->info, c->dtype, &gate) != VKT_FALLBACK)
        gate = NULL;
    if (!gate)
        gate = c->gate;
    if (!gate && disabled(ctx, c->info->name))
        gate = "disabled by VKT_NATIVE_DISABLE";
    if (!gate && !ctx->has_f64 && needs_f64(c))
        gate = "device lacks shaderFloat64";
    for (int i = 0; i < c->nin && !gate; i++)
        gate = exec_size_gate(ctx, exec_in(c, i));
    if (!gate)
        gate = exec_size_gate(ctx, c->out);
    ctx->last_gate = gate;
    /* A graph replays its recorded work unseen: a fallback in it would leave
     * the census at every launch without a host_result call, so none is
     * recorded. */
    if (gate && ctx->rec)
        return err_set(VKT_EGRAPH,
                       "vkt_%s: would fall back (%s), and a graph records native work only; run it "
                       "outside the graph, or fix the gate",
                       c->info->name, gate);
    if (gate)
        return run_on_host(c, true);

    /* Mixed inputs: host tensors come back up, so the op runs on the GPU. */
    for (int i = 0; i < c->nin; i++) {
        vkt_tensor *t = (vkt_tensor *)exec_in(c, i);
        if (t->st->where == VKT_HOST)
            TRY(tn_move(t, VKT_DEVICE));
    }
    if (c->into) {
        c->out->st = c->into->st;
        c->out->st->refs++;
    } else {
        TRY(tn_alloc_device(c->out));
    }
    ctx->cur_op = c->info->name;
    int s = c->native(c);
    ctx->cur_op = NULL;
    TRY(s);
    if (ctx->rec)
        rt_log_op(ctx, c->info->counters);
    else
        atomic_fetch_add(&c->info->counters->native, 1);
    return VKT_OK;
}

int exec_run(exec_call *c, vkt_tensor **result)
{
    int s = run(c);
    vkt_ctx *ctx = c->out->ctx;
    if (s != VKT_OK && ctx->rec && ctx->rec->status == VKT_OK)
        ctx->rec->status = s; /* the graph would lack this call */
    if (s != VKT_OK) {
        vkt_tensor_free(c->out);
        *result = NULL;
        return s;
    }
    *result = c->out;
    return VKT_OK;
}
