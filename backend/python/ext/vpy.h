/* vpy.h - vkt._vkt, the vkt package's extension module: contexts, tensors and recorded graphs
 * as Python types over libvkt, and its ops as Python functions, with no ctypes between them.
 *
 * libvkt is not linked in. The package loads it with dlopen at its first use (vkt/_lib.py
 * decides where from, and loads libfbcount first when the fbcount package is in the process:
 * a library loaded with RTLD_NOW before the census library would call its own host_result,
 * unseen), and the module calls it through vpy_lib, a table of pointers filled from its
 * symbols. The pointers have the types vkt.h declares, so the compiler checks every call.
 *
 * Threads: a vkt_ctx is not thread-safe, so every libvkt call on a context holds the context's
 * mutex. The GIL guards everything else (tensor slots, pending frees, graph records, the
 * recording's notes). A call that waits on the device (sync, read, write, launch, create,
 * destroy) releases the GIL while it holds the mutex; a thread that finds the mutex taken
 * waits for it without the GIL; a tensor collected while the mutex is taken is queued and
 * freed by the next call that holds it. So no thread ever waits for the mutex with the GIL.
 */
#ifndef VPY_H
#define VPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "vkt.h"

/* ---- lib.c: libvkt's functions, the status codes, vkt.Error ------------------------------ */

/* Every function of vkt.h the module calls, beside the X-lists of unary and binary ops. Not
 * here: the fallback exits (host_result, host_resident_op) and the census's clock. */
// clang-format off
#define VPY_FUNCS(X)                                                                           \
    X(vkt_last_error) X(vkt_status_name) X(vkt_ctx_create) X(vkt_ctx_destroy)                  \
    X(vkt_ctx_device_name) X(vkt_ctx_max_tensor_bytes) X(vkt_ctx_flushes_subnormals)            \
    X(vkt_sync) X(vkt_ctx_last_gpu_ns) X(vkt_ctx_set_native_disable)                           \
    X(vkt_ctx_set_fallback_result) X(vkt_ctx_set_profiling) X(vkt_profile_read)                \
    X(vkt_graph_begin) X(vkt_graph_end) X(vkt_graph_launch) X(vkt_graph_dispatches)            \
    X(vkt_graph_levels) X(vkt_graph_free) X(vkt_dtype_size) X(vkt_dtype_name)                  \
    X(vkt_tensor_from_host) X(vkt_zeros) X(vkt_full) X(vkt_iota) X(vkt_tensor_read)            \
    X(vkt_tensor_write) X(vkt_tensor_move) X(vkt_tensor_free) X(vkt_tensor_dtype)              \
    X(vkt_tensor_rank) X(vkt_tensor_shape) X(vkt_tensor_numel) X(vkt_tensor_nbytes)            \
    X(vkt_tensor_residency) X(vkt_stats) X(vkt_stats_reset) X(vkt_op_count) X(vkt_op_name)     \
    X(vkt_op_support) X(vkt_select) X(vkt_clip) X(vkt_as_type) X(vkt_sum) X(vkt_product)       \
    X(vkt_reduce_max) X(vkt_reduce_min) X(vkt_all) X(vkt_any) X(vkt_argmax) X(vkt_argmin)      \
    X(vkt_reshape) X(vkt_transpose) X(vkt_broadcast) X(vkt_slice) X(vkt_pad) X(vkt_reverse)    \
    X(vkt_concatenate) X(vkt_assign) X(vkt_gather) X(vkt_dot) X(vkt_sort) X(vkt_argsort)       \
    X(vkt_conv) X(vkt_window_sum) X(vkt_window_product) X(vkt_window_max) X(vkt_window_min)    \
    X(vkt_window_scatter_max) X(vkt_window_scatter_min)
// clang-format on

#define VPY_FN_FIELD(fn) __typeof__(fn) *fn;
#define VPY_OP_FIELD(op, cls) VPY_FN_FIELD(vkt_##op)
typedef struct vpy_lib {
    VPY_FUNCS(VPY_FN_FIELD)
    VKT_UNARY_OPS(VPY_OP_FIELD)
    VKT_BINARY_OPS(VPY_OP_FIELD)
} vpy_lib;
#undef VPY_FN_FIELD
#undef VPY_OP_FIELD

