/* ops.c - the ops of vkt.h as Python functions, named without the prefix, with Nx's
 * defaults. Operands may be tensors, numpy arrays, nested lists or numbers, as long as one of
 * them is a tensor (it names the context); a Python number takes the type of the tensor it
 * meets when that type can hold it (args.c). Each function checks its arguments, takes the
 * context's mutex, makes its numbers' tensors, calls libvkt once and wraps the result. */
#include <string.h>

#include "vpy.h"

#define FASTKW (METH_FASTCALL | METH_KEYWORDS)
#define MAXR                                                                                       \
    (VKT_MAX_RANK + 1) /* array sizes: one more than a tensor takes, for libvkt to refuse */

/* Takes the mutex and makes the operands' numbers; on failure releases everything. */
static int begin(vpy_ctx *c, vpy_operand *o, int n)
{
    if (vpy_enter(c) < 0) {
        vpy_operands_done(o, n);
        return -1;
    }
    vpy_failure f;
    if (vpy_operands_make(c, o, n, &f) < 0) {
        vpy_leave(c);
        vpy_operands_done(o, n);
        vpy_failure_raise(&f);
        return -1;
    }
    return 0;
}

/* After the call: its error read first (before any other libvkt call on this thread), the
 * numbers' tensors freed, the result wrapped, the mutex released. */
static PyObject *finish(vpy_ctx *c, int st, vkt_tensor *out, vpy_operand *o, int n)
{
    vpy_failure f;
    if (st) {
        vpy_failure_take(&f, st);
        vpy_operands_free(o, n);
        vpy_leave(c);
        vpy_operands_done(o, n);
        return vpy_failure_raise(&f);
    }
    vpy_operands_free(o, n);
    vpy_tensor *used[4];
    int k = 0;
    for (int i = 0; i < n && k < 4; i++)
        if (o[i].t)
            used[k++] = o[i].t;
    PyObject *r = vpy_made(c, st, out, used, k);
    vpy_operands_done(o, n);
    return r;
}

/* x, which must be a tensor: the ops of one tensor take it from their first operand. */
static vpy_tensor *tensor_arg(PyObject *x)
{
    if (vpy_is_tensor(x))
        return (vpy_tensor *)x;
    vpy_ctx_of(&x, 1); /* raises: only a tensor names the context */
    return NULL;
}

/* The end of an op on one tensor t: libvkt's fn on t's handle and the arguments that follow,
 * under the mutex, and the result wrapped. */
#define CALL_ON(t, fn, ...)                                                                        \
    do {                                                                                           \
        if (vpy_enter((t)->ctx) < 0)                                                               \
            return NULL;                                                                           \
        vkt_tensor *out_ = NULL;                                                                   \
        int st_ = fn((t)->h, __VA_ARGS__, &out_);                                                  \
        return vpy_made((t)->ctx, st_, out_, &(t), 1);                                             \
    } while (0)

/* ---- elementwise ----------------------------------------------------------------------------- */

PyObject *vpy_unary(vpy_unary_fn fn, PyObject *x)
{
    vpy_tensor *t = tensor_arg(x);
    if (!t || vpy_enter(t->ctx) < 0)
        return NULL;
    vkt_tensor *out = NULL;
    int st = fn(t->h, &out);
    return vpy_made(t->ctx, st, out, &t, 1);
}

PyObject *vpy_binary(vpy_binary_fn fn, PyObject *a, PyObject *b)
{
    /* the common case, kept short */
    if (Py_TYPE(a) == vpy_tensor_class && Py_TYPE(b) == vpy_tensor_class) {
        vpy_tensor *x = (vpy_tensor *)a, *y = (vpy_tensor *)b;
        vpy_ctx *c = x->ctx;
        if (y->ctx == c) {
            if (vpy_enter(c) < 0)
                return NULL;
            vkt_tensor *out = NULL;
            int st = fn(x->h, y->h, &out);
            vpy_tensor *used[2] = {x, y};
            return vpy_made(c, st, out, used, 2);
        }
    }
    PyObject *xs[2] = {a, b};
    vpy_operand o[2];
    int like, likes[2];
    vpy_ctx *c = vpy_ctx_of(xs, 2);
    if (!c || vpy_like(xs, 2, &like) < 0)
        return NULL;
    likes[0] = likes[1] = like;
    if (vpy_operands(c, xs, 2, likes, o) < 0 || begin(c, o, 2) < 0)
        return NULL;
    vkt_tensor *out = NULL;
    int st = fn(vpy_h(&o[0]), vpy_h(&o[1]), &out);
    return finish(c, st, out, o, 2);
}

static const char *const x_names[] = {"x"};
static const char *const ab_names[] = {"a", "b"};

