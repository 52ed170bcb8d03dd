/* graph.c - vkt.Graph: a recorded step (vkt_graph) replayed by launch(), and the tensors it
 * binds, kept by the context until the graph goes. */
#include "vpy.h"

vpy_graph *vpy_graph_new(vpy_ctx *c)
{
    vpy_graph *g = PyObject_New(vpy_graph, &vpy_GraphType);
    if (!g)
        return NULL;
    g->ctx = (vpy_ctx *)Py_NewRef(c);
    g->rec = NULL;
    g->state = VPY_RECORDING;
    return g;
}

static const char *describe(vpy_graph *g)
{
    if (!g->ctx->h)
        return "closed with its context";
    switch (g->state) {
    case VPY_RECORDING: return "still being recorded";
    case VPY_FAILED: return "a failed recording";
    case VPY_FREED: return "freed";
    case VPY_READY: return g->rec ? "recorded" : "freed";
    case VPY_CLOSED: break;
    }
    return "closed with its context";
}

static bool is_freed(vpy_graph *g)
{
    if (g->state == VPY_RECORDING)
        return false;
    return g->state != VPY_READY || !g->ctx->h || !g->rec;
}

/* Takes the context's mutex for a use of the recorded graph: 0, or -1 with the error saying
 * why there is none (the mutex released). */
static int enter_ready(vpy_graph *g)
{
    if (vpy_enter(g->ctx) < 0)
        return -1;
    if (g->state != VPY_READY || !g->rec) {
        vpy_leave(g->ctx);
        vpy_error(VKT_EGRAPH, "the graph is %s%s", describe(g),
                  g->state == VPY_RECORDING ? "; leave its with block first" : "");
        return -1;
    }
    return 0;
}

/* Ends the recording: with keep, a graph of it (or the error of a call that failed during
 * it); without, none (the with block raised, and its own exception says why). */
static PyObject *graph_end(vpy_graph *g, bool keep)
{
    vpy_ctx *c = g->ctx;
    if (c->rec != g)
        return vpy_error(VKT_EGRAPH, "the graph is %s, not being recorded", describe(g));
    /* Tensors collected during the recording go now: the graph keeps their memory. */
    if (vpy_enter(c) < 0)
        return NULL;
    if (c->rec != g) {
        vpy_leave(c);
        return vpy_error(VKT_EGRAPH, "the graph is %s, not being recorded", describe(g));
    }
    vkt_graph *out = NULL;
    int st = vk.vkt_graph_end(c->h, &out);
    c->rec = NULL;
    vpy_grec *r = NULL;
    vpy_failure f = {.status = 0};
    if (keep && st)
        vpy_failure_take(&f, st);
    else if (keep)
        r = PyMem_RawCalloc(1, sizeof *r);
    if (r && vpy_notes_end(c, r) < 0) {
        PyMem_RawFree(r);
        r = NULL;
    } else if (!r) {
        vpy_notes_end(c, NULL);
    }
    if (r) {
        r->h = out;
        r->obj = g;
        r->prev = &c->graphs;
        r->next = c->graphs.next;
        c->graphs.next->prev = r;
        c->graphs.next = r;
        g->rec = r;
        g->state = VPY_READY;
    } else {
        vk.vkt_graph_free(out);
        g->state = VPY_FAILED;
    }
    vpy_leave(c);
    Py_DECREF(g); /* the context's reference while it recorded */
    if (keep && !r)
        return f.status ? vpy_failure_raise(&f) : PyErr_NoMemory();
    Py_RETURN_NONE;
}

static PyObject *graph_end_m(vpy_graph *g, PyObject *unused)
{
    (void)unused;
    return graph_end(g, true);
}

static PyObject *graph_enter_m(PyObject *g, PyObject *unused)
{
    (void)unused;
    return Py_NewRef(g);
}

static PyObject *graph_exit_m(vpy_graph *g, PyObject *const *args, Py_ssize_t nargs)
{
    if (g->state == VPY_RECORDING) {
        PyObject *r = graph_end(g, nargs < 1 || args[0] == Py_None);
        if (!r)
            return NULL;
        Py_DECREF(r);
    }
    Py_RETURN_FALSE;
}

static PyObject *graph_launch_m(vpy_graph *g, PyObject *unused)
{
    (void)unused;
    if (enter_ready(g) < 0)
        return NULL;
    int st;
    vkt_graph *h = g->rec->h;
    Py_BEGIN_ALLOW_THREADS st = vk.vkt_graph_launch(h);
    Py_END_ALLOW_THREADS return vpy_leave_status(g->ctx, st);
}

