/* tensor.c - vkt.Tensor's C side: a vkt_tensor handle freed with its object, its metadata,
 * reads and writes of host buffers, and the operators (numpy's broadcasting, Nx's types). */
#include <string.h>

#include "vpy.h"

const char *const vpy_dtype_names[VKT_NUM_DTYPES + 1] = {"f32", "f64", "s32", "u8", NULL};
static PyObject *dtype_strs[VKT_NUM_DTYPES];
static PyObject *residency_strs[2];

static PyObject *tensor_closed(void)
{
    return vpy_error(VKT_ECTX, "the tensor's context is closed");
}

/* Takes the tensor's context's mutex; refuses a closed one. */
static int tensor_enter(vpy_tensor *t)
{
    if (!t->ctx->h)
        return tensor_closed(), -1;
    return vpy_enter(t->ctx);
}

int vpy_rank(vpy_tensor *t)
{
    if (t->shape)
        return (int)PyTuple_GET_SIZE(t->shape);
    if (!t->ctx->h)
        return tensor_closed(), -1;
    return vk.vkt_tensor_rank(t->h);
}

int vpy_dtype(vpy_tensor *t)
{
    if (!t->ctx->h)
        return tensor_closed(), -1;
    return (int)vk.vkt_tensor_dtype(t->h);
}

PyObject *vpy_shape(vpy_tensor *t)
{
    if (t->shape)
        return Py_NewRef(t->shape);
    if (!t->ctx->h)
        return tensor_closed();
    int rank = vk.vkt_tensor_rank(t->h);
    const int64_t *dims = vk.vkt_tensor_shape(t->h);
    PyObject *s = PyTuple_New(rank);
    for (int i = 0; s && i < rank; i++) {
        PyObject *d = PyLong_FromLongLong(dims[i]);
        if (!d)
            Py_CLEAR(s);
        else
            PyTuple_SET_ITEM(s, i, d);
    }
    t->shape = s;
    return Py_XNewRef(s);
}

/* ---- lifetime ------------------------------------------------------------------------------ */

static PyObject *tensor_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    (void)type;
    (void)args;
    (void)kwds;
    return PyErr_Format(PyExc_TypeError,
                        "tensors are made by a Context (ctx.tensor, ctx.zeros, ...) or by ops");
}

static void tensor_dealloc(vpy_tensor *t)
{
    vpy_ctx *c = t->ctx;
    if (c && t->slot)
        vpy_slot_release(c, t->slot);
    Py_XDECREF(t->shape);
    Py_TYPE(t)->tp_free((PyObject *)t);
    Py_XDECREF(c);
}

/* ---- metadata ------------------------------------------------------------------------------ */

static PyObject *tensor_context_get(vpy_tensor *t, void *closure)
{
    (void)closure;
    return Py_NewRef(t->ctx);
}

static PyObject *tensor_shape_get(vpy_tensor *t, void *closure)
{
    (void)closure;
    return vpy_shape(t);
}

static PyObject *tensor_dtype_get(vpy_tensor *t, void *closure)
{
    (void)closure;
    int d = vpy_dtype(t);
    if (d < 0)
        return NULL;
    if (d >= VKT_NUM_DTYPES)
        return vpy_error(VKT_EDTYPE, "libvkt gave an unknown dtype %d", d);
    return Py_NewRef(dtype_strs[d]);
}

static PyObject *tensor_ndim_get(vpy_tensor *t, void *closure)
{
    (void)closure;
    int r = vpy_rank(t);
    return r < 0 ? NULL : PyLong_FromLong(r);
}

static PyObject *tensor_size_get(vpy_tensor *t, void *closure)
{
    (void)closure;
    if (!t->ctx->h)
        return tensor_closed();
    return PyLong_FromSize_t(vk.vkt_tensor_numel(t->h));
}

static PyObject *tensor_nbytes_get(vpy_tensor *t, void *closure)
{
    (void)closure;
    if (!t->ctx->h)
        return tensor_closed();
    return PyLong_FromSize_t(vk.vkt_tensor_nbytes(t->h));
}

static PyObject *tensor_residency_get(vpy_tensor *t, void *closure)
{
    (void)closure;
    if (tensor_enter(t) < 0)
        return NULL;
    int r = (int)vk.vkt_tensor_residency(t->h);
    vpy_leave(t->ctx);
    return Py_NewRef(residency_strs[r == VKT_HOST]);
}

static PyObject *tensor_move_m(vpy_tensor *t, PyObject *where)
{
    int to = vpy_residency_arg(where, "residency");
    if (to < 0 || tensor_enter(t) < 0)
        return NULL;
    vpy_ctx *c = t->ctx;
    /* A launch would still read and write the device memory the move gives up. */
    if (t->slot->pins && (int)vk.vkt_tensor_residency(t->h) != to) {
        vpy_leave(c);
        return vpy_error(VKT_EGRAPH,
                         "move: a recorded graph binds this tensor, and its launches use the "
                         "tensor's device memory; free the graph first");
    }
    int st;
    Py_BEGIN_ALLOW_THREADS st = vk.vkt_tensor_move(t->h, (vkt_residency)to);
    Py_END_ALLOW_THREADS PyObject *r = vpy_leave_status(c, st);
    if (!r)
        return NULL;
    Py_DECREF(r);
    return Py_NewRef(t);
}

