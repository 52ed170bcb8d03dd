/* core.h — libvkt's internals shared by the runtime, the tensors and the ops.
 *
 * Symbol prefixes (nothing internal may start with `vkt_`, which the shim reads
 * as a public op): err_ errors, mem_ memory, rt_ the command stream, pl_
 * pipelines, tn_ tensors and storage, exec_ the op runner (residency model and
 * fallback exit), op_ op descriptors and shared op helpers, fu_ fusing a
 * graph's elementwise dispatches, ref_ the host reference.
 *
 * Files depend on each other one way (tests/layers/check_layers.py checks it
 * from the objects), top first: the op families (ops/), create.c and matrix.c;
 * exec.c; fallback.c; graph.c; fuse.c; tensor.c; context.c; pipeline.c;
 * stream.c; memory.c; error.c and the host reference (ref/) beneath
 * everything. One call goes up: context.c checks the names its options give
 * against the public op list (vkt_op_name, matrix.c), which depends on
 * nothing of context.c's.
 */
#ifndef VKT_CORE_H
#define VKT_CORE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <vulkan/vulkan.h>

#include "ref.h"
#include "vkt.h"

#define INTERNAL __attribute__((visibility("hidden")))

/* ---- errors (error.c) ---------------------------------------------------- */

/* Records a message for vkt_last_error() and returns `status`. */
INTERNAL int err_set(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
INTERNAL void err_clear(void);
/* Maps a failed VkResult to a status (ENOMEM, EDEVICE) with a message naming the call. */
INTERNAL int err_vk(VkResult r, const char *what);

/* Turns a failed Vulkan call into a logged, returned error: no aborts. */
#define VK_TRY(call)                                                                               \
    do {                                                                                           \
        VkResult vk_try_r_ = (call);                                                               \
        if (vk_try_r_ != VK_SUCCESS)                                                               \
            return err_vk(vk_try_r_, #call);                                                       \
    } while (0)

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        int try_s_ = (expr);                                                                       \
        if (try_s_ != VKT_OK)                                                                      \
            return try_s_;                                                                         \
    } while (0)

/* ---- memory (memory.c) --------------------------------------------------- */

typedef struct mem_block mem_block;

/* A sub-allocation: a range of one VkBuffer that spans a whole memory block. */
typedef struct mem_range {
    mem_block *block;
    VkBuffer buffer;
    VkDeviceSize offset;
    VkDeviceSize size;
    void *mapped; /* host pointer when the memory is host-visible, else NULL */
} mem_range;

/* What a range is for: device storage, host-visible staging that the host
 * reads back (and the fallback uploads through), or staging the host writes
 * for an upload, which a discrete GPU's host-visible device memory holds
 * when it has some, so that the copy after it stays on the device. */
typedef enum mem_kind { MEM_DEVICE = 0, MEM_STAGING = 1, MEM_UPLOAD = 2 } mem_kind;

/* Memory for `size` bytes (at least 16) of `kind`, aligned for storage
 * binding. No retry: callers go through rt_alloc, which frees what it can
 * first. */
INTERNAL int mem_alloc(vkt_ctx *ctx, VkDeviceSize size, mem_kind kind, mem_range *out);
/* Returns a range; its reuse waits until the work recorded so far has completed. */
INTERNAL void mem_free(vkt_ctx *ctx, mem_range *r);
/* Called by the command stream after a submission completed: recycles deferred frees. */
INTERNAL void mem_collect(vkt_ctx *ctx);
/* Returns every spare block to the driver (memory pressure). */
INTERNAL void mem_trim(vkt_ctx *ctx);
INTERNAL void mem_destroy_all(vkt_ctx *ctx);

/* ---- storage and tensors (tensor.c) -------------------------------------- */

typedef struct tn_storage {
    int refs; /* tensors (views included) that use it */
    vkt_residency where;
    size_t nbytes;
    mem_range dev;              /* valid when where == VKT_DEVICE */
    void *host;                 /* valid when where == VKT_HOST */
    uint32_t lv_write, lv_read; /* while a graph's commands are levelled: 1 + the level of the
                                 * last write, of the latest read (0: none) */
    uint32_t fu_readers,
        fu_writers;     /* while a graph's commands are fused: commands that read, write it */
    int fu_writer;      /* the command that writes it, when one does */
    uint64_t write_seq; /* dispatch that last wrote it in the open batch (0: none) */
    uint64_t read_seq;  /* dispatch that last read it in the open batch (0: none) */
    /* Graphs whose recorded work uses it: its memory stays while one does,
     * even after its last tensor is freed (then it is an orphan). */
    int holds;
    bool orphan;
    uint32_t rec_gen; /* the graph recording that logged it last */
} tn_storage;

struct vkt_tensor {
    vkt_ctx *ctx;
    vkt_dtype dtype;
    int rank;
    int64_t shape[VKT_MAX_RANK];
    size_t numel;
    size_t nbytes;
    tn_storage *st; /* NULL until the op that produces it has run */
};

/* A result tensor with shape and dtype but no storage yet (validated shape). */
INTERNAL int tn_new(vkt_ctx *ctx, vkt_dtype dtype, const int64_t *shape, int rank,
                    vkt_tensor **out);
/* Gives t fresh DEVICE storage (uninitialised). */
INTERNAL int tn_alloc_device(vkt_tensor *t);
/* Gives t HOST storage that takes ownership of `data` (malloc'ed, t->nbytes). */
INTERNAL void tn_adopt_host(vkt_tensor *t, void *data);
/* Copies host bytes into t's (fresh) device storage, recording a transfer if needed. */
INTERNAL int tn_upload(vkt_tensor *t, const void *data, size_t nbytes);
/* Copies t's contents to dst (a sync point for DEVICE storage). */
INTERNAL int tn_download(const vkt_tensor *t, void *dst);
/* Moves a storage between residencies (used for mixed inputs). */
INTERNAL int tn_move(vkt_tensor *t, vkt_residency where);
/* Replaces t's contents with nbytes (= t's) from host memory, wherever t lives;
 * ordered after the work recorded before it. */
INTERNAL int tn_write(vkt_tensor *t, const void *src);
/* Copies src's contents into dst (equal sizes), wherever either lives. */
INTERNAL int tn_copy(vkt_tensor *dst, const vkt_tensor *src);
/* Drops a graph's hold on a storage, releasing an orphan's memory with the last. */
INTERNAL void tn_unhold(vkt_ctx *ctx, tn_storage *st);
/* Checks a shape (rank, non-negative dims, at most 2^40 elements), and with
 * tn_check_args the dtype too; names `what` in errors. */
INTERNAL int tn_check_shape(const int64_t *shape, int rank, const char *what);
INTERNAL int tn_check_args(vkt_dtype dtype, const int64_t *shape, int rank, const char *what);
INTERNAL int tn_check_tensor(const vkt_tensor *t, const char *op, const char *arg);
/* A host view of a tensor's shape over `data`. */
INTERNAL ref_view tn_view(const vkt_tensor *t, void *data);

/* ---- the command stream's state (stream.c) -------------------------------- */

typedef struct op_counters op_counters;

/* Op and kernel of one dispatch timed for the profile. */
typedef struct rt_tag {
    const char *op;
    const char *kernel;
} rt_tag;

/* A command buffer ops record into, with its queries: the context's eager
 * buffer (submitted at sync points) or a graph's (replayed by launches). */
typedef struct rt_target {
    VkCommandBuffer cmd;
    VkQueryPool timestamps; /* two: the whole buffer's GPU time */
    VkQueryPool prof;       /* two per timed dispatch, while profiling */
    uint32_t prof_cap;      /* dispatches prof can time */
    uint32_t nprof;         /* dispatches timed in this buffer */
    rt_tag *tags;           /* prof_cap of them */
} rt_target;

/* The most buffers and push-constant bytes one dispatch binds (pipeline.c's
 * PL_MAX_BINDINGS and PL_PUSH_SIZE are these). */
#define RT_MAX_BINDINGS 8
#define RT_PUSH_SIZE 128

/* What a graph needs to fuse an f32 elementwise dispatch into the one that
 * consumes its result (fuse.c): the op (kind FU_UNARY, FU_BINARY or FU_COPY
 * of layouts.h, code of enum ref_unop or ref_binop), the output's element
 * count, and how input k's index follows the output's: (i / div) % mod. Its
 * buffers are the inputs, then the output. */
typedef struct rt_ew {
    uint32_t kind, op, nin, n;
    uint32_t div[2], mod[2];
} rt_ew;

/* What a graph needs to run a fused f32 elementwise program in the store of
 * a dispatch that computes a whole result (fuse.c, epilogue.glsl): the
 * kernel's variant with an epilogue, the binding of the result, and its
 * element count n; the dispatch stores each element once, at its index, and
 * writes nothing else. The variant takes the kernel's own specialization
 * constants (below EP_SPEC) with the program's after them. */
typedef struct rt_epi {
    int shader; /* SPV_* of the _epi variant */
    uint32_t out, n;
} rt_epi;

/* What a graph's fusing needs to know of a dispatch's work besides its
 * buffers (fuse.c): a product of dot's kernels (push constants
 * DOT_PUSH_FIELDS of layouts.h; bindings a, b, the result; an output tile of
 * bm x bn, 0 x 0 for one thread per output), a transpose of the last two
 * axes of a contiguous [b, rows, cols] (transpose_tiled: TILED_PUSH_FIELDS;
 * bindings source, result), or a pass of an f32 reduction (reduce.comp:
 * RD_PUSH_FIELDS and its specialization constants; bindings input, output;
 * alt, the variant that takes fused programs). */
enum { RT_FORM_NONE, RT_FORM_GEMM, RT_FORM_SWAP, RT_FORM_REDUCE };
typedef struct rt_form {
    uint32_t kind, bm, bn;
    int alt;
} rt_form;

/* Specialization constants of a kernel's own (fused programs' start at
 * EP_SPEC), and of a kernel with its fused programs (layouts.h: PRO_SPEC +
 * EP_NSPEC, which fuse.c asserts). */
#define RT_MAX_SPEC 8
#define RT_ALL_SPEC 38

/* One compute dispatch, as the stream records it: a built pipeline, the
 * storages it binds (and which it writes), push constants and the grid. */
typedef struct rt_dispatch_desc {
    VkPipeline pipe;
    VkPipelineLayout layout;
    int nbufs;
    tn_storage *bufs[RT_MAX_BINDINGS];
    bool writes[RT_MAX_BINDINGS];
    const void *push;
    uint32_t push_size;
    uint32_t groups[3];
    const char *kernel;
    const rt_ew *ew;     /* NULL: not a candidate for fusion */
    const rt_epi *epi;   /* NULL: no epilogue can be fused onto it */
    const rt_form *form; /* NULL: RT_FORM_NONE */
    int nspec;           /* with epi or form: the kernel's specialization constants */
    const uint32_t *spec;
} rt_dispatch_desc;

/* A dispatch or a copy of a graph, held until the recording ends: then the
 * elementwise ones are fused where they can be (fuse.c) and the commands are
 * emitted in dependency levels, one barrier between levels (stream.c). */
typedef struct rt_command {
    bool copy;
    uint32_t level, order;
    /* a dispatch */
    VkPipeline pipe;
    VkPipelineLayout layout;
    uint32_t nbufs, push_size;
    VkDescriptorBufferInfo bi[RT_MAX_BINDINGS];
    uint8_t push[RT_PUSH_SIZE];
    uint32_t groups[3];
    rt_tag tag;
    bool has_ew;
    rt_ew ew;
    bool has_epi;
    rt_epi epi;
    rt_form form;
    uint32_t nspec, spec[RT_ALL_SPEC]; /* the kernel's, then its fused programs' */
    /* a copy */
    VkBuffer src, dst;
    VkBufferCopy region;
    /* the storages it reads and writes */
    int nst;
    tn_storage *st[RT_MAX_BINDINGS];
    bool writes[RT_MAX_BINDINGS];
} rt_command;

/* What a graph recording collects, as ctx->rec while it is open. */
typedef struct rt_log {
    rt_command *cmds; /* the recorded commands, in the order the ops made them */
    size_t ncmds, cap_cmds;
    uint32_t levels;       /* barriers the emitted buffer holds between its commands, plus one */
    tn_storage **storages; /* every storage the recorded work uses, once each, held */
    size_t nst, cap_st;
    op_counters **ops; /* the native op calls recorded: counted again at each launch */
    size_t nops, cap_ops;
    mem_range *held; /* ranges freed while recording (staging): kept for the graph's life */
    size_t nheld, cap_held;
    uint32_t dispatches;
    int status; /* the first error of a call made during the recording */
} rt_log;

/* Grows *arr (of elem-sized items, *cap of them) to hold n; false when out of memory. */
static inline bool rt_grow(void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n <= *cap)
        return true;
    size_t c = *cap ? *cap * 2 : 16;
    while (c < n)
        c *= 2;
    void *p = realloc(*arr, c * elem);
    if (!p)
        return false;
    *arr = p;
    *cap = c;
    return true;
}