typedef int (*vpy_unary_fn)(const vkt_tensor *, vkt_tensor **);
typedef int (*vpy_binary_fn)(const vkt_tensor *, const vkt_tensor *, vkt_tensor **);
typedef int (*vpy_reduce_fn)(const vkt_tensor *, const int *, int, bool, vkt_tensor **);

extern vpy_lib vk;
extern bool vpy_loaded;
extern PyTypeObject vpy_ErrorType;

/* Loads libvkt from path and fills vk (a no-op once loaded). Returns 0, or -1 with OSError
 * (dlopen's message) or vkt.Error (a function missing). */
int vpy_lib_load(const char *path);
/* 0 when libvkt is loaded, else loads it through the package's loader; -1 with its error. */
int vpy_lib_require(void);
/* The functions the module binds, by name: a tuple of str (for the package's ABI test). */
PyObject *vpy_lib_names(void);

/* Raises vkt.Error(message, status) with a PyUnicode_FromFormat message; returns NULL. */
PyObject *vpy_error(int status, const char *fmt, ...);
/* Raises the vkt.Error of a failed libvkt call: vkt_last_error's message, else the status'
 * name. Call before any other libvkt call on this thread. Returns NULL. */
PyObject *vpy_status_error(int status);

/* A failed libvkt call's status and message, taken under a context's mutex (vkt_last_error is
 * this thread's until its next libvkt call) and raised once the mutex is released: making a
 * Python object can run the garbage collector, and with it finalizers that call into the same
 * context, so no Python object is made while the mutex is held. */
typedef struct vpy_failure {
    int status;
    char message[1024];
} vpy_failure;
void vpy_failure_take(vpy_failure *f, int status);
/* Raises f as vkt.Error; returns NULL. */
PyObject *vpy_failure_raise(const vpy_failure *f);
/* The status name of a code ("VKT_ESHAPE"), or NULL for none. */
const char *vpy_status_name(int status);
/* Adds the status codes and their table to the module. */
int vpy_lib_add_constants(PyObject *m);

/* ---- context.c: Context, the tensor slots, Graph ------------------------------------------- */

/* A tensor handle the context owns: it outlives its Tensor object while a graph binds it. */
typedef struct vpy_slot {
    vkt_tensor *h;                /* NULL once freed while the recording's notes hold it */
    struct vpy_slot *prev, *next; /* the context's live list */
    unsigned pins;                /* graphs that bind it */
    bool orphan;                  /* its Tensor object is gone: goes with its last graph */
    bool touched;                 /* in the recording's notes */
} vpy_slot;

typedef struct vpy_ptrs {
    void **v;
    size_t n, cap;
} vpy_ptrs;

struct vpy_graph;

/* A recorded graph not freed yet, and the slots it binds. */
typedef struct vpy_grec {
    vkt_graph *h;
    vpy_slot **bound;
    size_t nbound;
    struct vpy_grec *prev, *next;
    struct vpy_graph *obj; /* its Graph object, NULL once collected */
} vpy_grec;

typedef struct vpy_ctx {
    PyObject_HEAD vkt_ctx *h; /* NULL once closed */
    pthread_mutex_t mu;
    vpy_slot live; /* head of the live list: every handle not freed yet */
    size_t nlive;
    vpy_grec graphs;                  /* head of the graph records */
    vpy_ptrs pending, pending_graphs; /* slots and records whose objects went while mu was taken */
    struct vpy_graph *rec;            /* the graph being recorded (owned), or NULL */
    vpy_ptrs touched;                 /* slots the recording used */
    bool profiling;
    struct vpy_ctx *open_prev, *open_next;
    PyObject *weakrefs;
} vpy_ctx;

typedef struct vpy_tensor {
    PyObject_HEAD vpy_ctx *ctx; /* owned */
    vkt_tensor *h;
    vpy_slot *slot;
    PyObject *shape; /* the shape tuple, made at the first ask */
} vpy_tensor;

typedef enum { VPY_RECORDING, VPY_FAILED, VPY_READY, VPY_FREED, VPY_CLOSED } vpy_gstate;

typedef struct vpy_graph {
    PyObject_HEAD vpy_ctx *ctx; /* owned */
    vpy_grec *rec;
    vpy_gstate state;
} vpy_graph;

