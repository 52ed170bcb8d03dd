/* ggml_graph.c - a split of ggml's scheduler, computed by one backend
 * (ggml_backend_graph_compute_async(backend, graph)). A split on the CPU is host work, read
 * once the call returned, node by node as the CPU backend computes them (it skips view nodes
 * and nodes without GGML_TENSOR_FLAG_COMPUTE, and so does the census):
 *   - a node no GPU backend of the scheduler can run (ggml_backend_dev_supports_op) is a
 *     fallback;
 *   - a node that reads a fallback's result, or work downstream of one, is host-resident;
 *   - any other node is on the host by the model's placement (its weights or input are
 *     there: partial offload, llama.cpp's token embeddings): it is not an event of its own.
 * The split is an event of its own (kind split): its nodes in order, the bytes they wrote,
 * and the time the backend took for it. ggml times a split, never a node: a node's event
 * carries no time. A split read once is kept while its graph holds (ggml_memo.c): a decode
 * that reuses llama.cpp's graph costs a hash of its nodes, not a reading of each.
 * A node's bytes are the elements it writes: its result's, except SET_ROWS (the rows of its
 * source, written into a view of the whole destination, the KV cache) and SET and ACC in
 * place (their second source's elements). A split on a GPU is not the census's. */
#include <stdio.h>
#include <string.h>

#include "ggml.h"

/* Nodes that do no work: ggml's compute skips them (ggml_op_is_empty). */
static bool no_op(const char *desc)
{
    static const char *const none[] = {"NONE", "VIEW", "RESHAPE", "PERMUTE", "TRANSPOSE"};
    for (size_t i = 0; i < sizeof none / sizeof *none; i++)
        if (!strcmp(desc, none[i]))
            return true;
    return false;
}

static bool graph_before(fbc_call *c)
{
    ggml_api *a = c->bm->reader;
    ggml_thread *th = ggml_thread_state();
    void *backend = (void *)c->arg[0], *gpu[GGML_GPUS_MAX + 1];
    c->skip = !th || !ggml_ready(a);
    if (!c->skip) {
        if (th->sched)
            ggml_split_compute(th, backend);
        else
            ggml_taint_clear(th); /* a graph of its own: nothing before it fell back */
        c->skip = !ggml_dev_is_cpu(a, a->get_device(backend)) || ggml_gpus(a, th, gpu) == 0;
    }
    c->t0 = fbc_clock_start();
    return false;
}

/* The bytes a node writes (see the top of the file). */
static size_t written(const ggml_api *a, const void *t, const char *desc, bool layout)
{
    if (!layout)
        return a->nbytes(t);
    int type = ggml_t_type(t);
    const void *rows = ggml_t_src(t, 0), *part = ggml_t_src(t, 1);
    if (!strcmp(desc, "SET_ROWS") && rows)
        return a->row_size(type, ggml_t_ne(t, 0)) * (size_t)a->nrows(rows);
    if ((!strcmp(desc, "SET") || !strcmp(desc, "ACC")) && ggml_t_view_src(t) && part)
        return a->row_size(type, a->nelements(part));
    return a->row_size(type, a->nelements(t));
}

/* Whether t holds a fallback's result or work downstream of one (a view: its source's). */
static bool from_fallback(const ggml_thread *th, const void *t)
{
    const void *v = ggml_t_view_src(t);
    return ggml_tainted(th, t) || (v && ggml_tainted(th, v));
}

static bool reads_fallback(const ggml_thread *th, const void *t)
{
    for (int i = 0; i < GGML_SRC_MAX; i++) {
        const void *s = ggml_t_src(t, i);
        if (s && from_fallback(th, s))
            return true;
    }
    return false;
}

/* A split's nodes in order, each run of one op once with its length ("MUL_MAT×3"), cut
 * short past the room with how many nodes the split has. */
typedef struct {
    char text[1024];
    size_t len;
    const char *run_op;
    int run, nodes;
    bool cut;
} label;

static void label_flush(label *l)
{
    if (!l->run || l->cut)
        return;
    char part[96];
    int n = l->run > 1 ? snprintf(part, sizeof part, "%s%.60s\xc3\x97%d", l->len ? " " : "",
                                  l->run_op, l->run)
                       : snprintf(part, sizeof part, "%s%.60s", l->len ? " " : "", l->run_op);
    if (l->len + (size_t)n + 24 >= sizeof l->text) {
        l->cut = true;
        return;
    }
    memcpy(l->text + l->len, part, (size_t)n + 1);
    l->len += (size_t)n;
}