static PyObject *graph_free_m(vpy_graph *g, PyObject *unused)
{
    (void)unused;
    vpy_ctx *c = g->ctx;
    if (g->state == VPY_RECORDING)
        return vpy_error(VKT_EGRAPH, "the graph is still being recorded; end it first");
    if (g->state == VPY_READY && c->h && g->rec) {
        vpy_lock(c);
        if (c->h && g->rec)
            vpy_grec_free(c, g->rec);
        vpy_leave(c);
    }
    if (g->state == VPY_READY)
        g->state = VPY_FREED;
    Py_RETURN_NONE;
}

static PyObject *graph_count(vpy_graph *g, size_t (*fn)(const vkt_graph *))
{
    if (enter_ready(g) < 0)
        return NULL;
    size_t n = fn(g->rec->h);
    vpy_leave(g->ctx);
    return PyLong_FromSize_t(n);
}

static PyObject *graph_dispatches_get(vpy_graph *g, void *closure)
{
    (void)closure;
    return graph_count(g, vk.vkt_graph_dispatches);
}

static PyObject *graph_levels_get(vpy_graph *g, void *closure)
{
    (void)closure;
    return graph_count(g, vk.vkt_graph_levels);
}

static PyObject *graph_context_get(vpy_graph *g, void *closure)
{
    (void)closure;
    return Py_NewRef(g->ctx);
}

static PyObject *graph_freed_get(vpy_graph *g, void *closure)
{
    (void)closure;
    return PyBool_FromLong(is_freed(g));
}

static PyObject *graph_repr(vpy_graph *g)
{
    if (g->state == VPY_READY && !is_freed(g)) {
        PyObject *n = graph_count(g, vk.vkt_graph_dispatches);
        if (!n)
            return NULL;
        PyObject *s = PyUnicode_FromFormat("<vkt.Graph %S dispatches>", n);
        Py_DECREF(n);
        return s;
    }
    return PyUnicode_FromFormat("<vkt.Graph %s>", describe(g));
}

static void graph_dealloc(vpy_graph *g)
{
    vpy_ctx *c = g->ctx;
    vpy_grec *r = g->rec;
    if (r && c->h) {
        r->obj = NULL;
        if (pthread_mutex_trylock(&c->mu) == 0) {
            vpy_grec_free(c, r);
            vpy_leave(c);
        } else {
            vpy_ptrs_push(&c->pending_graphs, r); /* out of memory: freed with the context */
        }
    }
    Py_DECREF(c);
    PyObject_Free(g);
}

static PyMethodDef graph_methods[] = {
    {"end", (PyCFunction)graph_end_m, METH_NOARGS,
     "end($self, /)\n--\n\nEnds the recording (the with block does it). Raises vkt.Error when a "
     "call failed "
     "during\nthe recording: the graph would lack that call's work, so there is none."},
    {"__enter__", graph_enter_m, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))graph_exit_m, METH_FASTCALL, NULL},
    {"launch", (PyCFunction)graph_launch_m, METH_NOARGS,
     "launch($self, /)\n--\n\nRuns the recorded ops once, in one submission, and waits for them (a "
     "sync "
     "point)."},
    {"free", (PyCFunction)graph_free_m, METH_NOARGS,
     "free($self, /)\n--\n\nFrees the graph now, and the tensors only it still kept; a second free "
     "is a "
     "no-op."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef graph_getset[] = {
    {"dispatches", (getter)graph_dispatches_get, NULL, "How many dispatches a launch replays.",
     NULL},
    {"levels", (getter)graph_levels_get, NULL,
     "How many dependency levels a launch runs its dispatches in: one barrier between\nlevels, so "
     "this is "
     "the longest chain of commands that each need the one before.",
     NULL},
    {"context", (getter)graph_context_get, NULL, "The graph's context.", NULL},
    {"freed", (getter)graph_freed_get, NULL,
     "Whether the graph is gone or never came to be: freed, its context closed, or its\nrecording "
     "failed. "
     "False while it is being recorded.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject vpy_GraphType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "vkt.Graph",
    .tp_basicsize = sizeof(vpy_graph),
    .tp_dealloc = (destructor)graph_dealloc,
    .tp_repr = (reprfunc)graph_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc =
        "A recorded step (vkt_graph): ops recorded once by Context.record and replayed by "
        "launch()\n"
        "with one submission, the Vulkan counterpart of a CUDA graph.\n\n"
        "    x = ctx.zeros((batch, 784))\n"
        "    with ctx.record() as g:\n"
        "        loss = step(x, labels)       # recorded, not run: no values yet\n"
        "    for batch in data:\n"
        "        x.write(batch)               # new inputs go into the bound tensors\n"
        "        g.launch()                   # one submission; a sync point\n"
        "        print(loss.item())\n\n"
        "The graph keeps the tensors it binds (its inputs, its results, the state it updates with\n"
        "vkt.assign) until it is freed: with the object, by free(), or when its context closes.\n"
        "Misuse raises vkt.Error with status VKT_EGRAPH.",
    .tp_methods = graph_methods,
    .tp_getset = graph_getset,
};
