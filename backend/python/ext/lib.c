/* lib.c - libvkt loaded at run time into a table of typed pointers, its status codes, and
 * vkt.Error (a status and libvkt's message). */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "vpy.h"
#include <structmember.h>

vpy_lib vk;
bool vpy_loaded;
PyObject *vpy_hook_load;

/* vk's fields by name, made from the same lists as the table. */
#define VPY_FN_ENTRY(fn) {#fn, offsetof(vpy_lib, fn)},
#define VPY_OP_ENTRY(op, cls) VPY_FN_ENTRY(vkt_##op)
static const struct {
    const char *name;
    size_t offset;
} symbols[] = {VPY_FUNCS(VPY_FN_ENTRY) VKT_UNARY_OPS(VPY_OP_ENTRY) VKT_BINARY_OPS(VPY_OP_ENTRY)};
#undef VPY_FN_ENTRY
#undef VPY_OP_ENTRY
#define NSYMBOLS (sizeof symbols / sizeof symbols[0])

int vpy_lib_load(const char *path)
{
    if (vpy_loaded)
        return 0;
    /* RTLD_LOCAL as ctypes loads it: libvkt's symbols stay out of the global scope. */
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        PyErr_SetString(PyExc_OSError, why ? why : path);
        return -1;
    }
    vpy_lib lib;
    for (size_t i = 0; i < NSYMBOLS; i++) {
        void *sym = dlsym(h, symbols[i].name);
        if (!sym) {
            dlclose(h);
            vpy_error(VKT_EINVAL, "%s has no %s: not the libvkt this package was built for", path,
                      symbols[i].name);
            return -1;
        }
        memcpy((char *)&lib + symbols[i].offset, &sym, sizeof sym);
    }
    vk = lib;
    vpy_loaded = true;
    return 0;
}

int vpy_lib_require(void)
{
    if (vpy_loaded)
        return 0;
    if (!vpy_hook_load)
        return vpy_error(VKT_EINVAL, "libvkt is not loaded (import the vkt package)"), -1;
    PyObject *r = PyObject_CallNoArgs(vpy_hook_load);
    if (!r)
        return -1;
    Py_DECREF(r);
    if (!vpy_loaded)
        return vpy_error(VKT_EINVAL, "the package's loader did not load libvkt"), -1;
    return 0;
}

PyObject *vpy_lib_names(void)
{
    PyObject *t = PyTuple_New((Py_ssize_t)NSYMBOLS);
    for (size_t i = 0; t && i < NSYMBOLS; i++) {
        PyObject *s = PyUnicode_FromString(symbols[i].name);
        if (!s) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, (Py_ssize_t)i, s);
    }
    return t;
}

/* ---- status codes ------------------------------------------------------------------------ */

#define VPY_STATUS_ENTRY(name, value) {#name, value},
static const struct {
    const char *name;
    int code;
} statuses[] = {VKT_STATUSES(VPY_STATUS_ENTRY)};
#undef VPY_STATUS_ENTRY
#define NSTATUSES (sizeof statuses / sizeof statuses[0])

const char *vpy_status_name(int status)
{
    for (size_t i = 0; i < NSTATUSES; i++)
        if (statuses[i].code == status)
            return statuses[i].name;
    return NULL;
}

int vpy_lib_add_constants(PyObject *m)
{
    PyObject *table = PyTuple_New((Py_ssize_t)NSTATUSES);
    if (!table)
        return -1;
    for (size_t i = 0; i < NSTATUSES; i++) {
        PyObject *pair = Py_BuildValue("(si)", statuses[i].name, statuses[i].code);
        if (!pair) {
            Py_DECREF(table);
            return -1;
        }
        PyTuple_SET_ITEM(table, (Py_ssize_t)i, pair);
        /* vkt.EINVAL ... : the name without its VKT_ prefix */
        if (PyModule_AddIntConstant(m, statuses[i].name + 4, statuses[i].code) < 0) {
            Py_DECREF(table);
            return -1;
        }
    }
    return PyModule_AddObject(m, "STATUSES", table) < 0 ? (Py_DECREF(table), -1) : 0;
}

/* ---- vkt.Error ---------------------------------------------------------------------------- */

typedef struct {
    PyException_HEAD PyObject *message;
    PyObject *status;
} vpy_error_obj;

