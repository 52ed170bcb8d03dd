/* ggml.c - ggml's exits (llama.cpp's tensor library), read through ggml's own exported
 * functions:
 *   ggml_backend_graph_compute_async(backend, graph): a split of the scheduler's graph. On a
 *     CPU device every node that does work is an event: a fallback where no GPU device can
 *     run its op (ggml_backend_dev_supports_op), host-resident work where one could (it ran on
 *     the CPU because its input was there). Counted after the call, each node with its share
 *     of the split's time; a split on a GPU device is not the census's.
 *   ggml_backend_tensor_copy(src, dst) and ggml_backend_tensor_copy_async(backend_src,
 *     backend_dst, src, dst): bytes that crossed between devices, named "CPU -> Vulkan0" by
 *     the buffers' names; a copy between two host buffers crosses nothing.
 * Nothing is counted in a process without a GPU device: there is nothing to fall back from.
 * ggml has no error path for a refused fallback: FBCOUNT_MODE=error aborts there. */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readers.h"

/* enum ggml_backend_dev_type: CPU is 0 in every version; GPU 1; 2 is an integrated GPU in
 * newer ggml and an accelerator used with the CPU (BLAS) in older ones. */
#define DEV_CPU 0

typedef struct {
    void *(*get_device)(void *backend);
    int (*dev_type)(void *dev);
    bool (*dev_supports_op)(void *dev, const void *op);
    size_t (*dev_count)(void);
    void *(*dev_get)(size_t i);
    int (*n_nodes)(void *graph);
    void *(*node)(void *graph, int i);
    const char *(*op_desc)(const void *t);
    size_t (*nbytes)(const void *t);
    bool (*buffer_is_host)(void *buf);
    const char *(*buffer_name)(void *buf);
} api;

/* struct ggml_tensor begins { enum ggml_type type; struct ggml_backend_buffer *buffer; ... }
 * in every ggml with the backend API. */
typedef struct {
    int type;
    void *buffer;
} tensor_head;

#define GET(h, name, dst)                                                                       \
    do {                                                                                        \
        void *p_ = (h) ? dlsym(h, name) : NULL;                                                 \
        memcpy(&(dst), &p_, sizeof p_);                                                         \
    } while (0)

/* The device registry lives in libggml (libggml.so, or a build's renamed copy), which the
 * base library does not depend on: looked for among the loaded modules. */
static int find_registry(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    api *a = data;
    const char *slash = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    const char *base = slash ? slash + 1 : info->dlpi_name;
    if (!base || strncmp(base, "libggml", 7))
        return 0;
    void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return 0;
    GET(h, "ggml_backend_dev_count", a->dev_count);
    GET(h, "ggml_backend_dev_get", a->dev_get);
    dlclose(h); /* the module stays: it was loaded before this looked */
    return a->dev_count && a->dev_get;
}

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;

