/* args.c - Python arguments as the C values libvkt takes: keyword arguments, ints and axis
 * lists, per-axis options, padding, dtypes, and operands (tensors, numbers, other data). */
#include <string.h>

#include "vpy.h"

PyObject *vpy_hook_operand, *vpy_hook_dtype_name;

int vpy_args(const char *fn, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
             const char *const *names, int nreq, int nmax, PyObject **out)
{
    if (nargs > nmax) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d arguments (%zd given)", fn, nmax,
                     nargs);
        return -1;
    }
    for (int i = 0; i < nmax; i++)
        out[i] = i < nargs ? args[i] : NULL;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        int j = 0;
        while (j < nmax && PyUnicode_CompareWithASCIIString(key, names[j]) != 0)
            j++;
        if (j == nmax) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fn, key);
            return -1;
        }
        if (out[j]) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", fn,
                         names[j]);
            return -1;
        }
        out[j] = args[nargs + k];
    }
    for (int i = 0; i < nreq; i++) {
        if (!out[i]) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fn, names[i]);
            return -1;
        }
    }
    return 0;
}

/* One int of an argument by operator.index, as int64; -1 with vkt.Error naming the argument
 * when it is not an integer or does not fit. */
static int one_int(PyObject *item, PyObject *whole, const char *what, int64_t *out)
{
    PyObject *i = PyNumber_Index(item);
    if (!i) {
        if (!PyErr_ExceptionMatches(PyExc_TypeError))
            return -1;
        PyErr_Clear();
        vpy_error(VKT_EINVAL, "%s must be integers, got %R", what, whole);
        return -1;
    }
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
    Py_DECREF(i);
    if (overflow) {
        vpy_error(VKT_EINVAL, "%s: %R is out of range", what, item);
        return -1;
    }
    if (v == -1 && PyErr_Occurred())
        return -1;
    *out = v;
    return 0;
}

/* An int alone, as an argument that takes one or many: a Python int, or any integer type
 * that is not a sequence (numpy's). */
static bool single_int(PyObject *v)
{
    return PyLong_Check(v) || (PyIndex_Check(v) && !PySequence_Check(v));
}

/* v as a list or tuple, or NULL with vkt.Error "{what} must be integers" when it is no
 * sequence. */
static PyObject *int_seq(PyObject *v, const char *what)
{
    PyObject *seq = PySequence_Fast(v, "");
    if (!seq && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        vpy_error(VKT_EINVAL, "%s must be integers, got %R", what, v);
    }
    return seq;
}

Py_ssize_t vpy_ints(PyObject *v, int64_t *out, Py_ssize_t max, const char *what)
{
    if (single_int(v))
        return one_int(v, v, what, out) < 0 ? -1 : 1;
    PyObject *seq = int_seq(v, what);
    if (!seq)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > max) {
        Py_DECREF(seq);
        vpy_error(VKT_EINVAL, "%s: %zd values, more than a tensor of rank %d takes", what, n,
                  VKT_MAX_RANK);
        return -1;
    }
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (one_int(items[i], v, what, &out[i]) < 0) {
            Py_DECREF(seq);
            return -1;
        }
    }
    Py_DECREF(seq);
    return n;
}

Py_ssize_t vpy_axes(PyObject *v, int *out, Py_ssize_t max, const char *what)
{
    int64_t wide[VKT_MAX_RANK + 1];
    if (max > VKT_MAX_RANK + 1)
        max = VKT_MAX_RANK + 1;
    Py_ssize_t n = vpy_ints(v, wide, max, what);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (wide[i] < INT32_MIN || wide[i] > INT32_MAX) {
            vpy_error(VKT_EAXIS, "%s: %lld is out of range", what, (long long)wide[i]);
            return -1;
        }
        out[i] = (int)wide[i];
    }
    return n;
}

int vpy_per_axis(PyObject *v, int n, const char *what, int64_t def, int64_t *out)
{
    if (!v || v == Py_None) {
        for (int i = 0; i < n; i++)
            out[i] = def;
        return 0;
    }
    if (single_int(v)) {
        if (one_int(v, v, what, &out[0]) < 0)
            return -1;
        for (int i = 1; i < n; i++)
            out[i] = out[0];
        return 0;
    }
    PyObject *seq = int_seq(v, what);
    if (!seq)
        return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    int rc = 0;
    if (len != n) {
        vpy_error(VKT_ESHAPE, "%s needs %d values (one per axis), got %zd", what, n, len);
        rc = -1;
    }
    for (Py_ssize_t i = 0; rc == 0 && i < len; i++)
        rc = one_int(PySequence_Fast_GET_ITEM(seq, i), v, what, &out[i]);
    Py_DECREF(seq);
    return rc;
}