static int error_init(vpy_error_obj *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"message", "status", NULL};
    PyObject *message, *status = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O:Error", kwlist, &message, &status))
        return -1;
    /* str(e) and e.args are the message alone, as for any exception made of one. */
    PyObject *base_args = PyTuple_Pack(1, message);
    if (!base_args)
        return -1;
    int rc = ((PyTypeObject *)PyExc_Exception)->tp_init((PyObject *)self, base_args, NULL);
    Py_DECREF(base_args);
    if (rc < 0)
        return -1;
    Py_INCREF(message);
    Py_XSETREF(self->message, message);
    if (status)
        Py_INCREF(status);
    else
        status = PyLong_FromLong(VKT_EINVAL);
    if (!status)
        return -1;
    Py_XSETREF(self->status, status);
    return 0;
}

static int error_traverse(vpy_error_obj *self, visitproc visit, void *arg)
{
    Py_VISIT(self->message);
    Py_VISIT(self->status);
    return ((PyTypeObject *)PyExc_Exception)->tp_traverse((PyObject *)self, visit, arg);
}

static int error_clear(vpy_error_obj *self)
{
    Py_CLEAR(self->message);
    Py_CLEAR(self->status);
    return ((PyTypeObject *)PyExc_Exception)->tp_clear((PyObject *)self);
}

static void error_dealloc(vpy_error_obj *self)
{
    PyObject_GC_UnTrack(self);
    error_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *error_status_name(vpy_error_obj *self, void *closure)
{
    (void)closure;
    if (!self->status)
        Py_RETURN_NONE;
    int overflow;
    long code = PyLong_Check(self->status) ? PyLong_AsLongAndOverflow(self->status, &overflow) : 1;
    const char *name = code <= 0 ? vpy_status_name((int)code) : NULL;
    return name ? PyUnicode_FromString(name) : PyObject_Str(self->status);
}

static PyMemberDef error_members[] = {
    {"message", T_OBJECT, offsetof(vpy_error_obj, message), 0,
     "libvkt's own message (vkt_last_error), or the argument check's."},
    {"status", T_OBJECT, offsetof(vpy_error_obj, status), 0,
     "The vkt_status code, a negative int."},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef error_getset[] = {
    {"status_name", (getter)error_status_name, NULL, "The status' name, e.g. 'VKT_ESHAPE'.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject vpy_ErrorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "vkt.Error",
    .tp_basicsize = sizeof(vpy_error_obj),
    .tp_dealloc = (destructor)error_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Error(message, status=EINVAL)\n--\n\n"
              "A libvkt call failed, or its arguments were refused before the call.\n\n"
              "`message` is libvkt's own message (vkt_last_error) or the argument check's,\n"
              "`status` the vkt_status code (negative int) and `status_name` its name.",
    .tp_traverse = (traverseproc)error_traverse,
    .tp_clear = (inquiry)error_clear,
    .tp_members = error_members,
    .tp_getset = error_getset,
    .tp_init = (initproc)error_init,
};

static PyObject *raise_message(int status, PyObject *msg)
{
    if (!msg)
        return NULL;
    PyObject *e = PyObject_CallFunction((PyObject *)&vpy_ErrorType, "Oi", msg, status);
    Py_DECREF(msg);
    if (e) {
        PyErr_SetObject((PyObject *)&vpy_ErrorType, e);
        Py_DECREF(e);
    }
    return NULL;
}

PyObject *vpy_error(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    PyObject *msg = PyUnicode_FromFormatV(fmt, ap);
    va_end(ap);
    return raise_message(status, msg);
}

void vpy_failure_take(vpy_failure *f, int status)
{
    const char *text = vk.vkt_last_error();
    f->status = status;
    snprintf(f->message, sizeof f->message, "%s", text ? text : "");
}

PyObject *vpy_failure_raise(const vpy_failure *f)
{
    if (f->message[0])
        return raise_message(
            f->status, PyUnicode_DecodeUTF8(f->message, (Py_ssize_t)strlen(f->message), "replace"));
    const char *name = vpy_status_name(f->status);
    return name ? vpy_error(f->status, "%s", name) : vpy_error(f->status, "status %d", f->status);
}

PyObject *vpy_status_error(int status)
{
    vpy_failure f;
    vpy_failure_take(&f, status);
    return vpy_failure_raise(&f);
}