/* ---- the context (context.c) --------------------------------------------- */

struct vkt_ctx {
    VkInstance instance;
    VkPhysicalDevice phys;
    VkDevice device;
    VkQueue queue;
    uint32_t queue_family;
    VkPhysicalDeviceProperties props;
    VkPhysicalDeviceMemoryProperties memprops;
    bool has_f64; /* shaderFloat64; exec gates f64 arithmetic on it per call */
    bool has_int8_storage;
    bool unified; /* storage memory is host-visible: no staging */
    /* the command stream (stream.c) */
    VkCommandPool pool;
    VkFence fence;
    rt_target eager;
    rt_target *target; /* where ops record now: &eager, or the open graph's */
    rt_log *rec;       /* the open graph recording, or NULL */
    uint32_t rec_gen;  /* numbers the recordings */
    double last_gpu_ns;
    bool recording;       /* the eager buffer is begun */
    uint32_t pending;     /* dispatches recorded since the last submission */
    uint64_t seq;         /* command counter; storages remember their last writer and reader */
    uint64_t barrier_seq; /* seq at the last barrier */
    VkPipeline bound;     /* the pipeline bound last in the eager buffer */
    bool eager_in_rec;    /* the eager buffer took uploads while a graph recorded */
    uint64_t submit_seq;  /* seq at the last submission */
    /* profiling: per-dispatch GPU times (vkt_ctx_set_profiling) */
    bool profiling;
    const char *cur_op; /* the op whose native path is recording, for the tags */
    vkt_profile_entry *prof;
    size_t nprof, cap_prof;
    PFN_vkCmdPushDescriptorSetKHR push_descriptors;
    struct mem_state *mem;
    struct pl_state *pl;
    /* residency options */
    vkt_residency fallback_result;
    char *native_disable; /* ",a,b," or NULL; "all" disables everything */
    int dot_kernel;       /* VKT_DOT_KERNEL as kernels.h's DK_*; DK_auto: dot chooses by size */
    int conv_kernel;      /* VKT_CONV_KERNEL as CK_*; CK_auto: conv chooses by shape and device */
    /* Why the latest op in this context did not run natively (a gate's reason
     * or "inputs are host-resident"), NULL when it did: the census counts
     * fallbacks, this names the cause for a debugger or a white-box test. */
    const char *last_gate;
    bool device_lost;
    bool flush_known, flushes; /* f32 subnormal flushing, measured on first ask */
};