bool vpy_is_same(PyObject *padding)
{
    return PyUnicode_Check(padding) && PyUnicode_CompareWithASCIIString(padding, "same") == 0;
}

int vpy_padding(PyObject *v, int n, const int64_t *sizes, const char *what, int64_t *lo,
                int64_t *hi)
{
    if (!v || PyUnicode_Check(v)) {
        bool valid = !v || PyUnicode_CompareWithASCIIString(v, "valid") == 0;
        if (!valid && !vpy_is_same(v)) {
            vpy_error(VKT_EINVAL,
                      "%s: padding must be 'valid', 'same' or a list of (lo, hi), got %R", what, v);
            return -1;
        }
        for (int i = 0; i < n; i++) {
            int64_t total = valid || sizes[i] < 1 ? 0 : sizes[i] - 1;
            lo[i] = total / 2;
            hi[i] = total - total / 2;
        }
        return 0;
    }
    PyObject *seq = PySequence_Fast(v, "");
    if (!seq && !PyErr_ExceptionMatches(PyExc_TypeError))
        return -1;
    PyErr_Clear();
    int rc = seq && PySequence_Fast_GET_SIZE(seq) == n ? 0 : -1;
    for (int i = 0; rc == 0 && i < n; i++) {
        PyObject *pair = PySequence_Fast(PySequence_Fast_GET_ITEM(seq, i), "");
        if (!pair || PySequence_Fast_GET_SIZE(pair) != 2) {
            PyErr_Clear();
            rc = -1;
        } else if (one_int(PySequence_Fast_GET_ITEM(pair, 0), v, "padding", &lo[i]) < 0 ||
                   one_int(PySequence_Fast_GET_ITEM(pair, 1), v, "padding", &hi[i]) < 0) {
            rc = -2;
        }
        Py_XDECREF(pair);
    }
    Py_XDECREF(seq);
    if (rc == -1)
        vpy_error(VKT_ESHAPE, "%s: padding needs %d (lo, hi) pairs, got %R", what, n, v);
    return rc < 0 ? -1 : 0;
}

int vpy_dtype_arg(PyObject *d)
{
    int code = PyUnicode_Check(d) ? vpy_dtype_of_name(d) : -1;
    if (code >= 0)
        return code;
    if (!vpy_hook_dtype_name)
        return vpy_error(VKT_EINVAL, "not a dtype: %R (expected one of f32, f64, s32, u8)", d), -1;
    /* numpy dtypes and the like: the package's rule names them */
    PyObject *name = PyObject_CallOneArg(vpy_hook_dtype_name, d);
    if (!name)
        return -1;
    code = PyUnicode_Check(name) ? vpy_dtype_of_name(name) : -1;
    Py_DECREF(name);
    if (code < 0)
        vpy_error(VKT_EDTYPE, "dtype %R has no vkt equivalent (f32, f64, s32, u8)", d);
    return code;
}

int vpy_residency_arg(PyObject *where, const char *what)
{
    static const char *const names[] = {"device", "host"};
    for (int i = 0; i < 2; i++)
        if (PyUnicode_Check(where) && PyUnicode_CompareWithASCIIString(where, names[i]) == 0)
            return i;
    vpy_error(VKT_EINVAL, "%s must be 'device' or 'host', got %R", what, where);
    return -1;
}

int vpy_truth(PyObject *v, bool def)
{
    return v ? PyObject_IsTrue(v) : def;
}

int vpy_index(PyObject *v, int def, int *out)
{
    if (!v || v == Py_None) {
        *out = def;
        return 0;
    }
    PyObject *i = PyNumber_Index(v);
    if (!i)
        return -1;
    int overflow;
    long x = PyLong_AsLongAndOverflow(i, &overflow);
    Py_DECREF(i);
    if (overflow || x < INT32_MIN || x > INT32_MAX) {
        vpy_error(VKT_EAXIS, "%R is out of range", v);
        return -1;
    }
    if (x == -1 && PyErr_Occurred())
        return -1;
    *out = (int)x;
    return 0;
}

/* ---- operands -------------------------------------------------------------------------------- */

vpy_ctx *vpy_ctx_of(PyObject *const *xs, int n)
{
    for (int i = 0; i < n; i++)
        if (vpy_is_tensor(xs[i]))
            return ((vpy_tensor *)xs[i])->ctx;
    vpy_error(VKT_EINVAL,
              "needs at least one vkt.Tensor among its operands (make one with ctx.tensor)");
    return NULL;
}

