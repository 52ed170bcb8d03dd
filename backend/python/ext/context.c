/* context.c - vkt's Context: a vkt_ctx, its mutex, and every tensor handle and graph made on
 * it, so that closing it frees them all and the Python objects that outlive it refuse use. */
#include <stdio.h>
#include <string.h>

#include "vpy.h"

PyTypeObject *vpy_tensor_class = &vpy_TensorType;

/* The open contexts, closed at interpreter exit (GIL held). */
static vpy_ctx *open_head;

int vpy_ptrs_push(vpy_ptrs *p, void *v)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 16;
        void **nv = PyMem_RawRealloc(p->v, cap * sizeof *nv);
        if (!nv)
            return -1;
        p->v = nv;
        p->cap = cap;
    }
    p->v[p->n++] = v;
    return 0;
}

void vpy_ptrs_free(vpy_ptrs *p)
{
    PyMem_RawFree(p->v);
    p->v = NULL;
    p->n = p->cap = 0;
}

/* ---- locking -------------------------------------------------------------------------------- */

void vpy_lock(vpy_ctx *c)
{
    if (pthread_mutex_trylock(&c->mu) == 0)
        return;
    Py_BEGIN_ALLOW_THREADS pthread_mutex_lock(&c->mu);
    Py_END_ALLOW_THREADS
}

PyObject *vpy_closed_error(void)
{
    return vpy_error(VKT_ECTX, "the context is closed");
}

static void drain(vpy_ctx *c);

int vpy_enter(vpy_ctx *c)
{
    vpy_lock(c);
    if (!c->h) {
        vpy_leave(c);
        vpy_closed_error();
        return -1;
    }
    if (c->pending.n || c->pending_graphs.n)
        drain(c);
    return 0;
}

/* ---- tensor slots (GIL held; the mutex held where libvkt is called) -------------------------- */

static vpy_slot *slot_new(vpy_ctx *c, vkt_tensor *h)
{
    vpy_slot *s = PyMem_RawMalloc(sizeof *s);
    if (!s)
        return NULL;
    *s = (vpy_slot){.h = h, .prev = &c->live, .next = c->live.next};
    c->live.next->prev = s;
    c->live.next = s;
    c->nlive++;
    return s;
}

/* Frees the handle; the slot's memory too, unless the recording's notes still hold it. */
static void slot_free(vpy_ctx *c, vpy_slot *s)
{
    vk.vkt_tensor_free(s->h);
    s->prev->next = s->next;
    s->next->prev = s->prev;
    c->nlive--;
    if (s->touched)
        s->h = NULL;
    else
        PyMem_RawFree(s);
}

/* The slot's Tensor object is gone: free it, or leave it to the last graph that binds it. */
static void slot_drop(vpy_ctx *c, vpy_slot *s)
{
    if (s->pins)
        s->orphan = true;
    else
        slot_free(c, s);
}

void vpy_slot_release(vpy_ctx *c, vpy_slot *s)
{
    if (!c->h)
        return; /* freed with the context */
    if (pthread_mutex_trylock(&c->mu) == 0) {
        slot_drop(c, s);
        vpy_leave(c);
    } else if (vpy_ptrs_push(&c->pending, s) < 0) {
        s->orphan = true; /* out of memory: freed with the context */
    }
}

void vpy_grec_free(vpy_ctx *c, vpy_grec *r)
{
    vk.vkt_graph_free(r->h);
    for (size_t i = 0; i < r->nbound; i++) {
        vpy_slot *s = r->bound[i];
        if (--s->pins == 0 && s->orphan)
            slot_free(c, s);
    }
    r->prev->next = r->next;
    r->next->prev = r->prev;
    if (r->obj)
        r->obj->rec = NULL;
    PyMem_RawFree(r->bound);
    PyMem_RawFree(r);
}

/* Frees the graphs and tensors collected while the mutex was taken (the mutex held). */
static void drain(vpy_ctx *c)
{
    while (c->pending_graphs.n)
        vpy_grec_free(c, c->pending_graphs.v[--c->pending_graphs.n]);
    while (c->pending.n)
        slot_drop(c, c->pending.v[--c->pending.n]);
}