/* ---- the command stream (stream.c) --------------------------------------- */

/* Creates and releases the stream's command pool, buffer, fence and queries;
 * rt_destroy first submits what is still recorded. */
INTERNAL int rt_init(vkt_ctx *ctx);
INTERNAL void rt_destroy(vkt_ctx *ctx);
/* Submits what was recorded and waits: a sync point. */
INTERNAL int rt_flush(vkt_ctx *ctx);
/* Records one dispatch: into the eager buffer now, with the barriers it
 * needs (and timed alone when profiling), or into the open graph, which emits
 * it when the recording ends. Submits at the eager batch-size threshold. */
INTERNAL int rt_dispatch(vkt_ctx *ctx, const rt_dispatch_desc *d);
/* Records a copy of size bytes from src (at src_off) to dst (at dst_off);
 * src_st/dst_st are the storages behind them, NULL for a staging range,
 * which needs no ordering. Like rt_dispatch, eager or into the open graph. */
INTERNAL int rt_copy(vkt_ctx *ctx, VkBuffer src, VkDeviceSize src_off, tn_storage *src_st,
                     VkBuffer dst, VkDeviceSize dst_off, tn_storage *dst_st, VkDeviceSize size);
/* Uploads a staged range into dst_st, fresh storage made by an op. While a
 * graph records, the copy goes into the eager buffer, which a launch submits
 * ahead of the graph: such storage is a constant of the graph, uploaded once
 * rather than at every launch. */
