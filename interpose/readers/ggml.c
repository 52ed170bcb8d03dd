/* ggml.c - what the readers of ggml's exits (llama.cpp's tensor library) share: the functions
 * they bind, the checked reads of ggml's structs, the names of places and devices, and the
 * state of the scheduler's compute on each thread (its GPU backends, its splits' numbering,
 * the tensors downstream of a fallback). The scheduler's compute is read in ggml_sched.c,
 * its splits in ggml_graph.c, its copies in ggml_copy.c.
 * Nothing is counted in a process without a GPU device: there is nothing to fall back from.
 * ggml has no error path for a refused fallback: FBCOUNT_MODE=error aborts there. */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"

/* enum ggml_backend_dev_type: CPU is 0 in every version; GPU 1; 2 is an integrated GPU in
 * newer ggml and an accelerator used with the CPU (BLAS) in older ones. */
enum { DEV_CPU = 0, DEV_GPU = 1, DEV_IGPU = 2 };

#define GET(h, name, dst)                                                                          \
    do {                                                                                           \
        void *p_ = (h) ? dlsym(h, name) : NULL;                                                    \
        memcpy(&(dst), &p_, sizeof p_);                                                            \
    } while (0)

/* The device registry lives in libggml (libggml.so, or a build's renamed copy), which the
 * base library does not depend on: looked for among the loaded modules. */