int vpy_like(PyObject *const *xs, int n, int *like)
{
    for (int i = 0; i < n; i++)
        if (vpy_is_tensor(xs[i]))
            return (*like = vpy_dtype((vpy_tensor *)xs[i])) < 0 ? -1 : 0;
    *like = VPY_LIKE_NONE;
    return 0;
}

/* The dtype a Python number takes next to a tensor of dtype like (Nx): an integer keeps an
 * integer tensor's type where it fits, else s32; any number takes a float tensor's type; a
 * float alone is f32. */
static int number(PyObject *x, int like, vpy_operand *o)
{
    bool floats = like == VKT_F32 || like == VKT_F64;
    if (PyFloat_Check(x)) {
        o->dtype = floats ? like : VKT_F32;
        o->value = PyFloat_AS_DOUBLE(x);
        return 0;
    }
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(x, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (floats) {
        o->dtype = like;
        o->value = PyLong_AsDouble(x);
        return o->value == -1.0 && PyErr_Occurred() ? -1 : 0;
    }
    if (!overflow && like == VKT_U8 && v >= 0 && v <= 255)
        o->dtype = VKT_U8;
    else if (!overflow && v >= INT32_MIN && v <= INT32_MAX)
        o->dtype = VKT_S32;
    else
        return vpy_error(VKT_EDTYPE, "%S does not fit any integer dtype of vkt (s32, u8)", x), -1;
    o->value = (double)v;
    return 0;
}

static int one_operand(vpy_ctx *c, PyObject *x, int like, vpy_operand *o)
{
    *o = (vpy_operand){.t = NULL};
    if (vpy_is_tensor(x)) {
        if (((vpy_tensor *)x)->ctx != c)
            return vpy_error(VKT_ECTX, "tensors from different contexts mixed in one op"), -1;
        o->t = (vpy_tensor *)x;
        return 0;
    }
    if (PyLong_Check(x) || PyFloat_Check(x))
        return number(x, like, o);
    /* Other numbers, numpy scalars and data: the package's rule (numbers come back as int or
     * float, data as a tensor of c). */
    if (!vpy_hook_operand)
        return vpy_error(VKT_EINVAL, "cannot use %R as an operand", x), -1;
    PyObject *r = PyObject_CallFunctionObjArgs(vpy_hook_operand, x, (PyObject *)c, Py_None, NULL);
    if (!r)
        return -1;
    if (PyLong_Check(r) || PyFloat_Check(r)) {
        int rc = number(r, like, o);
        Py_DECREF(r);
        return rc;
    }
    if (!vpy_is_tensor(r) || ((vpy_tensor *)r)->ctx != c) {
        Py_DECREF(r);
        return vpy_error(VKT_EINVAL, "cannot use %R as an operand", x), -1;
    }
    o->t = (vpy_tensor *)r;
    o->owned = r;
    return 0;
}

int vpy_operands(vpy_ctx *c, PyObject *const *xs, int n, const int *likes, vpy_operand *o)
{
    for (int i = 0; i < n; i++) {
        if (one_operand(c, xs[i], likes[i], &o[i]) < 0) {
            vpy_operands_done(o, i);
            return -1;
        }
    }
    return 0;
}

int vpy_operands_make(vpy_ctx *c, vpy_operand *o, int n, vpy_failure *f)
{
    static const int64_t none[1] = {0};
    for (int i = 0; i < n; i++) {
        if (o[i].t)
            continue;
        int st = vk.vkt_full(c->h, (vkt_dtype)o[i].dtype, none, 0, o[i].value, &o[i].tmp);
        if (st) {
            vpy_failure_take(f, st);
            vpy_operands_free(o, i);
            return -1;
        }
    }
    return 0;
}

void vpy_operands_free(vpy_operand *o, int n)
{
    for (int i = 0; i < n; i++) {
        if (o[i].tmp) {
            vk.vkt_tensor_free(o[i].tmp);
            o[i].tmp = NULL;
        }
    }
}

void vpy_operands_done(vpy_operand *o, int n)
{
    for (int i = 0; i < n; i++)
        Py_CLEAR(o[i].owned);
}

int vpy_operand_dtype(const vpy_operand *o)
{
    return o->t ? vpy_dtype(o->t) : o->dtype;
}

int vpy_operand_rank(const vpy_operand *o)
{
    return o->t ? vpy_rank(o->t) : 0;
}