INTERNAL int rt_upload_const(vkt_ctx *ctx, VkBuffer src, VkDeviceSize src_off, tn_storage *dst_st,
                             VkDeviceSize size);
/* mem_alloc, and under memory pressure the one retry: submit the recorded work
 * (its deferred frees come back), return spare blocks, try once more. */
INTERNAL int rt_alloc(vkt_ctx *ctx, VkDeviceSize size, mem_kind kind, mem_range *out);
/* Fails, naming `what`, while a graph is recording (calls that need the host
 * or a sync point cannot be recorded); the recording then fails at its end. */
INTERNAL int rt_not_recording(vkt_ctx *ctx, const char *what);

/* Graph recordings (graph.c drives them): rt_record_begin submits pending
 * work, points the stream at t (a fresh target) and opens log; rt_record_end
 * closes it; rt_launch submits t's buffer after any pending eager work, in
 * one submission, waits, and counts log's op calls again. */
INTERNAL int rt_target_init(vkt_ctx *ctx, rt_target *t, bool reusable);
INTERNAL void rt_target_destroy(vkt_ctx *ctx, rt_target *t);
INTERNAL int rt_record_begin(vkt_ctx *ctx, rt_target *t, rt_log *log);
INTERNAL int rt_record_end(vkt_ctx *ctx);
INTERNAL int rt_launch(vkt_ctx *ctx, rt_target *t, const rt_log *log);