void vpy_touch(vpy_ctx *c, vpy_tensor *const *used, int n)
{
    for (int i = 0; i < n; i++) {
        vpy_slot *s = used[i] ? used[i]->slot : NULL;
        if (s && !s->touched && vpy_ptrs_push(&c->touched, s) == 0)
            s->touched = true;
    }
}

int vpy_notes_end(vpy_ctx *c, vpy_grec *r)
{
    size_t n = 0;
    vpy_slot **bound =
        r ? PyMem_RawMalloc((c->touched.n ? c->touched.n : 1) * sizeof *bound) : NULL;
    for (size_t i = 0; i < c->touched.n; i++) {
        vpy_slot *s = c->touched.v[i];
        s->touched = false;
        if (!s->h) {
            PyMem_RawFree(s); /* freed during the recording: the graph keeps its memory */
        } else if (bound) {
            s->pins++;
            bound[n++] = s;
        }
    }
    c->touched.n = 0;
    if (r) {
        r->bound = bound;
        r->nbound = n;
    }
    return r && !bound ? -1 : 0;
}

PyObject *vpy_leave_status(vpy_ctx *c, int st)
{
    vpy_failure f;
    if (st)
        vpy_failure_take(&f, st);
    vpy_leave(c);
    return st ? vpy_failure_raise(&f) : Py_NewRef(Py_None);
}

PyObject *vpy_made(vpy_ctx *c, int status, vkt_tensor *out, vpy_tensor *const *used, int n)
{
    if (status)
        return vpy_leave_status(c, status);
    if (!out) {
        vpy_leave(c);
        return vpy_error(VKT_EINVAL, "libvkt returned no tensor");
    }
    vpy_slot *s = slot_new(c, out);
    if (!s) {
        vk.vkt_tensor_free(out);
        vpy_leave(c);
        return PyErr_NoMemory();
    }
    if (c->rec) {
        vpy_touch(c, used, n);
        if (vpy_ptrs_push(&c->touched, s) == 0)
            s->touched = true;
    }
    vpy_leave(c);
    vpy_tensor *t = (vpy_tensor *)vpy_tensor_class->tp_alloc(vpy_tensor_class, 0);
    if (!t) {
        vpy_slot_release(c, s);
        return NULL;
    }
    Py_INCREF(c);
    t->ctx = c;
    t->h = out;
    t->slot = s;
    return (PyObject *)t;
}

/* ---- closing -------------------------------------------------------------------------------- */

static void ctx_close(vpy_ctx *c)
{
    if (!c->h)
        return;
    vpy_lock(c);
    vkt_ctx *h = c->h;
    if (!h) { /* another thread closed it while this one waited */
        vpy_leave(c);
        return;
    }
    vpy_graph *rec = c->rec;
    if (rec) {
        vkt_graph *g = NULL;
        vk.vkt_graph_end(h, &g);
        vk.vkt_graph_free(g);
        rec->state = VPY_CLOSED;
        c->rec = NULL;
    }
    vpy_notes_end(c, NULL);
    while (c->graphs.next != &c->graphs) {
        vpy_grec *r = c->graphs.next;
        vk.vkt_graph_free(r->h);
        r->prev->next = r->next;
        r->next->prev = r->prev;
        if (r->obj)
            r->obj->rec = NULL;
        PyMem_RawFree(r->bound);
        PyMem_RawFree(r);
    }
    while (c->live.next != &c->live) {
        vpy_slot *s = c->live.next;
        vk.vkt_tensor_free(s->h);
        c->live.next = s->next;
        PyMem_RawFree(s);
    }
    c->live.prev = &c->live;
    c->nlive = 0;
    c->pending.n = c->pending_graphs.n = 0;
    c->h = NULL;
    if (c->open_prev)
        c->open_prev->open_next = c->open_next;
    else if (open_head == c)
        open_head = c->open_next;
    if (c->open_next)
        c->open_next->open_prev = c->open_prev;
    c->open_prev = c->open_next = NULL;
    vpy_leave(c);
    /* No other thread can reach h now: wait for its work without the GIL. */
    Py_BEGIN_ALLOW_THREADS vk.vkt_ctx_destroy(h);
    Py_END_ALLOW_THREADS Py_XDECREF(rec);
}