extern PyTypeObject vpy_ContextType, vpy_TensorType, vpy_GraphType;
/* The class the ops make tensors of: vkt.Tensor once the package registered it. */
extern PyTypeObject *vpy_tensor_class;

/* Takes c's mutex (without the GIL while it waits), refuses a closed context and frees what
 * was collected meanwhile. 0, or -1 with vkt.Error. */
int vpy_enter(vpy_ctx *c);
static inline void vpy_leave(vpy_ctx *c)
{
    pthread_mutex_unlock(&c->mu);
}
/* Releases c's mutex, then raises the failure of the call st (taken first): NULL for an error
 * (st != 0), else None. */
PyObject *vpy_leave_status(vpy_ctx *c, int st);
/* Takes c's mutex (without the GIL while it waits); the caller checks c->h. */
void vpy_lock(vpy_ctx *c);

/* After a libvkt call that made out (c's mutex held): on failure the error, else a Tensor
 * object of out; while recording, the n tensors used and the result go into the notes.
 * Releases the mutex either way, before it makes any Python object. */
PyObject *vpy_made(vpy_ctx *c, int status, vkt_tensor *out, vpy_tensor *const *used, int n);
/* From a Tensor's destructor, which may run on any thread at any time: frees the slot now
 * when the mutex is free, else queues it for the next call that holds it (never waits: the
 * holder may be waiting for the GIL this thread holds). */
void vpy_slot_release(vpy_ctx *c, vpy_slot *s);
/* Notes the tensors a call used, while a graph is recorded (c's mutex held). */
void vpy_touch(vpy_ctx *c, vpy_tensor *const *used, int n);
/* The tensor's rank, or -1 with vkt.Error when its context is closed. */
int vpy_rank(vpy_tensor *t);
/* The tensor's dtype, or -1 with vkt.Error when its context is closed. */
int vpy_dtype(vpy_tensor *t);
/* The tensor's shape as a tuple (a new reference), or NULL with vkt.Error. */
PyObject *vpy_shape(vpy_tensor *t);
/* Raises the error for a tensor whose context is closed; returns NULL. */
PyObject *vpy_closed_error(void);
/* Closes every open context (at interpreter exit, while libvkt is whole). */
void vpy_close_all(void);
/* Frees a graph record and the collected tensors only it still bound (c's mutex held). */
void vpy_grec_free(vpy_ctx *c, vpy_grec *r);
/* Ends the recording's notes (c's mutex held): with r, the tensors still alive that the
 * recording used are bound to r (pinned); without, they are forgotten. 0 or -1 (no memory). */
int vpy_notes_end(vpy_ctx *c, vpy_grec *r);
/* The Graph object of a recording about to begin on c. */
struct vpy_graph *vpy_graph_new(vpy_ctx *c);

/* vkt.h's dtypes by name, in the enum's order (vkt_dtype_name's names), NULL-terminated. */
extern const char *const vpy_dtype_names[VKT_NUM_DTYPES + 1];
/* Makes the dtype names and residencies as Python strings, once. 0 or -1. */
int vpy_tensor_init_strings(void);
/* The vkt_dtype of a dtype name (a str), or -1 when it names none. */
int vpy_dtype_of_name(PyObject *s);

static inline bool vpy_is_tensor(PyObject *o)
{
    return PyObject_TypeCheck(o, &vpy_TensorType);
}

/* ---- args.c: Python arguments as C values ------------------------------------------------- */

/* Fills out[0..nmax) from a vectorcall's arguments by the parameter names (NULL where an
 * optional one is missing). 0, or -1 with TypeError as a Python function would raise it. */
int vpy_args(const char *fn, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
             const char *const *names, int nreq, int nmax, PyObject **out);
/* v as ints into out (an int alone, or an iterable of them), at most max: the count, or -1
 * with vkt.Error naming what ("axes must be integers, got ..."). */
Py_ssize_t vpy_ints(PyObject *v, int64_t *out, Py_ssize_t max, const char *what);
/* As vpy_ints for int (axes) arrays. */
Py_ssize_t vpy_axes(PyObject *v, int *out, Py_ssize_t max, const char *what);
/* None, an int for every axis, or n ints (one per axis), into out. 0 or -1 with vkt.Error. */
int vpy_per_axis(PyObject *v, int n, const char *what, int64_t def, int64_t *out);
/* Whether a padding argument is 'same' (conv and the window ops then need the window sizes). */
bool vpy_is_same(PyObject *padding);
/* Nx's padding: 'valid', 'same' (sizes: each axis' dilated window) or n (lo, hi) pairs. */
int vpy_padding(PyObject *v, int n, const int64_t *sizes, const char *what, int64_t *lo,
                int64_t *hi);