/* Looked for again at later calls while missing: a program may load it after the base. */
static void registry(api *a)
{
    if (__atomic_load_n(&a->dev_get, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&registry_lock);
    api r = {0};
    GET(RTLD_DEFAULT, "ggml_backend_dev_count", r.dev_count);
    GET(RTLD_DEFAULT, "ggml_backend_dev_get", r.dev_get);
    if (!r.dev_count || !r.dev_get)
        dl_iterate_phdr(find_registry, &r);
    if (r.dev_count && r.dev_get && !a->dev_get) {
        a->dev_count = r.dev_count;
        __atomic_store_n(&a->dev_get, r.dev_get, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&registry_lock);
}

static void ggml_bind(fbc_bmod *bm)
{
    api *a = calloc(1, sizeof *a);
    void *h = dlopen(bm->path, RTLD_LAZY | RTLD_NOLOAD); /* kept: the backend stays mapped */
    if (!a || !h) {
        free(a);
        snprintf(bm->note, sizeof bm->note, "cannot read ggml's calls (out of memory)");
        return;
    }
    GET(h, "ggml_backend_get_device", a->get_device);
    GET(h, "ggml_backend_dev_type", a->dev_type);
    GET(h, "ggml_backend_dev_supports_op", a->dev_supports_op);
    GET(h, "ggml_graph_n_nodes", a->n_nodes);
    GET(h, "ggml_graph_node", a->node);
    GET(h, "ggml_op_desc", a->op_desc);
    GET(h, "ggml_nbytes", a->nbytes);
    GET(h, "ggml_backend_buffer_is_host", a->buffer_is_host);
    GET(h, "ggml_backend_buffer_name", a->buffer_name);
    registry(a);
    bm->reader = a;
    bm->sizes = true;
    snprintf(bm->note, sizeof bm->note, "%s",
             a->get_device && a->dev_type && a->n_nodes && a->node && a->op_desc && a->nbytes
                 ? "graph splits and tensor copies"
                 : "this ggml lacks the functions the reader needs: nothing is counted");
}

static bool ready(const api *a)
{
    return a && a->get_device && a->dev_type && a->dev_supports_op && a->n_nodes && a->node &&
           a->op_desc && a->nbytes && __atomic_load_n(&a->dev_get, __ATOMIC_ACQUIRE);
}

/* The GPU devices (there are a few): NULL-terminated in out. */
static size_t gpus(const api *a, void **out, size_t cap)
{
    size_t n = 0, count = a->dev_count();
    for (size_t i = 0; i < count && n + 1 < cap; i++) {
        void *d = a->dev_get(i);
        if (d && a->dev_type(d) != DEV_CPU)
            out[n++] = d;
    }
    out[n] = NULL;
    return n;
}

static bool graph_before(fbc_call *c)
{
    api *a = c->bm->reader;
    if (a)
        registry(a);
    void *gpu[16];
    c->skip = !ready(a) || a->dev_type(a->get_device((void *)c->arg[0])) != DEV_CPU ||
              gpus(a, gpu, 16) == 0;
    c->t0 = fbc_clock_start();
    return false;
}

/* Nodes that do no work: ggml's compute skips them. */
static bool no_op(const char *desc)
{
    static const char *const none[] = {"NONE", "VIEW", "RESHAPE", "PERMUTE", "TRANSPOSE"};
    for (size_t i = 0; i < sizeof none / sizeof *none; i++)
        if (!strcmp(desc, none[i]))
            return true;
    return false;
}

static void graph_after(fbc_call *c, uint64_t ns)
{
    if (c->skip)
        return;
    const api *a = c->bm->reader;
    void *graph = (void *)c->arg[1], *gpu[16];
    gpus(a, gpu, 16);
    int n = a->n_nodes(graph), work = 0;
    for (int i = 0; i < n; i++) {
        const void *t = a->node(graph, i);
        work += t && !no_op(a->op_desc(t));
    }
    uint64_t share = work ? ns / (uint64_t)work : 0;
    for (int i = 0; i < n; i++) {
        const void *t = a->node(graph, i);
        const char *desc = t ? a->op_desc(t) : NULL;
        if (!desc || no_op(desc))
            continue;
        bool could = false;
        for (int g = 0; gpu[g] && !could; g++)
            could = a->dev_supports_op(gpu[g], t);
        c->ev->kind = could ? FBC_HOST : FBC_FALLBACK;
        c->ev->op = (uintptr_t)fbc_record_op(desc);
        c->ev->nbytes = a->nbytes(t);
        c->ev->ns = share;
        fbc_reader_count(c);
    }
}

static void copy(fbc_call *c, const void *src, const void *dst)
{
    const api *a = c->bm->reader;
    if (!a || !a->nbytes || !a->buffer_is_host || !a->buffer_name || !src || !dst)
        return;
    void *from = ((const tensor_head *)src)->buffer, *to = ((const tensor_head *)dst)->buffer;
    if (!from || !to || (a->buffer_is_host(from) && a->buffer_is_host(to)))
        return;
    char op[160];
    snprintf(op, sizeof op, "%.70s -> %.70s", a->buffer_name(from), a->buffer_name(to));
    c->ev->kind = FBC_TRANSFER;
    c->ev->op = (uintptr_t)fbc_record_op(op);
    c->ev->nbytes = a->nbytes(src);
    fbc_reader_count(c);
}

static bool copy_before(fbc_call *c)
{
    c->t0 = fbc_clock_start();
    return false;
}

static void copy_after(fbc_call *c, uint64_t ns)
{
    c->ev->ns = ns;
    copy(c, (const void *)c->arg[0], (const void *)c->arg[1]);
}

static void copy_async_after(fbc_call *c, uint64_t ns)
{
    c->ev->ns = ns;
    copy(c, (const void *)c->arg[2], (const void *)c->arg[3]);
}

const fbc_reader_ops fbc_read_ggml_graph = {ggml_bind, graph_before, graph_after, fbc_reader_no_refuse};
const fbc_reader_ops fbc_read_ggml_copy = {ggml_bind, copy_before, copy_after, fbc_reader_no_refuse};
const fbc_reader_ops fbc_read_ggml_copy_async = {ggml_bind, copy_before, copy_async_after,
                                                 fbc_reader_no_refuse};