void vpy_close_all(void)
{
    while (open_head) {
        vpy_ctx *c = open_head;
        Py_INCREF(c);
        ctx_close(c);
        if (open_head == c) /* not unlinked: never leave it looping */
            open_head = c->open_next;
        Py_DECREF(c);
    }
}

/* ---- the type ------------------------------------------------------------------------------ */

static PyObject *ctx_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    (void)args;
    (void)kwds;
    vpy_ctx *c = (vpy_ctx *)type->tp_alloc(type, 0);
    if (!c)
        return NULL;
    pthread_mutex_init(&c->mu, NULL);
    c->live.prev = c->live.next = &c->live;
    c->graphs.prev = c->graphs.next = &c->graphs;
    return (PyObject *)c;
}

static int ctx_init(vpy_ctx *c, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"device", NULL};
    PyObject *device = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:Context", kwlist, &device))
        return -1;
    if (c->h) {
        vpy_error(VKT_EINVAL, "the context is open already");
        return -1;
    }
    if (device != Py_None &&
        (PyBool_Check(device) || !(PyUnicode_Check(device) || PyIndex_Check(device)))) {
        vpy_error(VKT_EINVAL, "device must be an index or a name, got %R", device);
        return -1;
    }
    if (vpy_lib_require() < 0)
        return -1;
    PyObject *name = device == Py_None ? NULL : PyObject_Str(device);
    if (device != Py_None && !name)
        return -1;
    const char *sel = name ? PyUnicode_AsUTF8(name) : NULL;
    if (name && !sel) {
        Py_DECREF(name);
        return -1;
    }
    vkt_ctx *h = NULL;
    int st;
    Py_BEGIN_ALLOW_THREADS st = vk.vkt_ctx_create(sel, &h);
    Py_END_ALLOW_THREADS Py_XDECREF(name);
    if (st) {
        vpy_status_error(st);
        return -1;
    }
    c->h = h;
    c->open_next = open_head;
    if (open_head)
        open_head->open_prev = c;
    open_head = c;
    return 0;
}

