/* ggml_api.h - the part of ggml's C API (ggml.h, ggml-alloc.h, ggml-backend.h) the ggml driver
 * uses, loaded at run time from the prebuilt libraries node-llama-cpp ships without headers
 * (tools/deps/ggml.sh fetches them): only functions whose signatures have held across ggml's
 * releases. The scheduler's constructor takes a sixth argument (op_offload) in newer releases,
 * which older ones ignore. */
#ifndef GGML_API_H
#define GGML_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ggml_context;
struct ggml_tensor;
struct ggml_cgraph;
typedef struct ggml_backend *ggml_backend_t;
typedef struct ggml_backend_buffer *ggml_backend_buffer_t;
typedef struct ggml_backend_sched *ggml_backend_sched_t;

struct ggml_init_params {
    size_t mem_size;
    void *mem_buffer;
    bool no_alloc;
};

enum { GGML_TYPE_F32 = 0, GGML_TYPE_F16 = 1, GGML_TYPE_I32 = 26 };
enum { GGML_DEV_CPU = 0, GGML_DEV_GPU = 1 };
enum { GGML_USAGE_WEIGHTS = 1 }; /* enum ggml_backend_buffer_usage */

/* return type, name, parameters */
#define GGML_FUNCS(X)                                                                              \
    X(struct ggml_context *, ggml_init, (struct ggml_init_params))                                 \
    X(void, ggml_free, (struct ggml_context *))                                                    \
    X(struct ggml_tensor *, ggml_new_tensor_1d, (struct ggml_context *, int, int64_t))             \
    X(struct ggml_tensor *, ggml_new_tensor_2d, (struct ggml_context *, int, int64_t, int64_t))    \
    X(struct ggml_tensor *, ggml_new_tensor_3d,                                                    \
      (struct ggml_context *, int, int64_t, int64_t, int64_t))                                     \
    X(struct ggml_tensor *, ggml_reshape_2d,                                                       \
      (struct ggml_context *, struct ggml_tensor *, int64_t, int64_t))                             \
    X(struct ggml_tensor *, ggml_view_2d,                                                          \
      (struct ggml_context *, struct ggml_tensor *, int64_t, int64_t, size_t, size_t))             \
    X(struct ggml_tensor *, ggml_set_rows,                                                         \
      (struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *))   \
    X(struct ggml_tensor *, ggml_cpy,                                                              \
      (struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *))                         \
    X(int64_t, ggml_nelements, (const struct ggml_tensor *))                                       \
    X(struct ggml_tensor *, ggml_mul_mat_id,                                                       \
      (struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *))   \
    X(void, ggml_set_input, (struct ggml_tensor *))                                                \
    X(void, ggml_set_output, (struct ggml_tensor *))                                               \
    X(struct ggml_tensor *, ggml_add,                                                              \
      (struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *))                         \
    X(struct ggml_tensor *, ggml_scale, (struct ggml_context *, struct ggml_tensor *, float))      \
    X(struct ggml_tensor *, ggml_win_part, (struct ggml_context *, struct ggml_tensor *, int))     \
    X(size_t, ggml_nbytes, (const struct ggml_tensor *))                                           \
    X(const char *, ggml_op_desc, (const struct ggml_tensor *))                                    \
    X(struct ggml_cgraph *, ggml_new_graph, (struct ggml_context *))                               \
    X(void, ggml_build_forward_expand, (struct ggml_cgraph *, struct ggml_tensor *))               \
    X(void, ggml_build_forward_order, (struct ggml_cgraph *, struct ggml_tensor *))                \
    X(void, ggml_backend_load_all_from_path, (const char *))                                       \
    X(ggml_backend_t, ggml_backend_init_by_type, (int, const char *))                              \
    X(void, ggml_backend_free, (ggml_backend_t))                                                   \
    X(const char *, ggml_backend_name, (ggml_backend_t))                                           \
    X(ggml_backend_buffer_t, ggml_backend_alloc_ctx_tensors,                                       \
      (struct ggml_context *, ggml_backend_t))                                                     \
    X(void, ggml_backend_buffer_free, (ggml_backend_buffer_t))                                     \
    X(void, ggml_backend_buffer_set_usage, (ggml_backend_buffer_t, int))                           \
    X(void, ggml_backend_tensor_set, (struct ggml_tensor *, const void *, size_t, size_t))         \
    X(void, ggml_backend_tensor_get, (const struct ggml_tensor *, void *, size_t, size_t))         \
    X(ggml_backend_sched_t, ggml_backend_sched_new,                                                \
      (ggml_backend_t *, void *, int, size_t, bool, bool))                                         \
    X(void, ggml_backend_sched_free, (ggml_backend_sched_t))                                       \
    X(bool, ggml_backend_sched_alloc_graph, (ggml_backend_sched_t, struct ggml_cgraph *))          \
    X(int, ggml_backend_sched_graph_compute, (ggml_backend_sched_t, struct ggml_cgraph *))         \
    X(int, ggml_backend_sched_get_n_splits, (ggml_backend_sched_t))                                \
    X(int, ggml_backend_sched_get_n_copies, (ggml_backend_sched_t))                                \
    X(ggml_backend_t, ggml_backend_sched_get_tensor_backend,                                       \
      (ggml_backend_sched_t, struct ggml_tensor *))

#define GGML_DECLARE(ret, name, params) extern ret(*name) params;
GGML_FUNCS(GGML_DECLARE)
#undef GGML_DECLARE

/* Opens (RTLD_GLOBAL) the library of dir named plain, or prefix...".so" where prefix is not NULL
 * (node-llama-cpp's renamed builds, libggml.vulkan.v0.5.0.so); NULL, said on stderr, when
 * none opens. */
void *ggml_api_open(const char *dir, const char *plain, const char *prefix);

/* Looks up each of names[0..n) among the loaded libraries into the function pointer at
 * slots[i]: 0, or -1 after naming each one missing on stderr. */
int ggml_api_bind(const char *const *names, void *const *slots, size_t n);

/* Loads ggml's libraries from dir (libggml-base.so and the library that registers backends,
 * libggml.so or a build's renamed copy of it) and every function above. 0, or -1 with the
 * reason on stderr. */
int ggml_api_load(const char *dir);

#endif
