/* ggml.h - what the ggml reader's files share (ggml.c, ggml_graph.c, ggml_copy.c): ggml's
 * exported functions, the checked reads of its structs, the names of places, and the state of
 * the scheduler's compute on the calling thread.
 *
 * ggml's structs are read where no exported function gives a field (a tensor's flags,
 * sources, view source and op; a backend's interface): at offsets of the pinned build
 * (node-llama-cpp's, tools/deps/ggml.sh), each layout checked against ggml's own accessors at
 * its first use. A layout that does not match is named in one warning, and what needs it is
 * not read: nothing is ever read at a wrong offset. */
#ifndef FBC_READERS_GGML_H
#define FBC_READERS_GGML_H

#include "readers.h"

#define GGML_GPUS_MAX 16 /* GPU backends of one scheduler that are asked about an op */

typedef struct {
    void *(*get_device)(void *backend);
    int (*dev_type)(void *dev);
    const char *(*dev_name)(void *dev);
    bool (*dev_supports_op)(void *dev, const void *op);
    size_t (*dev_count)(void);
    void *(*dev_get)(size_t i);
    void *(*guid)(void *backend);
    int (*sched_n_backends)(void *sched);
    void *(*sched_backend)(void *sched, int i);
    int (*n_nodes)(void *graph);
    void *(*node)(void *graph, int i);
    const char *(*op_desc)(const void *t);
    size_t (*nbytes)(const void *t);
    int64_t (*nelements)(const void *t);
    int64_t (*nrows)(const void *t);
    size_t (*row_size)(int type, int64_t ne);
    const char *(*get_name)(const void *t);
    void *(*get_data)(const void *t);
    bool (*buffer_is_host)(void *buf);
    const char *(*buffer_name)(void *buf);
    void *(*buffer_type)(void *buf);
    void *(*buft_device)(void *buft);
} ggml_api;

/* Binds the reader's functions, once per backend module (every ggml exit's bind). */
void ggml_bind(fbc_bmod *bm);
/* Whether every function was found and the device registry is known (looked for again while
 * it is not: a program may load it after the base library). */
bool ggml_ready(const ggml_api *a);

/* struct ggml_tensor, as the reader reads it: whether its layout is the pinned one (checked
 * once, on the first tensor seen), then its fields. The fields are read only when it is. */
bool ggml_tensor_layout(const ggml_api *a, const void *t);
int ggml_t_type(const void *t);
void *ggml_t_buffer(const void *t);
int ggml_t_op(const void *t);
int64_t ggml_t_ne(const void *t, int i);
int32_t ggml_t_flags(const void *t);
const void *ggml_t_src(const void *t, int i);
const void *ggml_t_view_src(const void *t);
#define GGML_SRC_MAX 10
#define GGML_FLAG_COMPUTE 16 /* GGML_TENSOR_FLAG_COMPUTE: the node is computed */

/* A place data lives in, as a transfer names it: "host" for any buffer in host memory
 * (pinned or not), else the device the buffer belongs to ("Vulkan0"). */
const char *ggml_place(const ggml_api *a, void *buffer);

/* Device types (enum ggml_backend_dev_type): the CPU is 0, a GPU 1, an integrated GPU 2. */
bool ggml_dev_is_gpu(const ggml_api *a, void *dev);
bool ggml_dev_is_cpu(const ggml_api *a, void *dev);

/* What a split's nodes make once read (ggml_graph.c): its fallbacks and host-resident nodes
 * (each with its tensor, which a fallback taints), its name and the bytes it writes; kept
 * while its graph holds the same nodes of the same shapes (ggml_memo.c), so a decode that
 * reuses its graph is not read again node by node. */
typedef struct {
    fbc_kind kind;
    const char *op; /* interned */
    size_t bytes;
    const void *t;
} ggml_node_event;

typedef struct {
    const void *graph;
    uint64_t hash;  /* 0: not kept (read again at the next compute) */
    const char *op; /* the split's name, interned; NULL when it computes no node */
    size_t bytes;
    ggml_node_event *ev;
    uint32_t nev, cap;
} ggml_split;