/* ---- host buffers -------------------------------------------------------------------------- */

/* Copies between the tensor and a C-contiguous buffer of its nbytes: out into the buffer
 * (a sync point for a device tensor), or in from it (in place, seen by every view). */
static PyObject *tensor_copy(vpy_tensor *t, PyObject *buf, bool out)
{
    Py_buffer view;
    if (PyObject_GetBuffer(buf, &view, PyBUF_C_CONTIGUOUS | (out ? PyBUF_WRITABLE : 0)) < 0)
        return NULL;
    if (tensor_enter(t) < 0) {
        PyBuffer_Release(&view);
        return NULL;
    }
    size_t nbytes = vk.vkt_tensor_nbytes(t->h);
    PyObject *r;
    if ((size_t)view.len != nbytes) {
        vpy_leave(t->ctx);
        r = vpy_error(VKT_ESHAPE, "%zd bytes for a tensor of %zu", view.len, nbytes);
    } else {
        int st;
        Py_BEGIN_ALLOW_THREADS st = out ? vk.vkt_tensor_read(t->h, view.buf, nbytes)
                                        : vk.vkt_tensor_write(t->h, view.buf, nbytes);
        Py_END_ALLOW_THREADS r = vpy_leave_status(t->ctx, st);
    }
    PyBuffer_Release(&view);
    return r;
}

static PyObject *tensor_read_into_m(vpy_tensor *t, PyObject *buf)
{
    return tensor_copy(t, buf, true);
}

static PyObject *tensor_write_from_m(vpy_tensor *t, PyObject *buf)
{
    return tensor_copy(t, buf, false);
}

/* ---- methods shared with the op functions --------------------------------------------------- */

static PyObject *tensor_reshape_m(PyObject *t, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs == 1 && !PyLong_Check(args[0]))
        return vpy_op_reshape(t, args[0]);
    PyObject *shape = PyTuple_New(nargs);
    if (!shape)
        return NULL;
    for (Py_ssize_t i = 0; i < nargs; i++)
        PyTuple_SET_ITEM(shape, i, Py_NewRef(args[i]));
    PyObject *r = vpy_op_reshape(t, shape);
    Py_DECREF(shape);
    return r;
}

static PyObject *tensor_transpose_m(PyObject *t, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames)
{
    static const char *const names[] = {"axes"};
    PyObject *axes;
    if (vpy_args("transpose", args, nargs, kwnames, names, 0, 1, &axes) < 0)
        return NULL;
    return vpy_op_transpose(t, axes);
}

static PyObject *tensor_T_get(PyObject *t, void *closure)
{
    (void)closure;
    return vpy_op_transpose(t, NULL);
}

static PyObject *tensor_astype_m(PyObject *t, PyObject *dtype)
{
    return vpy_op_as_type(t, dtype);
}

static PyObject *tensor_sum_m(PyObject *t, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    static const char *const names[] = {"axes", "keep_axes"};
    PyObject *a[2];
    if (vpy_args("sum", args, nargs, kwnames, names, 0, 2, a) < 0)
        return NULL;
    return vpy_op_reduce(vk.vkt_sum, t, a[0], a[1]);
}

/* ---- operators ---------------------------------------------------------------------------- */