static void ctx_dealloc(vpy_ctx *c)
{
    ctx_close(c);
    if (c->weakrefs)
        PyObject_ClearWeakRefs((PyObject *)c);
    pthread_mutex_destroy(&c->mu);
    vpy_ptrs_free(&c->pending);
    vpy_ptrs_free(&c->pending_graphs);
    vpy_ptrs_free(&c->touched);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

static PyObject *ctx_close_m(vpy_ctx *c, PyObject *unused)
{
    (void)unused;
    ctx_close(c);
    Py_RETURN_NONE;
}

static PyObject *ctx_enter_m(PyObject *c, PyObject *unused)
{
    (void)unused;
    return Py_NewRef(c);
}

static PyObject *ctx_exit_m(vpy_ctx *c, PyObject *args)
{
    (void)args;
    ctx_close(c);
    Py_RETURN_FALSE;
}

/* Runs one status call on the open context, with the GIL released when it waits on the
 * device; drains what was collected meanwhile. Returns the status (>= 0) or -1 with the
 * error. */
typedef int (*ctx_fn)(vkt_ctx *);
static int ctx_status(vpy_ctx *c, ctx_fn fn, bool wait)
{
    if (vpy_enter(c) < 0)
        return -1;
    int st;
    if (wait) {
        Py_BEGIN_ALLOW_THREADS st = fn(c->h);
        Py_END_ALLOW_THREADS
    } else {
        st = fn(c->h);
    }
    if (c->pending.n || c->pending_graphs.n)
        drain(c);
    if (st >= 0) {
        vpy_leave(c);
        return st;
    }
    PyObject *none = vpy_leave_status(c, st);
    Py_XDECREF(none);
    return -1;
}

static PyObject *ctx_sync_m(vpy_ctx *c, PyObject *unused)
{
    (void)unused;
    if (ctx_status(c, vk.vkt_sync, true) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *ctx_flushes_m(vpy_ctx *c, PyObject *unused)
{
    (void)unused;
    int st = ctx_status(c, vk.vkt_ctx_flushes_subnormals, true);
    return st < 0 ? NULL : PyBool_FromLong(st);
}

static PyObject *ctx_native_disable_m(vpy_ctx *c, PyObject *ops)
{
    const char *s = PyUnicode_AsUTF8(ops);
    if (!s || vpy_enter(c) < 0)
        return NULL;
    return vpy_leave_status(c, vk.vkt_ctx_set_native_disable(c->h, s));
}

static PyObject *ctx_fallback_result_m(vpy_ctx *c, PyObject *where)
{
    int r = vpy_residency_arg(where, "fallback result");
    if (r < 0 || vpy_enter(c) < 0)
        return NULL;
    return vpy_leave_status(c, vk.vkt_ctx_set_fallback_result(c->h, (vkt_residency)r));
}

static PyObject *ctx_set_profiling_m(vpy_ctx *c, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames)
{
    static const char *const names[] = {"on"};
    PyObject *on;
    if (vpy_args("set_profiling", args, nargs, kwnames, names, 0, 1, &on) < 0)
        return NULL;
    if (on && !PyBool_Check(on) && !PyIndex_Check(on))
        return vpy_error(VKT_EINVAL, "set_profiling takes True or False, got %R", on);
    int flag = vpy_truth(on, true);
    if (flag < 0 || vpy_enter(c) < 0)
        return NULL;
    int st = vk.vkt_ctx_set_profiling(c->h, flag);
    if (!st)
        c->profiling = flag;
    return vpy_leave_status(c, st);
}

static PyObject *opt_str(const char *s)
{
    return s ? PyUnicode_FromString(s) : Py_NewRef(Py_None);
}

static PyObject *ctx_profile_m(vpy_ctx *c, PyObject *unused)
{
    (void)unused;
    if (vpy_enter(c) < 0)
        return NULL;
    size_t n = vk.vkt_profile_read(c->h, NULL, 0);
    vkt_profile_entry *e = PyMem_RawMalloc((n ? n : 1) * sizeof *e);
    if (!e) {
        vpy_leave(c);
        return PyErr_NoMemory();
    }
    size_t got = vk.vkt_profile_read(c->h, e, n);
    if (got > n)
        got = n;
    vpy_leave(c);
    /* The names are libvkt's static strings (its op and kernel tables). */
    PyObject *list = PyList_New((Py_ssize_t)got);
    for (size_t i = 0; list && i < got; i++) {
        PyObject *row = Py_BuildValue("(NNd)", opt_str(e[i].op), opt_str(e[i].kernel), e[i].gpu_ns);
        if (!row)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, (Py_ssize_t)i, row);
    }
    PyMem_RawFree(e);
    return list;
}

static PyObject *ctx_record_m(vpy_ctx *c, PyObject *unused)
{
    (void)unused;
    vpy_graph *g = vpy_graph_new(c);
    if (!g)
        return NULL;
    if (vpy_enter(c) < 0) {
        Py_DECREF(g);
        return NULL;
    }
    int st = vk.vkt_graph_begin(c->h);
    if (st) {
        vpy_leave_status(c, st);
        Py_DECREF(g);
        return NULL;
    }
    c->rec = (vpy_graph *)Py_NewRef(g);
    vpy_leave(c);
    return (PyObject *)g;
}

/* ---- making tensors ------------------------------------------------------------------------ */

/* A shape argument: an int, or a sequence of ints. */
static int shape_arg(PyObject *shape, int64_t *dims)
{
    return (int)vpy_ints(shape, dims, VKT_MAX_RANK + 1, "shape");
}

static PyObject *ctx_zeros_m(vpy_ctx *c, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"shape", "dtype"};
    PyObject *a[2];
    int64_t dims[VKT_MAX_RANK + 1];
    if (vpy_args("zeros", args, nargs, kwnames, names, 1, 2, a) < 0)
        return NULL;
    int rank = shape_arg(a[0], dims);
    int dt = rank < 0 ? -1 : a[1] ? vpy_dtype_arg(a[1]) : VKT_F32;
    if (dt < 0 || vpy_enter(c) < 0)
        return NULL;
    vkt_tensor *out = NULL;
    int st = vk.vkt_zeros(c->h, (vkt_dtype)dt, dims, rank, &out);
    return vpy_made(c, st, out, NULL, 0);
}

static PyObject *ctx_full_m(vpy_ctx *c, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"shape", "value", "dtype"};
    PyObject *a[3];
    int64_t dims[VKT_MAX_RANK + 1];
    if (vpy_args("full", args, nargs, kwnames, names, 2, 3, a) < 0)
        return NULL;
    int rank = shape_arg(a[0], dims);
    if (rank < 0)
        return NULL;
    double value = PyFloat_Check(a[1]) ? PyFloat_AS_DOUBLE(a[1]) : -1.0;
    if (!PyFloat_Check(a[1])) {
        PyObject *f = PyNumber_Float(a[1]);
        if (!f) {
            if (!PyErr_ExceptionMatches(PyExc_TypeError) &&
                !PyErr_ExceptionMatches(PyExc_ValueError))
                return NULL;
            PyErr_Clear();
            return vpy_error(VKT_EINVAL, "fill value must be a number, got %R", a[1]);
        }
        value = PyFloat_AS_DOUBLE(f);
        Py_DECREF(f);
    }
    int dt = a[2] ? vpy_dtype_arg(a[2]) : VKT_F32;
    if (dt < 0 || vpy_enter(c) < 0)
        return NULL;
    vkt_tensor *out = NULL;
    int st = vk.vkt_full(c->h, (vkt_dtype)dt, dims, rank, value, &out);
    return vpy_made(c, st, out, NULL, 0);
}