#define GGML_MEMO 32 /* splits kept per thread: llama.cpp's graphs have a few each */

/* A copy's name as interned, by its places and split: formed once, not at every decode's
 * copies (ggml_copy.c). */
typedef struct {
    char from[71], to[71]; /* as long as the name keeps them (ggml_copy.c) */
    int split;             /* -1: outside a scheduler's compute */
    const char *op;
} ggml_copy_name;

#define GGML_COPY_NAMES 16 /* a decode's copies feed a few splits from a few places */

/* The calling thread's scheduler compute (ggml_backend_sched_graph_compute_async) in
 * progress, if any: its GPU backends' devices, which split the next copy feeds, and the
 * tensors that hold a fallback's result or work downstream of one. */
typedef enum { SPLIT_FRESH, SPLIT_COPYING, SPLIT_COMPUTED } ggml_split_state;

typedef struct {
    void *sched; /* NULL outside a scheduler's compute */
    void *gpu[GGML_GPUS_MAX + 1];
    int ngpu;
    int split; /* the split being fed or computed, as the scheduler numbers it */
    ggml_split_state state;
    void *last_backend;   /* the backend of the split computed last */
    const void **tainted; /* open addressing, cap a power of two */
    size_t ntainted, cap;
    fbc_event outer; /* the scheduler's call, as captured */
    ggml_split memo[GGML_MEMO];
    unsigned memo_next;
    ggml_copy_name names[GGML_COPY_NAMES];
    unsigned names_next;
} ggml_thread;

/* The calling thread's state (made at its first use); NULL when out of memory. */
ggml_thread *ggml_thread_state(void);
/* A reader's stack(): a call the scheduler makes in its compute lies within the scheduler's
 * call, whose stack is taken (one walk a graph, not one a split and copy). */
bool ggml_stack(fbc_call *c);
/* The GPU devices a graph's ops are asked about: the scheduler's in its compute, else every
 * GPU device registered; NULL-terminated in out (GGML_GPUS_MAX + 1 of room). */
int ggml_gpus(const ggml_api *a, const ggml_thread *th, void **out);

/* The split numbering: a copy feeds the split about to be computed; a compute begins a new
 * split unless copies fed it or it continues the last one's backend (the pieces a split is
 * computed in under an eval callback). Returns the split's number. */
int ggml_split_copy(ggml_thread *th);
int ggml_split_compute(ggml_thread *th, void *backend);

/* The tensors a fallback left its result in, and the work downstream of them, within one
 * scheduler compute (or one graph outside a scheduler). */
void ggml_taint_clear(ggml_thread *th);
void ggml_taint_add(ggml_thread *th, const void *t);
bool ggml_tainted(const ggml_thread *th, const void *t);

/* A graph's identity for the memo: its nodes, their ops, types, flags and shapes, their
 * sources and theirs, and salt (what fell back before it); 0 where the tensor layout is not
 * the pinned one (nothing is kept then). */
uint64_t ggml_graph_hash(const ggml_api *a, void *graph, uint64_t salt);
/* The split kept for graph with this hash, or NULL. */
ggml_split *ggml_memo_find(ggml_thread *th, const void *graph, uint64_t hash);
/* An entry for graph, emptied, to read it into (the oldest one goes). */
ggml_split *ggml_memo_take(ggml_thread *th, const void *graph);
/* Adds a node's event to s; false when out of memory (s is then not kept). */
bool ggml_memo_push(ggml_split *s, fbc_kind kind, const char *op, size_t bytes, const void *t);

/* Points a backend's cpy_tensor_async (the scheduler calls it through the backend's
 * interface, where no symbol is seen) at the reader's own, which counts each copy it makes
 * (ggml_copy.c). bm and exit: the backend module and exit the copies are recorded under.
 * Once per backend; nothing is changed where the backend's layout is not the pinned one. */
void ggml_wrap_backend(const ggml_api *a, void *backend, fbc_bmod *bm, unsigned exit);

#endif