/* A dtype name or dtype-like as a vkt_dtype, or -1 with vkt.Error. */
int vpy_dtype_arg(PyObject *d);
/* 'device' or 'host' as a vkt_residency, or -1 with vkt.Error ("{what} must be ..."). */
int vpy_residency_arg(PyObject *where, const char *what);
/* An optional bool argument by its truth (NULL: def); -1 on error. */
int vpy_truth(PyObject *v, bool def);
/* An optional int argument (NULL or None: def), by operator.index; 0 or -1. */
int vpy_index(PyObject *v, int def, int *out);

/* An operand of an op: a tensor, a Python number that becomes a rank-0 tensor (made and freed
 * under the mutex, around the call), or other data the package turns into a tensor. */
typedef struct vpy_operand {
    vpy_tensor *t;   /* the tensor (borrowed, or owned when made from data), or NULL */
    PyObject *owned; /* a tensor made from data, released by vpy_operands_done */
    vkt_tensor *tmp; /* the number's tensor, while the call runs */
    int dtype;       /* the number's dtype */
    double value;    /* and value */
} vpy_operand;

/* Pass as an operand's like: no tensor to follow (numbers take s32 or f32 alone). */
#define VPY_LIKE_NONE (-1)

/* The context of the first tensor among xs, or NULL with vkt.Error. */
vpy_ctx *vpy_ctx_of(PyObject *const *xs, int n);
/* The dtype of the first tensor among xs (VPY_LIKE_NONE without one): 0, or -1 with the error. */
int vpy_like(PyObject *const *xs, int n, int *like);
/* Prepares n operands of c (no mutex): likes[i] is the dtype numbers follow, or VPY_LIKE_NONE.
 * 0, or -1 with the error (operands released). */
int vpy_operands(vpy_ctx *c, PyObject *const *xs, int n, const int *likes, vpy_operand *o);
/* Makes the numbers' tensors (c's mutex held): 0, or -1 with the failure in f and none made. */
int vpy_operands_make(vpy_ctx *c, vpy_operand *o, int n, vpy_failure *f);
/* Frees the numbers' tensors (c's mutex held). */
void vpy_operands_free(vpy_operand *o, int n);
/* Releases the operands made from data (no mutex). */
void vpy_operands_done(vpy_operand *o, int n);
/* An operand's dtype and rank, or -1 with the error. */
int vpy_operand_dtype(const vpy_operand *o);
int vpy_operand_rank(const vpy_operand *o);
/* The handle of operand i while the call runs. */
static inline vkt_tensor *vpy_h(const vpy_operand *o)
{
    return o->t ? o->t->h : o->tmp;
}

/* The package's hooks: what an operand that is not a tensor or Python number becomes, and a
 * dtype-like's name; set by _vkt._setup. */
extern PyObject *vpy_hook_operand, *vpy_hook_dtype_name, *vpy_hook_load;

/* ---- ops.c: the op functions ------------------------------------------------------------ */

extern PyMethodDef vpy_op_methods[];
/* The binary op of a Python operator (tensor.c's number protocol). */
PyObject *vpy_binary(vpy_binary_fn fn, PyObject *a, PyObject *b);
PyObject *vpy_unary(vpy_unary_fn fn, PyObject *x);
/* Tensor methods shared with the op functions. */
PyObject *vpy_op_reshape(PyObject *x, PyObject *shape);
PyObject *vpy_op_transpose(PyObject *x, PyObject *axes);
PyObject *vpy_op_as_type(PyObject *x, PyObject *dtype);
PyObject *vpy_op_reduce(vpy_reduce_fn fn, PyObject *x, PyObject *axes, PyObject *keep);

/* ---- small arrays (GIL held) ---------------------------------------------------------- */

int vpy_ptrs_push(vpy_ptrs *p, void *v);
void vpy_ptrs_free(vpy_ptrs *p);

#endif