/* ---- fusing a graph's dispatches (fuse.c) ---------------------------------- */

/* Before a recording ends: computes each intermediate (freed during the
 * recording) that one dispatch writes and one reads inside the reader, or
 * in the writer's store: elementwise chains, programs around products,
 * convolutions, reductions and pooling, a product's transpose. */
INTERNAL int fu_graph(vkt_ctx *ctx, rt_log *log);
/* A native op call recorded into the open graph (counted at launches). */
INTERNAL void rt_log_op(vkt_ctx *ctx, op_counters *counters);

/* ---- pipelines (pipeline.c) ---------------------------------------------- */

#define PL_MAX_SPEC RT_ALL_SPEC
#define PL_MAX_BINDINGS RT_MAX_BINDINGS
#define PL_PUSH_SIZE RT_PUSH_SIZE

/* One dispatch: a SPIR-V module from the embedded table, its specialization
 * constants (constant_id 0..nspec-1), buffers and push constants. */
typedef struct pl_dispatch {
    int shader; /* SPV_* from spirv_table.h */
    uint32_t spec[PL_MAX_SPEC];
    int nspec;
    tn_storage *bufs[PL_MAX_BINDINGS];
    bool writes[PL_MAX_BINDINGS];
    int nbufs;
    const void *push;
    uint32_t push_size;
    uint32_t groups[3];
    const rt_ew *ew;     /* an f32 elementwise dispatch a graph may fuse, or NULL */
    const rt_epi *epi;   /* a dispatch a graph may fuse an elementwise program onto, or NULL */
    const rt_form *form; /* what its work is, for a graph's fusing, or NULL */
} pl_dispatch;

/* Records one compute dispatch with the needed barriers; builds and caches the
 * pipeline on first use. */