static void label_add(label *l, const char *op)
{
    l->nodes++;
    if (l->run && !strcmp(op, l->run_op)) {
        l->run++;
        return;
    }
    label_flush(l);
    l->run_op = op;
    l->run = 1;
}

/* The split's name: "CPU (placement): GET_ROWS", or "(fallback)" where a node of it fell
 * back or depends on one that did; interned. */
static const char *split_name(const ggml_api *a, void *backend, label *l, bool fallback)
{
    label_flush(l);
    const char *dev = a->dev_name(a->get_device(backend));
    char op[1100];
    snprintf(op, sizeof op, "%.40s (%s): %s%s", dev ? dev : "CPU",
             fallback ? "fallback" : "placement", l->text, l->cut ? " \xe2\x80\xa6" : "");
    if (l->cut)
        snprintf(op + strlen(op), sizeof op - strlen(op), " (%d nodes)", l->nodes);
    return fbc_record_op(op);
}

/* Reads a split's nodes into s (see the top of the file), tainting what falls back; false
 * when out of memory (s is then not to be kept). */
static bool read_split(fbc_call *c, ggml_thread *th, void *graph, ggml_split *s)
{
    const ggml_api *a = c->bm->reader;
    void *gpu[GGML_GPUS_MAX + 1];
    ggml_gpus(a, th, gpu);
    label l = {.len = 0};
    bool fallback = false, kept = true;
    for (int i = 0, n = a->n_nodes(graph); i < n; i++) {
        const void *t = a->node(graph, i);
        const char *desc = t ? a->op_desc(t) : NULL;
        bool layout = t && ggml_tensor_layout(a, t);
        if (!desc || no_op(desc) || (layout && !(ggml_t_flags(t) & GGML_FLAG_COMPUTE)))
            continue;
        bool could = false;
        for (int g = 0; gpu[g] && !could; g++)
            could = a->dev_supports_op(gpu[g], t);
        size_t bytes = written(a, t, desc, layout);
        if (!could || (layout && reads_fallback(th, t))) {
            if (layout)
                ggml_taint_add(th, t);
            kept &= ggml_memo_push(s, could ? FBC_HOST : FBC_FALLBACK, fbc_record_op(desc), bytes,
                                   layout ? t : NULL);
            fallback = true;
        }
        label_add(&l, desc);
        s->bytes += bytes;
    }
    if (l.nodes)
        s->op = split_name(a, (void *)c->arg[0], &l, fallback);
    return kept;
}

/* Counts what s holds: its nodes' events (no time of their own), then the split itself with
 * the time the backend took for it. */
static void count(fbc_call *c, ggml_thread *th, const ggml_split *s, uint64_t ns)
{
    for (uint32_t i = 0; i < s->nev; i++) {
        if (s->ev[i].t)
            ggml_taint_add(th, s->ev[i].t);
        c->ev->kind = s->ev[i].kind;
        c->ev->op = (uintptr_t)s->ev[i].op;
        c->ev->nbytes = s->ev[i].bytes;
        c->ev->ns = 0;
        fbc_reader_count(c);
    }
    if (!s->op)
        return;
    c->ev->kind = FBC_SPLIT;
    c->ev->op = (uintptr_t)s->op;
    c->ev->nbytes = s->bytes;
    c->ev->ns = ns;
    fbc_reader_count(c);
}

static void graph_after(fbc_call *c, uint64_t ns)
{
    if (c->skip)
        return;
    const ggml_api *a = c->bm->reader;
    ggml_thread *th = ggml_thread_state();
    void *graph = (void *)c->arg[1];
    uint64_t h = ggml_graph_hash(a, graph, th->ntainted);
    ggml_split *s = ggml_memo_find(th, graph, h);
    if (!s) {
        s = ggml_memo_take(th, graph);
        if (read_split(c, th, graph, s))
            s->hash = h;
    }
    count(c, th, s, ns);
}

const fbc_reader_ops FBC_READER_OPS(GGML_GRAPH) = {ggml_bind, graph_before, graph_after,
                                                   fbc_reader_no_refuse, ggml_stack};