static int find_registry(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    ggml_api *a = data;
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
static void registry(ggml_api *a)
{
    if (__atomic_load_n(&a->dev_get, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&registry_lock);
    ggml_api r = {0};
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

/* The base library's functions the reader calls: field, then ggml's name. */
#define GGML_BOUND(X)                                                                              \
    X(get_device, "ggml_backend_get_device")                                                       \
    X(dev_type, "ggml_backend_dev_type")                                                           \
    X(dev_name, "ggml_backend_dev_name")                                                           \
    X(dev_supports_op, "ggml_backend_dev_supports_op")                                             \
    X(guid, "ggml_backend_guid")                                                                   \
    X(sched_n_backends, "ggml_backend_sched_get_n_backends")                                       \
    X(sched_backend, "ggml_backend_sched_get_backend")                                             \
    X(n_nodes, "ggml_graph_n_nodes")                                                               \
    X(node, "ggml_graph_node")                                                                     \
    X(op_desc, "ggml_op_desc")                                                                     \
    X(nbytes, "ggml_nbytes")                                                                       \
    X(nelements, "ggml_nelements")                                                                 \
    X(nrows, "ggml_nrows")                                                                         \
    X(row_size, "ggml_row_size")                                                                   \
    X(get_name, "ggml_get_name")                                                                   \
    X(get_data, "ggml_get_data")                                                                   \
    X(buffer_is_host, "ggml_backend_buffer_is_host")                                               \
    X(buffer_name, "ggml_backend_buffer_name")                                                     \
    X(buffer_type, "ggml_backend_buffer_get_type")                                                 \
    X(buft_device, "ggml_backend_buft_get_device")

void ggml_bind(fbc_bmod *bm)
{
    ggml_api *a = calloc(1, sizeof *a);
    void *h = dlopen(bm->path, RTLD_LAZY | RTLD_NOLOAD); /* kept: the backend stays mapped */
    if (!a || !h) {
        free(a);
        snprintf(bm->note, sizeof bm->note, "cannot read ggml's calls (out of memory)");
        return;
    }
    int missing = 0;
#define X_GET(field, name)                                                                         \
    GET(h, name, a->field);                                                                        \
    missing += !a->field;
    GGML_BOUND(X_GET)
#undef X_GET
    registry(a);
    bm->reader = a;
    bm->sizes = true;
    snprintf(bm->note, sizeof bm->note, "%s",
             !missing ? "graph splits and every copy of the scheduler's"
                      : "this ggml lacks functions the reader needs: nothing is counted");
}

bool ggml_ready(const ggml_api *a)
{
    if (!a)
        return false;
    registry((ggml_api *)a);
    bool all = true;
#define X_HAS(field, name) all = all && a->field;
    GGML_BOUND(X_HAS)
#undef X_HAS
    return all && __atomic_load_n(&a->dev_get, __ATOMIC_ACQUIRE);
}

/* ---- struct ggml_tensor ----------------------------------------------------------------- */

/* Offsets in the pinned build: enum ggml_type type; buffer; int64_t ne[4]; size_t nb[4];
 * enum ggml_op op; int32_t op_params[16]; int32_t flags; src[10]; view_src; view_offs; data;
 * char name[64]. */
enum {
    T_TYPE = 0,
    T_BUFFER = 8,
    T_NE = 16,
    T_OP = 80,
    T_FLAGS = 148,
    T_SRC = 152,
    T_VIEW_SRC = 232,
    T_DATA = 248,
    T_NAME = 256
};

#define AT(t, off, type) (*(type const *)((const char *)(t) + (off)))

bool ggml_tensor_layout(const ggml_api *a, const void *t)
{
    static int state; /* 0 unknown, 1 the pinned layout, -1 another */
    int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (s || !t)
        return s > 0;
    int64_t n = 1;
    for (int i = 0; i < 4; i++)
        n *= AT(t, T_NE + 8 * i, int64_t);
    bool ok = a->get_name(t) == (const char *)t + T_NAME &&
              a->get_data(t) == AT(t, T_DATA, void *) && a->nelements(t) == n;
    if (!ok)
        fbc_warn("ggml's tensors are not laid out as the pinned build's: the bytes SET_ROWS "
                 "and SET write, nodes the CPU skips and work downstream of a fallback are "
                 "not read");
    __atomic_store_n(&state, ok ? 1 : -1, __ATOMIC_RELEASE);
    return ok;
}

int ggml_t_type(const void *t)
{
    return AT(t, T_TYPE, int);
}
void *ggml_t_buffer(const void *t)
{
    return AT(t, T_BUFFER, void *);
}
int ggml_t_op(const void *t)
{
    return AT(t, T_OP, int);
}
int64_t ggml_t_ne(const void *t, int i)
{
    return AT(t, T_NE + 8 * i, int64_t);
}
int32_t ggml_t_flags(const void *t)
{
    return AT(t, T_FLAGS, int32_t);
}
const void *ggml_t_src(const void *t, int i)
{
    return AT(t, T_SRC + 8 * i, const void *);
}
const void *ggml_t_view_src(const void *t)
{
    return AT(t, T_VIEW_SRC, const void *);
}

/* ---- places and devices ------------------------------------------------------------------ */

const char *ggml_place(const ggml_api *a, void *buffer)
{
    if (!buffer)
        return "(none)";
    if (a->buffer_is_host(buffer))
        return "host";
    void *buft = a->buffer_type(buffer);
    void *dev = buft ? a->buft_device(buft) : NULL;
    const char *name = dev ? a->dev_name(dev) : NULL;
    return name ? name : a->buffer_name(buffer);
}

bool ggml_dev_is_gpu(const ggml_api *a, void *dev)
{
    int t = dev ? a->dev_type(dev) : DEV_CPU;
    return t == DEV_GPU || t == DEV_IGPU;
}

bool ggml_dev_is_cpu(const ggml_api *a, void *dev)
{
    return dev && a->dev_type(dev) == DEV_CPU;
}

int ggml_gpus(const ggml_api *a, const ggml_thread *th, void **out)
{
    int n = 0;
    if (th && th->sched) {
        for (; n < th->ngpu; n++)
            out[n] = th->gpu[n];
    } else {
        size_t count = a->dev_count();
        for (size_t i = 0; i < count && n < GGML_GPUS_MAX; i++) {
            void *d = a->dev_get(i);
            if (ggml_dev_is_gpu(a, d))
                out[n++] = d;
        }
    }
    out[n] = NULL;
    return n;
}

/* ---- the thread's scheduler compute ------------------------------------------------------ */

static pthread_key_t thread_key;
static pthread_once_t thread_once = PTHREAD_ONCE_INIT;
static __thread ggml_thread *thread_state;

static void thread_free(void *p)
{
    ggml_thread *th = p;
    free(th->tainted);
    for (int i = 0; i < GGML_MEMO; i++)
        free(th->memo[i].ev);
    free(th);
}

static void thread_key_make(void)
{
    pthread_key_create(&thread_key, thread_free);
}

ggml_thread *ggml_thread_state(void)
{
    if (thread_state)
        return thread_state;
    pthread_once(&thread_once, thread_key_make);
    ggml_thread *th = calloc(1, sizeof *th);
    if (th)
        pthread_setspecific(thread_key, th);
    return thread_state = th;
}

bool ggml_stack(fbc_call *c)
{
    ggml_thread *th = thread_state; /* made by the scheduler's call, if in one */
    if (!th || !th->sched)
        return false;
    fbc_record_within(c->ev, (uintptr_t)c->fn, &th->outer);
    return true;
}

int ggml_split_copy(ggml_thread *th)
{
    if (th->state == SPLIT_COMPUTED)
        th->split++;
    th->state = SPLIT_COPYING;
    return th->split;
}

int ggml_split_compute(ggml_thread *th, void *backend)
{
    if (th->state == SPLIT_COMPUTED && backend != th->last_backend)
        th->split++;
    th->state = SPLIT_COMPUTED;
    th->last_backend = backend;
    return th->split;
}

void ggml_taint_clear(ggml_thread *th)
{
    if (th->ntainted && th->tainted)
        memset(th->tainted, 0, th->cap * sizeof *th->tainted);
    th->ntainted = 0;
}

static size_t slot(const void *t, size_t cap)
{
    uint64_t h = (uint64_t)(uintptr_t)t * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 32) & (cap - 1);
}

static void taint_put(const void **set, size_t cap, const void *t)
{
    size_t i = slot(t, cap);
    while (set[i] && set[i] != t)
        i = (i + 1) & (cap - 1);
    set[i] = t;
}

void ggml_taint_add(ggml_thread *th, const void *t)
{
    if (ggml_tainted(th, t))
        return;
    if (2 * (th->ntainted + 1) > th->cap) {
        size_t cap = th->cap ? 2 * th->cap : 256;
        const void **grown = calloc(cap, sizeof *grown);
        if (!grown)
            return; /* out of memory: the work after it is counted as placement's */
        for (size_t i = 0; i < th->cap; i++)
            if (th->tainted[i])
                taint_put(grown, cap, th->tainted[i]);
        free(th->tainted);
        th->tainted = grown;
        th->cap = cap;
    }
    taint_put(th->tainted, th->cap, t);
    th->ntainted++;
}

bool ggml_tainted(const ggml_thread *th, const void *t)
{
    if (!th->ntainted || !t)
        return false;
    for (size_t i = slot(t, th->cap); th->tainted[i]; i = (i + 1) & (th->cap - 1))
        if (th->tainted[i] == t)
            return true;
    return false;
}
