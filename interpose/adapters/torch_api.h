/* torch_api.h - the C interface of the torch adapter: a small library compiled against one
 * libtorch's headers (adapters/torch.cc) that reads a call of at::native::cpu_fallback,
 * the operator handle and the boxed stack, which only that libtorch's C++ layout can read.
 * The shim loads it only into a process running exactly that libtorch (the same build id of
 * libtorch_cpu), and counts without it otherwise. */
#ifndef FBC_TORCH_API_H
#define FBC_TORCH_API_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FBCOUNT_TORCH_ABI 3
#define FBCOUNT_TORCH_RANK 8

/* What one call reads as. */
typedef struct {
    char op[160];     /* the operator as the dispatcher names it: "aten::gelu.out" */
    uint64_t bytes;   /* the bytes of the tensors among its arguments (what goes to the CPU) */
    uint64_t largest; /* the bytes of the largest one of them */
    int has_shape;    /* the first tensor argument's shape and dtype */
    int rank;
    int64_t dims[FBCOUNT_TORCH_RANK];
    int dtype; /* c10::ScalarType */
} fbcount_torch_call;

/* An autograd node a backward is running. */
typedef struct {
    char name[96];   /* as PyTorch names it: "EluBackward0" */
    uint64_t seq;    /* its sequence number, shared with the forward op that made it */
    uint64_t thread; /* the forward's thread id (at::RecordFunction's numbering) */
} fbcount_torch_node_info;

/* FBCOUNT_TORCH_ABI, for the shim to refuse an adapter of another interface. */
int fbcount_torch_abi(void);
/* The GNU build id (hex) of the libtorch_cpu the adapter was compiled against. */
const char *fbcount_torch_build_id(void);
/* Reads a call: op is a const c10::OperatorHandle *, stack a torch::jit::Stack * holding the
 * call's arguments. 0, or -1 when it could not be read (nothing in out is then valid). */
int fbcount_torch_read(const void *op, const void *stack, fbcount_torch_call *out);
/* Reads node, a torch::autograd::Node * that Engine::evaluate_function is running.
 * 0, or -1 when it could not be read. */
int fbcount_torch_node(const void *node, fbcount_torch_node_info *out);
/* A dtype's short name (f32, s64, bf16, ...). */
const char *fbcount_torch_dtype_name(int dtype);
/* Throws c10::Error with message, as a failing kernel would (a RuntimeError in Python). */
void fbcount_torch_refuse(const char *message) __attribute__((noreturn));

#ifdef __cplusplus
}
#endif

#endif