#define UNARY_FN(name, cls)                                                                        \
    static PyObject *op_##name(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) \
    {                                                                                              \
        (void)m;                                                                                   \
        PyObject *x;                                                                               \
        if (nargs == 1 && !kw)                                                                     \
            return vpy_unary(vk.vkt_##name, args[0]);                                              \
        return vpy_args(#name, args, nargs, kw, x_names, 1, 1, &x) < 0                             \
                   ? NULL                                                                          \
                   : vpy_unary(vk.vkt_##name, x);                                                  \
    }
#define BINARY_FN(name, cls)                                                                       \
    static PyObject *op_##name(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) \
    {                                                                                              \
        (void)m;                                                                                   \
        PyObject *a[2];                                                                            \
        if (nargs == 2 && !kw)                                                                     \
            return vpy_binary(vk.vkt_##name, args[0], args[1]);                                    \
        return vpy_args(#name, args, nargs, kw, ab_names, 2, 2, a) < 0                             \
                   ? NULL                                                                          \
                   : vpy_binary(vk.vkt_##name, a[0], a[1]);                                        \
    }
VKT_UNARY_OPS(UNARY_FN)
VKT_BINARY_OPS(BINARY_FN)
#undef UNARY_FN
#undef BINARY_FN

static PyObject *op_select(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    (void)m;
    static const char *const names[] = {"pred", "on_true", "on_false"};
    PyObject *xs[3];
    vpy_operand o[3];
    int likes[3] = {VKT_U8, 0, 0};
    if (vpy_args("select", args, nargs, kw, names, 3, 3, xs) < 0)
        return NULL;
    vpy_ctx *c = vpy_ctx_of(xs, 3);
    if (!c || vpy_like(xs + 1, 2, &likes[1]) < 0)
        return NULL;
    likes[2] = likes[1];
    if (vpy_operands(c, xs, 3, likes, o) < 0 || begin(c, o, 3) < 0)
        return NULL;
    vkt_tensor *out = NULL;
    int st = vk.vkt_select(vpy_h(&o[0]), vpy_h(&o[1]), vpy_h(&o[2]), &out);
    return finish(c, st, out, o, 3);
}

static PyObject *op_clip(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    (void)m;
    static const char *const names[] = {"x", "min", "max"};
    PyObject *xs[3];
    vpy_operand o[3];
    int like, likes[2];
    if (vpy_args("clip", args, nargs, kw, names, 3, 3, xs) < 0)
        return NULL;
    vpy_ctx *c = vpy_ctx_of(xs, 3);
    if (!c || vpy_like(xs, 3, &like) < 0 || vpy_operands(c, xs, 1, &like, o) < 0)
        return NULL;
    /* the bounds take x's dtype, x made first */
    if ((likes[0] = likes[1] = vpy_operand_dtype(&o[0])) < 0 ||
        vpy_operands(c, xs + 1, 2, likes, o + 1) < 0) {
        vpy_operands_done(o, 1);
        return NULL;
    }
    if (begin(c, o, 3) < 0)
        return NULL;
    vkt_tensor *out = NULL;
    int st = vk.vkt_clip(vpy_h(&o[0]), vpy_h(&o[1]), vpy_h(&o[2]), &out);
    return finish(c, st, out, o, 3);
}

PyObject *vpy_op_as_type(PyObject *x, PyObject *dtype)
{
    vpy_tensor *t = tensor_arg(x);
    int dt = t ? vpy_dtype_arg(dtype) : -1;
    if (dt < 0)
        return NULL;
    CALL_ON(t, vk.vkt_as_type, (vkt_dtype)dt);
}

static PyObject *op_as_type(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    (void)m;
    static const char *const names[] = {"x", "dtype"};
    PyObject *a[2];
    return vpy_args("as_type", args, nargs, kw, names, 2, 2, a) < 0 ? NULL
                                                                    : vpy_op_as_type(a[0], a[1]);
}

/* ---- reductions ------------------------------------------------------------------------------ */

PyObject *vpy_op_reduce(vpy_reduce_fn fn, PyObject *x, PyObject *axes, PyObject *keep)
{
    vpy_tensor *t = tensor_arg(x);
    if (!t)
        return NULL;
    int ax[MAXR];
    Py_ssize_t n = 0;
    bool all = !axes || axes == Py_None;
    if (!all && (n = vpy_axes(axes, ax, MAXR, "axes")) < 0)
        return NULL;
    int k = vpy_truth(keep, false);
    if (k < 0)
        return NULL;
    CALL_ON(t, fn, all ? NULL : ax, (int)n, k);
}

#define REDUCE_FN(name)                                                                            \
    static PyObject *op_##name(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) \
    {                                                                                              \
        (void)m;                                                                                   \
        static const char *const names[] = {"x", "axes", "keep_axes"};                             \
        PyObject *a[3];                                                                            \
        if (vpy_args(#name, args, nargs, kw, names, 1, 3, a) < 0)                                  \
            return NULL;                                                                           \
        return vpy_op_reduce(vk.vkt_##name, a[0], a[1], a[2]);                                     \
    }
VKT_REDUCE_OPS(REDUCE_FN)
#undef REDUCE_FN

/* argmax and argmin (x, axis=None, keep_axis=False), sort and argsort (x, axis=0,
 * direction='asc'): one tensor, an axis, a flag. */
typedef int (*axis_fn)(const vkt_tensor *, int, bool, vkt_tensor **);

static PyObject *axis_op(const char *name, axis_fn fn, bool sorts, PyObject *const *args,
                         Py_ssize_t nargs, PyObject *kw)
{
    static const char *const arg_names[] = {"x", "axis", "keep_axis"}, *const sort_names[] = {
                                                                           "x", "axis",
                                                                           "direction"};
    PyObject *a[3];
    int axis, flag = 0;
    if (vpy_args(name, args, nargs, kw, sorts ? sort_names : arg_names, 1, 3, a) < 0)
        return NULL;
    vpy_tensor *t = tensor_arg(a[0]);
    if (!t || vpy_index(a[1], sorts ? 0 : VKT_ALL_AXES, &axis) < 0)
        return NULL;
    if (!sorts && (flag = vpy_truth(a[2], false)) < 0)
        return NULL;
    if (sorts && a[2]) {
        bool asc = PyUnicode_Check(a[2]) && PyUnicode_CompareWithASCIIString(a[2], "asc") == 0;
        flag = PyUnicode_Check(a[2]) && PyUnicode_CompareWithASCIIString(a[2], "desc") == 0;
        if (!asc && !flag)
            return vpy_error(VKT_EINVAL, "direction must be 'asc' or 'desc', got %R", a[2]);
    }
    CALL_ON(t, fn, axis, flag);
}

#define AXIS_FN(name, sorts)                                                                       \
    static PyObject *op_##name(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) \
    {                                                                                              \
        (void)m;                                                                                   \
        return axis_op(#name, vk.vkt_##name, sorts, args, nargs, kw);                              \
    }
AXIS_FN(argmax, false)
AXIS_FN(argmin, false)
AXIS_FN(sort, true)
AXIS_FN(argsort, true)
#undef AXIS_FN

/* ---- data movement --------------------------------------------------------------------------- */

static PyObject *int_tuple(const int64_t *v, Py_ssize_t n)
{
    PyObject *t = PyTuple_New(n);
    for (Py_ssize_t i = 0; t && i < n; i++) {
        PyObject *d = PyLong_FromLongLong(v[i]);
        if (!d)
            Py_CLEAR(t);
        else
            PyTuple_SET_ITEM(t, i, d);
    }
    return t;
}

PyObject *vpy_op_reshape(PyObject *x, PyObject *shape)
{
    vpy_tensor *t = tensor_arg(x);
    int64_t dims[MAXR];
    Py_ssize_t n = t ? vpy_ints(shape, dims, MAXR, "shape") : -1;
    if (n < 0)
        return NULL;
    int inferred = -1, many = 0;
    int64_t rest = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (dims[i] == -1) {
            inferred = (int)i;
            many++;
        } else {
            rest *= dims[i];
        }
    }
    if (inferred >= 0) {
        if (!t->ctx->h)
            return vpy_closed_error();
        int64_t size = (int64_t)vk.vkt_tensor_numel(t->h);
        if (many > 1 || rest == 0 || size % rest) {
            PyObject *from = vpy_shape(t), *to = from ? int_tuple(dims, n) : NULL;
            if (to)
                vpy_error(VKT_ESHAPE, "cannot reshape %R to %R", from, to);
            Py_XDECREF(from);
            Py_XDECREF(to);
            return NULL;
        }
        dims[inferred] = size / rest;
    }
    CALL_ON(t, vk.vkt_reshape, dims, (int)n);
}

static PyObject *op_reshape(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    (void)m;
    static const char *const names[] = {"x", "shape"};
    PyObject *a[2];
    return vpy_args("reshape", args, nargs, kw, names, 2, 2, a) < 0 ? NULL
                                                                    : vpy_op_reshape(a[0], a[1]);
}

/* An optional axis list of exactly rank axes ("{op}: n axes given for rank r"): its count, 0
 * for None (out unused), or -1. */
static Py_ssize_t rank_axes(PyObject *axes, int rank, const char *op, int *out)
{
    if (!axes || axes == Py_None)
        return 0;
    Py_ssize_t n = vpy_axes(axes, out, MAXR, "axes");
    if (n >= 0 && n != rank) {
        vpy_error(VKT_EAXIS, "%s: %zd axes given for rank %d", op, n, rank);
        return -1;
    }
    return n;
}

PyObject *vpy_op_transpose(PyObject *x, PyObject *axes)
{
    vpy_tensor *t = tensor_arg(x);
    int perm[MAXR];
    int rank = t ? vpy_rank(t) : -1;
    if (rank < 0 || rank_axes(axes, rank, "transpose", perm) < 0)
        return NULL;
    CALL_ON(t, vk.vkt_transpose, axes && axes != Py_None ? perm : NULL);
}

static PyObject *op_transpose(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    (void)m;
    static const char *const names[] = {"x", "axes"};
    PyObject *a[2];
    return vpy_args("transpose", args, nargs, kw, names, 1, 2, a) < 0
               ? NULL
               : vpy_op_transpose(a[0], a[1]);
}

static PyObject *op_broadcast(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    (void)m;
    static const char *const names[] = {"x", "shape", "axes"};
    PyObject *a[3];
    int64_t dims[MAXR];
    int axes[MAXR];
    if (vpy_args("broadcast", args, nargs, kw, names, 2, 3, a) < 0)
        return NULL;
    vpy_tensor *t = tensor_arg(a[0]);
    Py_ssize_t n = t ? vpy_ints(a[1], dims, MAXR, "shape") : -1;
    int rank = n < 0 ? -1 : vpy_rank(t);
    if (rank < 0 || rank_axes(a[2], rank, "broadcast", axes) < 0)
        return NULL;
    CALL_ON(t, vk.vkt_broadcast, dims, (int)n, a[2] && a[2] != Py_None ? axes : NULL);
}

static PyObject *op_slice(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    (void)m;
    static const char *const names[] = {"x", "start_indices", "lengths", "strides"};
    PyObject *a[4];
    int64_t start[MAXR], lens[MAXR], strides[MAXR];
    if (vpy_args("slice", args, nargs, kw, names, 3, 4, a) < 0)
        return NULL;
    vpy_tensor *t = tensor_arg(a[0]);
    int rank = t ? vpy_rank(t) : -1;
    if (rank < 0 || vpy_per_axis(a[1], rank, "start_indices", 0, start) < 0 ||
        vpy_per_axis(a[2], rank, "lengths", 0, lens) < 0 ||
        vpy_per_axis(a[3], rank, "strides", 1, strides) < 0)
        return NULL;
    CALL_ON(t, vk.vkt_slice, start, lens, strides);
}

/* pad's config: per axis (lo, hi) or (lo, hi, interior). */
static int pad_config(PyObject *config, int rank, int64_t *lo, int64_t *hi, int64_t *interior)
{
    PyObject *seq =
        PySequence_Fast(config, "pad: config must be a list of (lo, hi) or (lo, hi, interior)");
    if (!seq)
        return -1;
    int rc = 0;
    if (PySequence_Fast_GET_SIZE(seq) != rank) {
        vpy_error(VKT_ESHAPE, "pad: %zd axis configurations for rank %d",
                  PySequence_Fast_GET_SIZE(seq), rank);
        rc = -1;
    }
    for (int i = 0; rc == 0 && i < rank; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        PyObject *c = PySequence_Fast(item, "");
        Py_ssize_t len = c ? PySequence_Fast_GET_SIZE(c) : 0;
        if (!c || (len != 2 && len != 3)) {
            PyErr_Clear();
            vpy_error(VKT_EINVAL, "pad: each axis takes (lo, hi) or (lo, hi, interior), got %R",
                      item);
            rc = -1;
        } else {
            int64_t v[3] = {0, 0, 0};
            for (Py_ssize_t j = 0; rc == 0 && j < len; j++)
                if (vpy_ints(PySequence_Fast_GET_ITEM(c, j), &v[j], 1, "pad") != 1)
                    rc = -1;
            lo[i] = v[0];
            hi[i] = v[1];
            interior[i] = v[2];
        }
        Py_XDECREF(c);
    }
    Py_DECREF(seq);
    return rc;
}

static PyObject *op_pad(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    (void)m;
    static const char *const names[] = {"x", "value", "config"};
    PyObject *a[3];
    int64_t lo[MAXR], hi[MAXR], interior[MAXR];
    vpy_operand o[2];
    int likes[2] = {VPY_LIKE_NONE, 0};
    if (vpy_args("pad", args, nargs, kw, names, 3, 3, a) < 0)
        return NULL;
    vpy_tensor *t = tensor_arg(a[0]);
    int rank = t ? vpy_rank(t) : -1;
    if (rank < 0 || pad_config(a[2], rank, lo, hi, interior) < 0 || (likes[1] = vpy_dtype(t)) < 0)
        return NULL;
    PyObject *xs[2] = {a[0], a[1]};
    if (vpy_operands(t->ctx, xs, 2, likes, o) < 0 || begin(t->ctx, o, 2) < 0)
        return NULL;
    vkt_tensor *out = NULL;
    int st = vk.vkt_pad(t->h, vpy_h(&o[1]), lo, hi, interior, &out);
    return finish(t->ctx, st, out, o, 2);
}

static PyObject *op_reverse(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    (void)m;
    static const char *const names[] = {"x", "axes"};
    PyObject *a[2];
    int axes[MAXR];
    Py_ssize_t n;
    if (vpy_args("reverse", args, nargs, kw, names, 1, 2, a) < 0)
        return NULL;
    vpy_tensor *t = tensor_arg(a[0]);
    int rank = t ? vpy_rank(t) : -1;
    if (rank < 0)
        return NULL;
    if (!a[1] || a[1] == Py_None) { /* every axis */
        for (n = 0; n < rank; n++)
            axes[n] = (int)n;
    } else if ((n = vpy_axes(a[1], axes, MAXR, "axes")) < 0) {
        return NULL;
    }
    CALL_ON(t, vk.vkt_reverse, axes, (int)n);
}

static PyObject *op_concatenate(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    (void)m;
    static const char *const names[] = {"tensors", "axis"};
    PyObject *a[2];
    int axis, like;
    if (vpy_args("concatenate", args, nargs, kw, names, 1, 2, a) < 0 ||
        vpy_index(a[1], 0, &axis) < 0)
        return NULL;
    PyObject *seq = PySequence_Fast(a[0], "concatenate takes a sequence of tensors");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **xs = PySequence_Fast_ITEMS(seq);
    vpy_ctx *c = n ? vpy_ctx_of(xs, (int)n) : NULL;
    if (!n)
        vpy_error(VKT_EINVAL, "concatenate needs at least one tensor");
    if (c && n > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "concatenate: too many tensors");
        c = NULL;
    }
    if (!c || vpy_like(xs, (int)n, &like) < 0) {
        Py_DECREF(seq);
        return NULL;
    }
    vpy_operand *o = PyMem_Calloc((size_t)n, sizeof *o);
    int *likes = PyMem_Calloc((size_t)n, sizeof *likes);
    const vkt_tensor **hs = PyMem_Calloc((size_t)n, sizeof *hs);
    PyObject *r = NULL;
    if (!o || !likes || !hs) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        likes[i] = like;
    if (vpy_operands(c, xs, (int)n, likes, o) < 0 || begin(c, o, (int)n) < 0)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++)
        hs[i] = vpy_h(&o[i]);
    vkt_tensor *out = NULL;
    vpy_failure f;
    int st = vk.vkt_concatenate(hs, (int)n, axis, &out);
    if (st)
        vpy_failure_take(&f, st);
    vpy_operands_free(o, (int)n);
    if (st) {
        vpy_leave(c);
        vpy_failure_raise(&f);
    } else {
        if (c->rec)
            for (Py_ssize_t i = 0; i < n; i++)
                vpy_touch(c, &o[i].t, 1);
        r = vpy_made(c, 0, out, NULL, 0);
    }
    vpy_operands_done(o, (int)n);
done:
    PyMem_Free(o);
    PyMem_Free(likes);
    PyMem_Free(hs);
    Py_DECREF(seq);
    return r;
}

static PyObject *op_assign(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    (void)m;
    static const char *const names[] = {"dst", "src"};
    PyObject *a[2];
    if (vpy_args("assign", args, nargs, kw, names, 2, 2, a) < 0)
        return NULL;
    if (!vpy_is_tensor(a[0]))
        return vpy_error(VKT_EINVAL,
                         "assign: dst must be a vkt.Tensor (the tensor written), got %s",
                         Py_TYPE(a[0])->tp_name);
    vpy_tensor *dst = (vpy_tensor *)a[0];
    vpy_ctx *c = dst->ctx;
    int dtype = vpy_dtype(dst);
    if (dtype < 0)
        return NULL;
    vpy_operand src = {.t = NULL};
    PyObject *from = a[1];
    if (!vpy_is_tensor(from) && !PyLong_Check(from) && !PyFloat_Check(from)) {
        /* host data converts to dst's dtype; other numbers come back as int or float */
        PyObject *dt = PyUnicode_FromString(vk.vkt_dtype_name((vkt_dtype)dtype));
        from = dt && vpy_hook_operand
                   ? PyObject_CallFunctionObjArgs(vpy_hook_operand, a[1], (PyObject *)c, dt, NULL)
                   : NULL;
        Py_XDECREF(dt);
        if (!from)
            return NULL;
        src.owned = from;
    }
    if (vpy_is_tensor(from)) {
        if (((vpy_tensor *)from)->ctx != c) {
            vpy_operands_done(&src, 1);
            return vpy_error(VKT_ECTX, "tensors from different contexts mixed in one op");
        }
        src.t = (vpy_tensor *)from;
    } else {
        /* a number fills dst */
        double v = PyFloat_Check(from) ? PyFloat_AS_DOUBLE(from) : PyLong_AsDouble(from);
        if (v == -1.0 && PyErr_Occurred()) {
            vpy_operands_done(&src, 1);
            return NULL;
        }
        src.dtype = dtype;
        src.value = v;
    }
    if (vpy_enter(c) < 0) {
        vpy_operands_done(&src, 1);
        return NULL;
    }
    int st = 0;
    if (!src.t) {
        int rank = vk.vkt_tensor_rank(dst->h);
        st = vk.vkt_full(c->h, (vkt_dtype)dtype, vk.vkt_tensor_shape(dst->h), rank, src.value,
                         &src.tmp);
    }
    if (!st)
        st = vk.vkt_assign(dst->h, vpy_h(&src));
    vpy_failure f;
    if (st)
        vpy_failure_take(&f, st);
    vpy_operands_free(&src, 1);
    if (!st && c->rec) {
        vpy_tensor *used[2] = {dst, src.t};
        vpy_touch(c, used, 2);
    }
    vpy_leave(c);
    vpy_operands_done(&src, 1);
    return st ? vpy_failure_raise(&f) : Py_NewRef(dst);
}

static PyObject *op_gather(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    (void)m;
    static const char *const names[] = {"x", "indices", "axes"};
    PyObject *a[3];
    vpy_operand o[2];
    int likes[2] = {VPY_LIKE_NONE, VKT_S32}, axes[MAXR];
    if (vpy_args("gather", args, nargs, kw, names, 2, 3, a) < 0)
        return NULL;
    vpy_ctx *c = vpy_ctx_of(a, 2);
    if (!c || vpy_operands(c, a, 2, likes, o) < 0)
        return NULL;
    bool some = a[2] && a[2] != Py_None;
    Py_ssize_t n = some ? vpy_axes(a[2], axes, MAXR, "axes") : 0;
    if (n >= 0 && some) {
        /* the indices' last axis holds one index per axis */
        PyObject *shape = o[1].t ? vpy_shape(o[1].t) : PyTuple_New(0);
        Py_ssize_t r = shape ? PyTuple_GET_SIZE(shape) : 0;
        if (shape && (r == 0 || PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, r - 1)) != n))
            vpy_error(VKT_EAXIS, "gather: %zd axes for indices of shape %R", n, shape);
        if (!shape || PyErr_Occurred())
            n = -1;
        Py_XDECREF(shape);
    }
    if (n < 0) {
        vpy_operands_done(o, 2);
        return NULL;
    }
    if (begin(c, o, 2) < 0)
        return NULL;
    vkt_tensor *out = NULL;
    int st = vk.vkt_gather(vpy_h(&o[0]), vpy_h(&o[1]), some ? axes : NULL, &out);
    return finish(c, st, out, o, 2);
}

/* ---- contraction and sorting ----------------------------------------------------------------- */

static PyObject *dot_call(vpy_ctx *c, vpy_operand *o, const int *ca, const int *ba, const int *cb,
                          const int *bb, int nc, int nb)
{
    if (begin(c, o, 2) < 0)
        return NULL;
    vkt_tensor *out = NULL;
    int st = vk.vkt_dot(vpy_h(&o[0]), ca, ba, vpy_h(&o[1]), cb, bb, nc, nb, &out);
    return finish(c, st, out, o, 2);
}

/* Nx.dot/6's axis lists (None for none) into C arrays; the sides must match in number. */
static int dot_axes(PyObject *const *lists, int *ax, int *nc, int *nb)
{
    Py_ssize_t n[4];
    for (int i = 0; i < 4; i++) {
        n[i] = lists[i] && lists[i] != Py_None ? vpy_axes(lists[i], ax + i * MAXR, MAXR, "dot axes")
                                               : 0;
        if (n[i] < 0)
            return -1;
    }
    /* lists: contract_a, batch_a, contract_b, batch_b */
    if (n[0] != n[2] || n[1] != n[3]) {
        vpy_error(
            VKT_EAXIS,
            "dot: %zd and %zd contracting axes, %zd and %zd batch axes: each side needs as many "
            "as the other",
            n[0], n[2], n[1], n[3]);
        return -1;
    }
    *nc = (int)n[0];
    *nb = (int)n[1];
    return 0;
}

static PyObject *op_dot(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    int ax[4 * MAXR], nc, nb, like, likes[2];
    PyObject *lists[4] = {NULL, NULL, NULL, NULL}, *xs[2];
    vpy_operand o[2];
    if (nargs == 2) {
        xs[0] = args[0];
        xs[1] = args[1];
    } else if (nargs == 4 || nargs == 6) {
        /* dot(a, ca, b, cb) or dot(a, ca, ba, b, cb, bb) */
        int bpos = nargs == 4 ? 2 : 3;
        xs[0] = args[0];
        xs[1] = args[bpos];
        lists[0] = args[1];
        lists[2] = args[bpos + 1];
        if (nargs == 6) {
            lists[1] = args[2];
            lists[3] = args[5];
        }
    } else {
        return vpy_error(VKT_EINVAL, "dot takes 2, 4 or 6 arguments (Nx.dot/2, /4, /6), got %zd",
                         nargs);
    }
    vpy_ctx *c = vpy_ctx_of(xs, 2);
    if (!c || vpy_like(xs, 2, &like) < 0)
        return NULL;
    likes[0] = likes[1] = like;
    if (vpy_operands(c, xs, 2, likes, o) < 0)
        return NULL;
    if (nargs == 2) {
        int ra = vpy_operand_rank(&o[0]), rb = ra < 0 ? -1 : vpy_operand_rank(&o[1]);
        if (rb < 0) {
            vpy_operands_done(o, 2);
            return NULL;
        }
        if (ra == 0 || rb == 0) { /* a scalar multiplies */
            PyObject *x = o[0].t ? (PyObject *)o[0].t : xs[0],
                     *y = o[1].t ? (PyObject *)o[1].t : xs[1];
            PyObject *r = vpy_binary(vk.vkt_multiply, x, y);
            vpy_operands_done(o, 2);
            return r;
        }
        /* a's last axis with b's only or second to last: numpy.dot */
        int ca = ra - 1, cb = rb == 1 ? 0 : rb - 2;
        return dot_call(c, o, &ca, NULL, &cb, NULL, 1, 0);
    }
    if (dot_axes(lists, ax, &nc, &nb) < 0) {
        vpy_operands_done(o, 2);
        return NULL;
    }
    return dot_call(c, o, ax, ax + MAXR, ax + 2 * MAXR, ax + 3 * MAXR, nc, nb);
}

/* ---- convolution and windows --------------------------------------------------------------- */

/* A conv permutation argument: rank axes into perm; sets has. */
static int conv_perm(PyObject *v, int rank, const char *what, int *perm, bool *has)
{
    *has = v && v != Py_None;
    if (!*has)
        return 0;
    Py_ssize_t n = vpy_axes(v, perm, MAXR, what);
    if (n >= 0 && n != rank) {
        vpy_error(VKT_EAXIS, "conv: %s needs %d axes, got %zd", what, rank, n);
        return -1;
    }
    return n < 0 ? -1 : 0;
}

static int group_size(PyObject *v, int64_t *out)
{
    if (!v) {
        *out = 1;
        return 0;
    }
    PyObject *i = PyNumber_Index(v);
    if (!i)
        return -1;
    *out = PyLong_AsLongLong(i);
    Py_DECREF(i);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

/* conv's options from its arguments (a[2..10] as named below), for operands of rank rank. */
static int conv_opts(PyObject *const *a, int rank, vpy_tensor *k, vkt_conv_opts *o)
{
    int n = rank - 2;
    memset(o, 0, sizeof *o);
    if (vpy_per_axis(a[2], n, "strides", 1, o->strides) < 0 ||
        vpy_per_axis(a[4], n, "input_dilation", 1, o->input_dilation) < 0 ||
        vpy_per_axis(a[5], n, "kernel_dilation", 1, o->kernel_dilation) < 0 ||
        group_size(a[6], &o->feature_group_size) < 0 ||
        group_size(a[7], &o->batch_group_size) < 0 ||
        conv_perm(a[8], rank, "input_permutation", o->input_permutation,
                  &o->has_input_permutation) < 0 ||
        conv_perm(a[9], rank, "kernel_permutation", o->kernel_permutation,
                  &o->has_kernel_permutation) < 0 ||
        conv_perm(a[10], rank, "output_permutation", o->output_permutation,
                  &o->has_output_permutation) < 0)
        return -1;
    int64_t sizes[VKT_MAX_SPATIAL] = {0};
    if (a[3] && vpy_is_same(a[3])) {
        /* 'same' pads by the dilated kernel's spatial size - 1 (Nx) */
        PyObject *kshape = vpy_shape(k);
        if (!kshape)
            return -1;
        for (int i = 0; i < rank; i++) {
            int ax = o->has_kernel_permutation ? o->kernel_permutation[i] : i;
            if (ax < 0 || ax >= rank) {
                PyObject *perm = PySequence_List(a[9]);
                if (perm)
                    vpy_error(VKT_EAXIS, "conv: kernel_permutation %R is out of range for rank %d",
                              perm, rank);
                Py_XDECREF(perm);
                Py_DECREF(kshape);
                return -1;
            }
            if (i >= 2)
                sizes[i - 2] = (PyLong_AsLongLong(PyTuple_GET_ITEM(kshape, ax)) - 1) *
                                   o->kernel_dilation[i - 2] +
                               1;
        }
        Py_DECREF(kshape);
    }
    return vpy_padding(a[3], n, sizes, "conv", o->padding_lo, o->padding_hi);
}

static PyObject *op_conv(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    (void)m;
    static const char *const names[] = {"input",
                                        "kernel",
                                        "strides",
                                        "padding",
                                        "input_dilation",
                                        "kernel_dilation",
                                        "feature_group_size",
                                        "batch_group_size",
                                        "input_permutation",
                                        "kernel_permutation",
                                        "output_permutation"};
    PyObject *a[11];
    vpy_operand o[2];
    int like, likes[2];
    if (vpy_args("conv", args, nargs, kw, names, 2, 11, a) < 0)
        return NULL;
    vpy_ctx *c = vpy_ctx_of(a, 2);
    if (!c || vpy_like(a, 2, &like) < 0)
        return NULL;
    likes[0] = likes[1] = like;
    if (vpy_operands(c, a, 2, likes, o) < 0)
        return NULL;
    int rank = vpy_operand_rank(&o[0]), krank = rank < 0 ? -1 : vpy_operand_rank(&o[1]);
    vkt_conv_opts opts;
    if (krank >= 0 && (rank < 3 || rank > VKT_MAX_RANK || krank != rank)) {
        PyObject *xs = o[0].t ? vpy_shape(o[0].t) : PyTuple_New(0);
        PyObject *ks = !xs ? NULL : o[1].t ? vpy_shape(o[1].t) : PyTuple_New(0);
        if (ks)
            vpy_error(VKT_ESHAPE,
                      "conv: input and kernel need one rank from 3 to %d, got shapes %R and %R",
                      VKT_MAX_RANK, xs, ks);
        Py_XDECREF(xs);
        Py_XDECREF(ks);
        krank = -1;
    }
    if (krank < 0 || conv_opts(a, rank, o[1].t, &opts) < 0) {
        vpy_operands_done(o, 2);
        return NULL;
    }
    if (begin(c, o, 2) < 0)
        return NULL;
    vkt_tensor *out = NULL;
    int st = vk.vkt_conv(vpy_h(&o[0]), vpy_h(&o[1]), &opts, &out);
    return finish(c, st, out, o, 2);
}

/* The window ops' window and options, for a tensor of rank rank. */
static int window_opts(PyObject *win, PyObject *strides, PyObject *padding, PyObject *dilations,
                       int rank, const char *what, int64_t *window, vkt_window_opts *o)
{
    memset(o, 0, sizeof *o);
    if (vpy_per_axis(win, rank, "window_dimensions", 1, window) < 0 ||
        vpy_per_axis(strides, rank, "strides", 1, o->strides) < 0 ||
        vpy_per_axis(dilations, rank, "window_dilations", 1, o->window_dilations) < 0)
        return -1;
    int64_t sizes[VKT_MAX_RANK];
    for (int i = 0; i < rank; i++)
        sizes[i] = (window[i] - 1) * o->window_dilations[i] + 1;
    return vpy_padding(padding, rank, sizes, what, o->padding_lo, o->padding_hi);
}

typedef int (*window_fn)(const vkt_tensor *, const int64_t *, const vkt_window_opts *,
                         vkt_tensor **);

static PyObject *window_op(const char *name, window_fn fn, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kw)
{
    static const char *const names[] = {"x", "window_dimensions", "strides", "padding",
                                        "window_dilations"};
    PyObject *a[5];
    int64_t win[MAXR];
    vkt_window_opts opts;
    if (vpy_args(name, args, nargs, kw, names, 2, 5, a) < 0)
        return NULL;
    vpy_tensor *t = tensor_arg(a[0]);
    int rank = t ? vpy_rank(t) : -1;
    if (rank < 0 || window_opts(a[1], a[2], a[3], a[4], rank, name, win, &opts) < 0)
        return NULL;
    CALL_ON(t, fn, win, &opts);
}

#define WINDOW_FN(name)                                                                            \
    static PyObject *op_##name(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) \
    {                                                                                              \
        (void)m;                                                                                   \
        return window_op(#name, vk.vkt_##name, args, nargs, kw);                                   \
    }
VKT_WINDOW_OPS(WINDOW_FN)
#undef WINDOW_FN

typedef int (*scatter_fn)(const vkt_tensor *, const vkt_tensor *, const vkt_tensor *,
                          const int64_t *, const vkt_window_opts *, vkt_tensor **);

static PyObject *scatter_op(const char *name, scatter_fn fn, PyObject *const *args,
                            Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"x",       "source", "init_value", "window_dimensions",
                                        "strides", "padding"};
    PyObject *a[6];
    int64_t win[MAXR];
    vkt_window_opts opts;
    vpy_operand o[3];
    int likes[2];
    if (vpy_args(name, args, nargs, kw, names, 4, 6, a) < 0)
        return NULL;
    vpy_ctx *c = vpy_ctx_of(a, 2);
    int none = VPY_LIKE_NONE;
    if (!c || vpy_operands(c, a, 1, &none, o) < 0)
        return NULL;
    /* the source and the initial value take x's dtype */
    int rank = vpy_operand_rank(&o[0]);
    if (rank < 0 || (likes[0] = likes[1] = vpy_operand_dtype(&o[0])) < 0 ||
        vpy_operands(c, a + 1, 2, likes, o + 1) < 0) {
        vpy_operands_done(o, 1);
        return NULL;
    }
    if (window_opts(a[3], a[4], a[5], NULL, rank, name, win, &opts) < 0) {
        vpy_operands_done(o, 3);
        return NULL;
    }
    if (begin(c, o, 3) < 0)
        return NULL;
    vkt_tensor *out = NULL;
    int st = fn(vpy_h(&o[0]), vpy_h(&o[1]), vpy_h(&o[2]), win, &opts, &out);
    return finish(c, st, out, o, 3);
}

static PyObject *op_window_scatter_max(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                       PyObject *kw)
{
    (void)m;
    return scatter_op("window_scatter_max", vk.vkt_window_scatter_max, args, nargs, kw);
}

static PyObject *op_window_scatter_min(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                       PyObject *kw)
{
    (void)m;
    return scatter_op("window_scatter_min", vk.vkt_window_scatter_min, args, nargs, kw);
}

/* ---- counters and the support matrix --------------------------------------------------------- */

static PyObject *op_stats(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    if (vpy_lib_require() < 0)
        return NULL;
    size_t n = vk.vkt_stats(NULL, 0);
    vkt_stats_entry *e = PyMem_Calloc(n ? n : 1, sizeof *e);
    if (!e)
        return PyErr_NoMemory();
    size_t got = vk.vkt_stats(e, n);
    PyObject *d = PyDict_New();
    for (size_t i = 0; d && i < (got < n ? got : n); i++) {
        PyObject *v =
            Py_BuildValue("(KKK)", (unsigned long long)e[i].native,
                          (unsigned long long)e[i].fallback, (unsigned long long)e[i].host);
        if (!v || PyDict_SetItemString(d, e[i].op, v) < 0)
            Py_CLEAR(d);
        Py_XDECREF(v);
    }
    PyMem_Free(e);
    return d;
}

static PyObject *op_stats_reset(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    if (vpy_lib_require() < 0)
        return NULL;
    vk.vkt_stats_reset();
    Py_RETURN_NONE;
}

static PyObject *op_op_names(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    if (vpy_lib_require() < 0)
        return NULL;
    size_t n = vk.vkt_op_count();
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *s = PyUnicode_FromString(vk.vkt_op_name(i));
        if (!s)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, (Py_ssize_t)i, s);
    }
    return list;
}

/* _op_support(index, dtype code) -> (vkt_support, the gate's reason) */
static PyObject *op_op_support(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    int i, dt;
    if (nargs != 2)
        return PyErr_Format(PyExc_TypeError, "_op_support takes 2 arguments, got %zd", nargs);
    if (vpy_index(args[0], 0, &i) < 0 || vpy_index(args[1], 0, &dt) < 0 || vpy_lib_require() < 0)
        return NULL;
    if (i < 0 || (size_t)i >= vk.vkt_op_count() || dt < 0 || dt >= VKT_NUM_DTYPES)
        return vpy_error(VKT_EINVAL, "no op %d or dtype %d in the support matrix", i, dt);
    const char *reason = NULL;
    vkt_support s = vk.vkt_op_support((size_t)i, (vkt_dtype)dt, &reason);
    return Py_BuildValue("(is)", (int)s, reason ? reason : "");
}

/* ---- the table ------------------------------------------------------------------------------- */

#define FN(f) (PyCFunction)(void (*)(void))(f)
#define UNARY_DEF(name, cls)                                                                       \
    {#name, FN(op_##name), FASTKW,                                                                 \
     #name "($module, /, x)\n--\n\nElementwise " #name " (vkt_" #name ", Nx." #name ")."},
#define BINARY_DEF(name, cls)                                                                      \
    {#name, FN(op_##name), FASTKW,                                                                 \
     #name "($module, /, a, b)\n--\n\nElementwise " #name " with broadcasting (vkt_" #name         \
           ", Nx." #name ")."},
#define REDUCE_DEF(name)                                                                           \
    {#name, FN(op_##name), FASTKW,                                                                 \
     #name "($module, /, x, axes=None, keep_axes=False)\n--\n\n" #name                             \
           " over axes (all axes when None; an "                                                   \
           "int or a list), keeping them as size 1\nwith keep_axes (vkt_" #name ", Nx." #name      \
           ")."},
#define WINDOW_DEF(name)                                                                           \
    {#name, FN(op_##name), FASTKW,                                                                 \
     #name                                                                                         \
     "($module, /, x, window_dimensions, strides=1, padding='valid', window_dilations=1)\n--\n\n"  \
     "Nx." #name                                                                                   \
     ": reduces every window of shape window_dimensions (strides 1, 'valid'\npadding and "         \
     "dilations 1 by default; padding takes the reduction's identity)."},

PyMethodDef vpy_op_methods[] = {
    VKT_UNARY_OPS(UNARY_DEF) VKT_BINARY_OPS(BINARY_DEF) VKT_REDUCE_OPS(REDUCE_DEF)
        VKT_WINDOW_OPS(WINDOW_DEF){"select", FN(op_select), FASTKW,
                                   "select($module, /, pred, on_true, on_false)\n--\n\npred ? "
                                   "on_true : on_false elementwise, broadcast "
                                   "together (Nx.select)."},
    {"clip", FN(op_clip), FASTKW,
     "clip($module, /, x, min, max)\n--\n\nmin(max(x, min), max) elementwise; keeps x's dtype "
     "(Nx.clip)."},
    {"as_type", FN(op_as_type), FASTKW,
     "as_type($module, /, x, dtype)\n--\n\nx converted to dtype (Nx.as_type: floats to integers "
     "truncate and "
     "saturate)."},
    {"argmax", FN(op_argmax), FASTKW,
     "argmax($module, /, x, axis=None, keep_axis=False)\n--\n\nIndex (s32) of the first maximum "
     "along axis, or "
     "over the flattened tensor\nwhen axis is None (vkt_argmax, Nx.argmax)."},
    {"argmin", FN(op_argmin), FASTKW,
     "argmin($module, /, x, axis=None, keep_axis=False)\n--\n\nIndex (s32) of the first minimum "
     "along axis, or "
     "over the flattened tensor\nwhen axis is None (vkt_argmin, Nx.argmin)."},
    {"reshape", FN(op_reshape), FASTKW,
     "reshape($module, /, x, shape)\n--\n\nx with a new shape of the same size (a view); one "
     "dimension may be -1 "
     "(inferred)."},
    {"transpose", FN(op_transpose), FASTKW,
     "transpose($module, /, x, axes=None)\n--\n\nOutput axis i is x's axis axes[i]; None reverses "
     "the axes "
     "(Nx.transpose)."},
    {"broadcast", FN(op_broadcast), FASTKW,
     "broadcast($module, /, x, shape, axes=None)\n--\n\nx broadcast to shape; x's axis i goes to "
     "axes[i] (None: "
     "aligned right) (Nx.broadcast)."},
    {"slice", FN(op_slice), FASTKW,
     "slice($module, /, x, start_indices, lengths, strides=1)\n--\n\nx[start : start + length : "
     "stride] per "
     "axis; starts clamp so the window fits (Nx.slice)."},
    {"pad", FN(op_pad), FASTKW,
     "pad($module, /, x, value, config)\n--\n\nx padded per axis by config's (lo, hi) or (lo, hi, "
     "interior), "
     "with value (Nx.pad)."},
    {"reverse", FN(op_reverse), FASTKW,
     "reverse($module, /, x, axes=None)\n--\n\nx reversed along axes (every axis when None) "
     "(Nx.reverse)."},
    {"concatenate", FN(op_concatenate), FASTKW,
     "concatenate($module, /, tensors, axis=0)\n--\n\nThe tensors joined along axis; dtypes "
     "promote "
     "(Nx.concatenate)."},
    {"assign", FN(op_assign), FASTKW,
     "assign($module, /, dst, src)\n--\n\nCopies src's elements into the existing tensor dst, in "
     "place, and "
     "returns dst: the one op\nthat changes a tensor, so a recorded step can update its state (an "
     "SGD step's "
     "weights) on\nevery launch. src must have dst's shape and dtype; host data converts to dst's "
     "dtype, and "
     "a\nnumber fills dst. Runs like any op: natively, through the fallback, or on the host."},
    {"gather", FN(op_gather), FASTKW,
     "gather($module, /, x, indices, axes=None)\n--\n\nNx.gather: indices' last axis indexes x "
     "along axes (the "
     "first k when None)."},
    {"dot", FN(op_dot), METH_FASTCALL,
     "dot(a, *args)\n\nNx.dot: dot(a, b), dot(a, contract_a, b, contract_b) or\ndot(a, contract_a, "
     "batch_a, "
     "b, contract_b, batch_b).\n\ndot(a, b) multiplies when either is a scalar, and otherwise "
     "contracts a's "
     "last\naxis with b's only axis (b of rank 1) or its second to last; the result holds\na's "
     "free axes, then "
     "b's (numpy.dot). With axes, the result holds the batch axes,\nthen a's free axes, then b's."},
    {"sort", FN(op_sort), FASTKW,
     "sort($module, /, x, axis=0, direction='asc')\n--\n\nx sorted along axis, stably; NaN last "
     "ascending, "
     "first descending (Nx.sort)."},
    {"argsort", FN(op_argsort), FASTKW,
     "argsort($module, /, x, axis=0, direction='asc')\n--\n\nThe stable indices (s32) that sort x "
     "along axis "
     "(Nx.argsort)."},
    {"conv", FN(op_conv), FASTKW,
     "conv($module, /, input, kernel, strides=1, padding='valid', input_dilation=1, "
     "kernel_dilation=1, "
     "feature_group_size=1, batch_group_size=1, input_permutation=None, kernel_permutation=None, "
     "output_permutation=None)\n--\n\nNx.conv: an N-d cross-correlation of input [batch, features, "
     "spatial...] with kernel\n[out_features, in_features / groups, spatial...], with Nx's options "
     "and "
     "defaults."},
    {"window_scatter_max", FN(op_window_scatter_max), FASTKW,
     "window_scatter_max($module, /, x, source, init_value, window_dimensions, strides=1, "
     "padding='valid')\n--"
     "\n\nNx.window_scatter_max: adds each window's source value at its first maximum, into "
     "a\ntensor of x's "
     "shape that starts from init_value."},
    {"window_scatter_min", FN(op_window_scatter_min), FASTKW,
     "window_scatter_min($module, /, x, source, init_value, window_dimensions, strides=1, "
     "padding='valid')\n--"
     "\n\nNx.window_scatter_min: adds each window's source value at its first minimum, into "
     "a\ntensor of x's "
     "shape that starts from init_value."},
    {"stats", FN(op_stats), METH_NOARGS,
     "stats($module, /)\n--\n\nlibvkt's per-op counters since the last reset: {op: (native, "
     "fallback, host)}."},
    {"stats_reset", FN(op_stats_reset), METH_NOARGS,
     "stats_reset($module, /)\n--\n\nZeroes libvkt's per-op "
     "counters."},
    {"op_names", FN(op_op_names), METH_NOARGS,
     "op_names($module, /)\n--\n\nThe public ops of the support matrix, without the prefix."},
    {"_op_support", FN(op_op_support), METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};