static PyObject *ctx_iota_m(vpy_ctx *c, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"shape", "dtype", "axis"};
    PyObject *a[3];
    int64_t dims[VKT_MAX_RANK + 1];
    int axis;
    if (vpy_args("iota", args, nargs, kwnames, names, 1, 3, a) < 0)
        return NULL;
    int rank = shape_arg(a[0], dims);
    int dt = rank < 0 ? -1 : a[1] ? vpy_dtype_arg(a[1]) : VKT_S32;
    if (dt < 0 || vpy_index(a[2], VKT_ALL_AXES, &axis) < 0 || vpy_enter(c) < 0)
        return NULL;
    vkt_tensor *out = NULL;
    int st = vk.vkt_iota(c->h, (vkt_dtype)dt, dims, rank, axis, &out);
    return vpy_made(c, st, out, NULL, 0);
}

/* _from_host(dtype, shape, data): a tensor holding a copy of data, a C-contiguous buffer of
 * the shape's size in the dtype (or None for no elements); the package converts it first. */
static PyObject *ctx_from_host_m(vpy_ctx *c, PyObject *const *args, Py_ssize_t nargs)
{
    int64_t dims[VKT_MAX_RANK + 1];
    int dt;
    if (nargs != 3)
        return PyErr_Format(PyExc_TypeError, "_from_host takes 3 arguments, got %zd", nargs);
    if (vpy_index(args[0], 0, &dt) < 0)
        return NULL;
    int rank = shape_arg(args[1], dims);
    if (rank < 0)
        return NULL;
    Py_buffer view = {0};
    if (args[2] != Py_None && PyObject_GetBuffer(args[2], &view, PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    if (vpy_enter(c) < 0) {
        PyBuffer_Release(&view);
        return NULL;
    }
    vkt_tensor *out = NULL;
    int st;
    const void *data = view.obj ? view.buf : NULL;
    Py_BEGIN_ALLOW_THREADS st =
        vk.vkt_tensor_from_host(c->h, (vkt_dtype)dt, dims, rank, data, &out);
    Py_END_ALLOW_THREADS PyObject *t = vpy_made(c, st, out, NULL, 0);
    PyBuffer_Release(&view);
    return t;
}

/* ---- properties ------------------------------------------------------------------------------ */

static PyObject *ctx_closed_get(vpy_ctx *c, void *closure)
{
    (void)closure;
    return PyBool_FromLong(c->h == NULL);
}

static PyObject *ctx_recording_get(vpy_ctx *c, void *closure)
{
    (void)closure;
    return PyBool_FromLong(c->rec != NULL);
}

static PyObject *ctx_profiling_get(vpy_ctx *c, void *closure)
{
    (void)closure;
    return PyBool_FromLong(c->profiling);
}

static PyObject *ctx_device_name_get(vpy_ctx *c, void *closure)
{
    (void)closure;
    if (vpy_enter(c) < 0)
        return NULL;
    char name[256];
    const char *n = vk.vkt_ctx_device_name(c->h);
    snprintf(name, sizeof name, "%s", n ? n : "");
    vpy_leave(c);
    return PyUnicode_DecodeUTF8(name, (Py_ssize_t)strlen(name), "replace");
}

static PyObject *ctx_max_bytes_get(vpy_ctx *c, void *closure)
{
    (void)closure;
    if (vpy_enter(c) < 0)
        return NULL;
    uint64_t n = vk.vkt_ctx_max_tensor_bytes(c->h);
    vpy_leave(c);
    return PyLong_FromUnsignedLongLong(n);
}

static PyObject *ctx_last_gpu_ns_get(vpy_ctx *c, void *closure)
{
    (void)closure;
    if (vpy_enter(c) < 0)
        return NULL;
    double ns = vk.vkt_ctx_last_gpu_ns(c->h);
    vpy_leave(c);
    return ns < 0 ? Py_NewRef(Py_None) : PyFloat_FromDouble(ns);
}

/* d[key's address] = v (v stolen); on failure d is released and NULL returned. */
static PyObject *put(PyObject *d, const void *key, PyObject *v)
{
    PyObject *k = PyLong_FromVoidPtr((void *)key);
    if (!k || !v || PyDict_SetItem(d, k, v) < 0)
        Py_CLEAR(d);
    Py_XDECREF(k);
    Py_XDECREF(v);
    return d;
}

/* The bookkeeping as Python values, for the package's tests: each live handle and how many
 * graphs bind it; each graph not freed and how many handles it binds. */
static PyObject *ctx_live_get(vpy_ctx *c, void *closure)
{
    (void)closure;
    PyObject *d = PyDict_New();
    for (vpy_slot *s = c->live.next; d && c->h && s != &c->live; s = s->next)
        d = put(d, s->h, PyLong_FromUnsignedLong(s->pins));
    return d;
}

static PyObject *ctx_graphs_get(vpy_ctx *c, void *closure)
{
    (void)closure;
    PyObject *d = PyDict_New();
    for (vpy_grec *r = c->graphs.next; d && c->h && r != &c->graphs; r = r->next)
        d = put(d, r->h, PyLong_FromSize_t(r->nbound));
    return d;
}

#define FASTKW (METH_FASTCALL | METH_KEYWORDS)

static PyMethodDef ctx_methods[] = {
    {"close", (PyCFunction)ctx_close_m, METH_NOARGS,
     "close($self, /)\n--\n\nEnds a recording under way, frees every graph and tensor still alive "
     "on this "
     "context, then the context."},
    {"__enter__", ctx_enter_m, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)ctx_exit_m, METH_VARARGS, NULL},
    {"sync", (PyCFunction)ctx_sync_m, METH_NOARGS,
     "sync($self, /)\n--\n\nSubmits recorded work and waits for it."},
    {"flushes_subnormals", (PyCFunction)ctx_flushes_m, METH_NOARGS,
     "flushes_subnormals($self, /)\n--\n\nTrue when the device's f32 arithmetic flushes subnormals "
     "to zero."},
    {"_set_native_disable", (PyCFunction)ctx_native_disable_m, METH_O, NULL},
    {"set_fallback_result", (PyCFunction)ctx_fallback_result_m, METH_O,
     "set_fallback_result($self, where, /)\n--\n\nWhere fallback results go: 'device' (uploaded, "
     "the default) "
     "or 'host'."},
    {"set_profiling", (PyCFunction)(void (*)(void))ctx_set_profiling_m, FASTKW,
     "set_profiling($self, /, on=True)\n--\n\nTimes every dispatch (Vulkan timestamps, each "
     "dispatch alone "
     "behind a barrier) while on;\nContext.profile() returns the times. A graph times its "
     "dispatches when "
     "recorded while on,\nand adds them to the profile at launches while on. A no-op where the "
     "queue has no\n"
     "timestamps (last_gpu_ns is then None)."},
    {"_profile", (PyCFunction)ctx_profile_m, METH_NOARGS, NULL},
    {"record", (PyCFunction)ctx_record_m, METH_NOARGS,
     "record($self, /)\n--\n\nBegins recording a graph: the ops called on this context until the "
     "recording "
     "ends run\nonce per launch instead of now. Use it as `with ctx.record() as g: ...`, then "
     "g.launch().\n\n"
     "Only native device work records: an op that would fall back or run on the host, a read "
     "to\nthe host "
     "(numpy(), item(), printing values), a write, a move or a sync raises vkt.Error\n(VKT_EGRAPH, "
     "naming the "
     "op), and a with block that raises makes no graph (nor does a\nrecording in which an op "
     "failed). Tensors "
     "used or made by the recording are bound to the\ngraph: new inputs go into them with "
     "Tensor.write, state "
     "the step updates with vkt.assign,\nand results are read from them after a launch. One "
     "recording at a "
     "time per context; ops\nthat other threads call on the context meanwhile are recorded too."},
    {"zeros", (PyCFunction)(void (*)(void))ctx_zeros_m, FASTKW,
     "zeros($self, /, shape, dtype='f32')\n--\n\nA new tensor of zeros."},
    {"full", (PyCFunction)(void (*)(void))ctx_full_m, FASTKW,
     "full($self, /, shape, value, dtype='f32')\n--\n\nA new tensor filled with value converted to "
     "dtype."},
    {"iota", (PyCFunction)(void (*)(void))ctx_iota_m, FASTKW,
     "iota($self, /, shape, dtype='s32', axis=None)\n--\n\nA new tensor counting up along axis, or "
     "over the "
     "flattened tensor (Nx.iota)."},
    {"_from_host", (PyCFunction)(void (*)(void))ctx_from_host_m, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef ctx_getset[] = {
    {"closed", (getter)ctx_closed_get, NULL, "Whether the context is closed.", NULL},
    {"recording", (getter)ctx_recording_get, NULL,
     "Whether a graph is being recorded on this context.", NULL},
    {"profiling", (getter)ctx_profiling_get, NULL,
     "Whether set_profiling turned per-dispatch timing on.", NULL},
    {"device_name", (getter)ctx_device_name_get, NULL, "The name of the context's device.", NULL},
    {"max_tensor_bytes", (getter)ctx_max_bytes_get, NULL,
     "The largest tensor in bytes a native kernel can bind; larger ones fall back.", NULL},
    {"last_gpu_ns", (getter)ctx_last_gpu_ns_get, NULL,
     "GPU time of the last submission in ns, or None without timestamps.", NULL},
    {"_live", (getter)ctx_live_get, NULL, NULL, NULL},
    {"_graphs", (getter)ctx_graphs_get, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject vpy_ContextType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "vkt._vkt.Context",
    .tp_basicsize = sizeof(vpy_ctx),
    .tp_dealloc = (destructor)ctx_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "The C side of vkt.Context: a vkt_ctx and what was made on it.",
    .tp_weaklistoffset = offsetof(vpy_ctx, weakrefs),
    .tp_methods = ctx_methods,
    .tp_getset = ctx_getset,
    .tp_init = (initproc)ctx_init,
    .tp_new = ctx_new,
};