#define BINARY_SLOT(slot, op)                                                                      \
    static PyObject *slot(PyObject *a, PyObject *b)                                                \
    {                                                                                              \
        return vpy_binary(vk.vkt_##op, a, b);                                                      \
    }
BINARY_SLOT(nb_add, add)
BINARY_SLOT(nb_subtract, subtract)
BINARY_SLOT(nb_multiply, multiply)
BINARY_SLOT(nb_true_divide, divide)
BINARY_SLOT(nb_and, bitwise_and)
BINARY_SLOT(nb_or, bitwise_or)
BINARY_SLOT(nb_xor, bitwise_xor)
BINARY_SLOT(nb_lshift, left_shift)
BINARY_SLOT(nb_rshift, right_shift)
#undef BINARY_SLOT

static PyObject *nb_power(PyObject *a, PyObject *b, PyObject *mod)
{
    if (mod != Py_None)
        Py_RETURN_NOTIMPLEMENTED;
    return vpy_binary(vk.vkt_pow, a, b);
}

static PyObject *nb_negative(PyObject *x)
{
    return vpy_unary(vk.vkt_negate, x);
}

static PyObject *nb_positive(PyObject *x)
{
    return Py_NewRef(x);
}

static PyObject *nb_absolute(PyObject *x)
{
    return vpy_unary(vk.vkt_abs, x);
}

static PyObject *nb_invert(PyObject *x)
{
    return vpy_unary(vk.vkt_bitwise_not, x);
}

static PyObject *tensor_richcompare(PyObject *a, PyObject *b, int op)
{
    vpy_binary_fn fn;
    switch (op) {
    case Py_EQ: fn = vk.vkt_equal; break;
    case Py_NE: fn = vk.vkt_not_equal; break;
    case Py_LT: fn = vk.vkt_less; break;
    case Py_LE: fn = vk.vkt_less_equal; break;
    case Py_GT: fn = vk.vkt_greater; break;
    case Py_GE: fn = vk.vkt_greater_equal; break;
    default: Py_RETURN_NOTIMPLEMENTED;
    }
    return vpy_binary(fn, a, b);
}

static PyNumberMethods tensor_number = {
    .nb_add = nb_add,
    .nb_subtract = nb_subtract,
    .nb_multiply = nb_multiply,
    .nb_power = nb_power,
    .nb_negative = nb_negative,
    .nb_positive = nb_positive,
    .nb_absolute = nb_absolute,
    .nb_invert = nb_invert,
    .nb_lshift = nb_lshift,
    .nb_rshift = nb_rshift,
    .nb_and = nb_and,
    .nb_xor = nb_xor,
    .nb_or = nb_or,
    .nb_true_divide = nb_true_divide,
};

#define FASTKW (METH_FASTCALL | METH_KEYWORDS)

static PyMethodDef tensor_methods[] = {
    {"move", (PyCFunction)tensor_move_m, METH_O,
     "move($self, where, /)\n--\n\nMoves the tensor's storage to 'device' or 'host' (views share "
     "it)."},
    {"_read_into", (PyCFunction)tensor_read_into_m, METH_O, NULL},
    {"_write_from", (PyCFunction)tensor_write_from_m, METH_O, NULL},
    {"reshape", (PyCFunction)(void (*)(void))tensor_reshape_m, METH_FASTCALL,
     "reshape($self, /, *shape)\n--\n\nvkt.reshape(self, shape): shape as one sequence or as "
     "integers."},
    {"transpose", (PyCFunction)(void (*)(void))tensor_transpose_m, FASTKW,
     "transpose($self, /, axes=None)\n--\n\nvkt.transpose(self, axes)."},
    {"astype", (PyCFunction)tensor_astype_m, METH_O,
     "astype($self, dtype, /)\n--\n\nvkt.as_type(self, dtype)."},
    {"sum", (PyCFunction)(void (*)(void))tensor_sum_m, FASTKW,
     "sum($self, /, axes=None, keep_axes=False)\n--\n\nvkt.sum(self, axes, keep_axes)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef tensor_getset[] = {
    {"context", (getter)tensor_context_get, NULL, "The tensor's context.", NULL},
    {"shape", (getter)tensor_shape_get, NULL, "The shape, a tuple of ints.", NULL},
    {"dtype", (getter)tensor_dtype_get, NULL, "'f32', 'f64', 's32' or 'u8'.", NULL},
    {"ndim", (getter)tensor_ndim_get, NULL, "The rank.", NULL},
    {"rank", (getter)tensor_ndim_get, NULL, "The rank.", NULL},
    {"size", (getter)tensor_size_get, NULL, "The number of elements.", NULL},
    {"nbytes", (getter)tensor_nbytes_get, NULL, "The size of the elements in bytes.", NULL},
    {"residency", (getter)tensor_residency_get, NULL, "'device' or 'host'.", NULL},
    {"T", (getter)tensor_T_get, NULL, "vkt.transpose(self): the axes reversed.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject vpy_TensorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "vkt._vkt.Tensor",
    .tp_basicsize = sizeof(vpy_tensor),
    .tp_dealloc = (destructor)tensor_dealloc,
    .tp_as_number = &tensor_number,
    .tp_hash = PyObject_HashNotImplemented,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "The C side of vkt.Tensor: a vkt_tensor handle, freed with the object.",
    .tp_richcompare = tensor_richcompare,
    .tp_methods = tensor_methods,
    .tp_getset = tensor_getset,
    .tp_new = tensor_new,
};

int vpy_tensor_init_strings(void)
{
    for (int i = 0; i < VKT_NUM_DTYPES; i++)
        if (!(dtype_strs[i] = PyUnicode_InternFromString(vpy_dtype_names[i])))
            return -1;
    for (int i = 0; i < 2; i++)
        if (!(residency_strs[i] = PyUnicode_InternFromString(i ? "host" : "device")))
            return -1;
    return 0;
}

int vpy_dtype_of_name(PyObject *s)
{
    for (int i = 0; i < VKT_NUM_DTYPES; i++)
        if (s == dtype_strs[i] || PyUnicode_CompareWithASCIIString(s, vpy_dtype_names[i]) == 0)
            return i;
    return -1;
}
