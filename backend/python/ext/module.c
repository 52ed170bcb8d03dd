/* module.c - vkt._vkt: the types, the op functions, the constants of vkt.h, and the hooks
 * the package sets (vkt/_tensor.py) before its first use. */
#include "vpy.h"

static PyObject *m_load(PyObject *m, PyObject *arg)
{
    (void)m;
    PyObject *path;
    if (!PyUnicode_FSConverter(arg, &path))
        return NULL;
    int rc = vpy_lib_load(PyBytes_AS_STRING(path));
    Py_DECREF(path);
    return rc < 0 ? NULL : Py_NewRef(Py_None);
}

static PyObject *m_loaded(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return PyBool_FromLong(vpy_loaded);
}

static PyObject *m_bound(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return vpy_lib_names();
}

static PyObject *m_close_all(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    vpy_close_all();
    Py_RETURN_NONE;
}

static int set_hook(PyObject **hook, PyObject *fn, const char *what)
{
    if (!PyCallable_Check(fn)) {
        PyErr_Format(PyExc_TypeError, "_setup: %s must be callable", what);
        return -1;
    }
    Py_XSETREF(*hook, Py_NewRef(fn));
    return 0;
}

static PyObject *m_setup(PyObject *m, PyObject *args, PyObject *kwds)
{
    (void)m;
    static char *kwlist[] = {"tensor", "operand", "dtype_name", "load", NULL};
    PyObject *tensor, *operand, *dtype_name, *load;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!OOO:_setup", kwlist, &PyType_Type, &tensor,
                                     &operand, &dtype_name, &load))
        return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)tensor, &vpy_TensorType))
        return PyErr_Format(PyExc_TypeError, "_setup: tensor must be a subclass of _vkt.Tensor");
    if (set_hook(&vpy_hook_operand, operand, "operand") < 0 ||
        set_hook(&vpy_hook_dtype_name, dtype_name, "dtype_name") < 0 ||
        set_hook(&vpy_hook_load, load, "load") < 0)
        return NULL;
    Py_INCREF(tensor);
    if (vpy_tensor_class != &vpy_TensorType)
        Py_DECREF(vpy_tensor_class);
    vpy_tensor_class = (PyTypeObject *)tensor;
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"load", m_load, METH_O,
     "load(path, /)\n--\n\nLoads libvkt from path (once; later calls do nothing)."},
    {"loaded", m_loaded, METH_NOARGS, "loaded()\n--\n\nWhether libvkt is loaded."},
    {"bound", m_bound, METH_NOARGS,
     "bound()\n--\n\nThe names of the functions of libvkt the module calls."},
    {"close_all", m_close_all, METH_NOARGS, "close_all()\n--\n\nCloses every open context."},
    {"_setup", (PyCFunction)(void (*)(void))m_setup, METH_VARARGS | METH_KEYWORDS,
     "_setup(tensor, operand, dtype_name, load)\n--\n\nThe package's Tensor class, which the ops "
     "make, and "
     "its rules: operand(x, ctx, dtype)\nfor operands that are not tensors or Python numbers, "
     "dtype_name(d) "
     "for dtype-likes,\nload() to load libvkt at the first use."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "vkt._vkt",
    .m_doc = "libvkt's contexts, tensors, graphs and ops, for the vkt package (which adds numpy's "
             "side).",
    .m_size = -1,
    .m_methods = module_methods,
};

/* A tuple of the names an X-list holds. */
#define VPY_NAME(name, cls) #name,
static const char *const unary_names[] = {VKT_UNARY_OPS(VPY_NAME) NULL};
static const char *const binary_names[] = {VKT_BINARY_OPS(VPY_NAME) NULL};
#undef VPY_NAME

static int add_names(PyObject *m, const char *attr, const char *const *names)
{
    Py_ssize_t n = 0;
    while (names[n])
        n++;
    PyObject *t = PyTuple_New(n);
    for (Py_ssize_t i = 0; t && i < n; i++) {
        PyObject *s = PyUnicode_InternFromString(names[i]);
        if (!s)
            Py_CLEAR(t);
        else
            PyTuple_SET_ITEM(t, i, s);
    }
    if (!t)
        return -1;
    return PyModule_AddObject(m, attr, t) < 0 ? (Py_DECREF(t), -1) : 0;
}

static int add_type(PyObject *m, const char *name, PyTypeObject *type)
{
    if (PyType_Ready(type) < 0)
        return -1;
    Py_INCREF(type);
    return PyModule_AddObject(m, name, (PyObject *)type) < 0 ? (Py_DECREF(type), -1) : 0;
}

PyMODINIT_FUNC PyInit__vkt(void)
{
    vpy_ErrorType.tp_base = (PyTypeObject *)PyExc_Exception;
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    if (PyModule_AddFunctions(m, vpy_op_methods) < 0 || vpy_tensor_init_strings() < 0 ||
        add_type(m, "Error", &vpy_ErrorType) < 0 || add_type(m, "Context", &vpy_ContextType) < 0 ||
        add_type(m, "Tensor", &vpy_TensorType) < 0 || add_type(m, "Graph", &vpy_GraphType) < 0 ||
        vpy_lib_add_constants(m) < 0 || PyModule_AddIntConstant(m, "MAX_RANK", VKT_MAX_RANK) < 0 ||
        PyModule_AddIntConstant(m, "ALL_AXES", VKT_ALL_AXES) < 0 ||
        add_names(m, "DTYPES", vpy_dtype_names) < 0 || add_names(m, "UNARY_OPS", unary_names) < 0 ||
        add_names(m, "BINARY_OPS", binary_names) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