INTERNAL int pl_run(vkt_ctx *ctx, const pl_dispatch *d);
/* The pipeline (built and cached on first use) and layout for a shader, its
 * specialization constants and nbufs bindings. */
INTERNAL int pl_get(vkt_ctx *ctx, int shader, const uint32_t *spec, int nspec, int nbufs,
                    VkPipeline *pipe, VkPipelineLayout *layout);
/* Splits n invocations of `local` threads into a grid within the 65,535 limit;
 * shaders loop with a grid stride, so any n is covered. */
INTERNAL void pl_grid(uint64_t n, uint32_t local, uint32_t groups[3]);
INTERNAL void pl_destroy_all(vkt_ctx *ctx);

/* ---- the op runner (exec.c) ---------------------------------------------- */

struct op_counters {
    _Atomic uint64_t native, fallback, host;
};

/* Describes a public op for the support matrix and the counters. */
typedef struct op_info {
    const char *name; /* public name without the prefix */
    /* How the op runs for inputs of dtype dt: VKT_NATIVE, VKT_FALLBACK or
     * VKT_UNDEFINED, with the reason (a static string) for the last two. NULL
     * means native for every dtype. exec_run applies it to every call. */
    vkt_support (*support)(const struct op_info *info, vkt_dtype dt, const char **reason);
    int code; /* family-specific op code (e.g. enum ref_unop) */
    op_counters *counters;
} op_info;

/* Inputs an exec_call holds inline; an op with more (concatenate) passes its
 * whole list through in_list instead, so any count runs as one call. */
#define EXEC_MAX_INPUTS 8

typedef struct exec_call {
    const op_info *info;
    const vkt_tensor *in[EXEC_MAX_INPUTS];
    int nin;
    /* When set, the nin inputs are read from here and in[] is unused. */
    const vkt_tensor *const *in_list;
    vkt_tensor *out; /* created with tn_new: shape and dtype, no storage */
    /* The dtype the op's support function is asked about: the dtype it
     * computes in (its inputs' merged dtype, or the input's). */
    vkt_dtype dtype;
    /* A geometry limit of the op's kernels for this call (sizes past 32-bit
     * indexing, scratch past the storage range): NULL when the kernels can
     * take it, else why not, a static string. The op's dtype gate, the device's
     * f64 support and the storage range are exec_run's to apply; the context
     * keeps the reason that applied as last_gate after the call. */
    const char *gate;
    /* The result shares in[0]'s storage under out's shape (reshape): nothing is
     * allocated or computed, so no gate applies and it never falls back. */
    bool view;
    /* The native path moves f64 elements as 64-bit words and does no f64
     * arithmetic, so a device without shaderFloat64 still runs it. */
    bool f64_as_bits;
    /* An in-place op (assign): the result's contents go into this existing
     * tensor, which is also the call's last input (its residency counts).
     * Natively out shares its storage; a fallback's or a host run's result is
     * copied into it. The op frees out. */
    vkt_tensor *into;
    /* Records the native dispatches; inputs are DEVICE, out has no storage yet. */
    int (*native)(struct exec_call *c);
    /* Computes the result on the host from views of the inputs into `out`. */
    int (*host)(struct exec_call *c, const ref_view *in, ref_view *out);
    const void *params;
} exec_call;

/* Input i of a call, wherever the op put its inputs. */
static inline const vkt_tensor *exec_in(const exec_call *c, int i)
{
    return c->in_list ? c->in_list[i] : c->in[i];
}

/* Runs an op under the residency model: host-resident inputs run on the host
 * (host_resident_op), admitted device inputs run natively, the rest falls back
 * through host_result. Frees c->out and sets *result on error. */
INTERNAL int exec_run(exec_call *c, vkt_tensor **result);
/* Returns the gate reason for a tensor that the device cannot bind, or NULL. */
INTERNAL const char *exec_size_gate(const vkt_ctx *ctx, const vkt_tensor *t);

/* ---- op tables (matrix.c collects them) ---------------------------------- */

typedef struct op_table {
    const op_info *ops;
    size_t n;
} op_table;

#endif
