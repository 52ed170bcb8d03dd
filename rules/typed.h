/* typed.h - the symbols the shim defines with their real signature (interpose/hooks/exits.c):
 * the exits whose arguments a reader can read and whose calls error mode can refuse, and the
 * functions it wraps for the origin of later fallbacks. One list, read by the shim's
 * definitions and by the rules that judge a descriptor (rules/backend.c), so a descriptor's
 * read= or refuse on an exit the shim does not type is found, and tests/rules checks the
 * built-in descriptors against it both ways.
 */
#ifndef FBR_TYPED_H
#define FBR_TYPED_H

/* What a typed definition is: an exit a descriptor names, or a call that marks the origin of
 * fallbacks made elsewhere (no descriptor names it). */
#define FBR_TYPED_EXIT 1
#define FBR_TYPED_ORIGIN 0

#define FBR_TORCH_FALLBACK                                                                         \
    "_ZN2at6native12cpu_fallbackERKN3c1014OperatorHandleEPSt6vectorINS1_6IValueESaIS6_EE"
/* torch::autograd::Engine::execute(const edge_list &roots, const variable_list &inputs,
 * bool keep_graph, bool create_graph, bool accumulate_grad, const edge_list &outputs), the
 * same in 1.13 and 2.x: no exit, the start of a backward, whose caller's stack is the origin
 * of the fallbacks autograd's device threads make for it (record/origin.c). */
#define FBR_TORCH_ENGINE_EXECUTE                                                                   \
    "_ZN5torch8autograd6Engine7executeERKSt6vectorINS0_4EdgeESaIS3_EE"                             \
    "RKS2_IN2at6TensorESaIS9_EEbbbS7_"

/* torch::autograd::Engine::evaluate_function(std::shared_ptr<GraphTask> &, Node *func,
 * InputBuffer &, const std::shared_ptr<ReadyQueue> &), the same in 1.13 and 2.x: runs one
 * node of a backward on the calling thread, the node a fallback under it was made for. */
#define FBR_TORCH_EVALUATE                                                                         \
    "_ZN5torch8autograd6Engine17evaluate_functionERSt10shared_ptrINS0_9GraphTaskEEPNS0_4Node"      \
    "ERNS0_11InputBufferERKS2_INS0_10ReadyQueueEE"
/* torch::autograd::Node::assign_parent(): in anomaly mode a node's constructor calls it, after
 * storing the forward's traceback, in the forward op that makes the node (1.13 and 2.x; the
 * Python traceback's own store_stack is not exported by 2.x). */
#define FBR_TORCH_ASSIGN_PARENT "_ZN5torch8autograd4Node13assign_parentEv"

/* X(ID, the shim's function, the symbol, FBR_TYPED_EXIT or FBR_TYPED_ORIGIN). */
#define FBR_TYPED(X)                                                                               \
    X(HOST_RESULT, host_result, "host_result", FBR_TYPED_EXIT)                                     \
    X(HOST_RESIDENT, host_resident_op, "host_resident_op", FBR_TYPED_EXIT)                         \
    X(TORCH_FALLBACK_1, torch_fallback_1, FBR_TORCH_FALLBACK, FBR_TYPED_EXIT)                      \
    X(TORCH_FALLBACK_2, torch_fallback_2, FBR_TORCH_FALLBACK "b", FBR_TYPED_EXIT)                  \
    X(TORCH_FALLBACK_3, torch_fallback_3, FBR_TORCH_FALLBACK "bNS1_11DispatchKeyE",                \
      FBR_TYPED_EXIT)                                                                              \
    X(GGML_SCHED, ggml_backend_sched_graph_compute_async,                                          \
      "ggml_backend_sched_graph_compute_async", FBR_TYPED_EXIT)                                    \
    X(GGML_COMPUTE, ggml_backend_graph_compute_async, "ggml_backend_graph_compute_async",          \
      FBR_TYPED_EXIT)                                                                              \
    X(GGML_COPY, ggml_backend_tensor_copy, "ggml_backend_tensor_copy", FBR_TYPED_EXIT)             \
    X(GGML_COPY_ASYNC, ggml_backend_tensor_copy_async, "ggml_backend_tensor_copy_async",           \
      FBR_TYPED_EXIT)                                                                              \
    X(GGML_SET_ASYNC, ggml_backend_tensor_set_async, "ggml_backend_tensor_set_async",              \
      FBR_TYPED_EXIT)                                                                              \
    X(TORCH_ENGINE, torch_engine_execute, FBR_TORCH_ENGINE_EXECUTE, FBR_TYPED_ORIGIN)              \
    X(TORCH_EVALUATE, torch_evaluate_function, FBR_TORCH_EVALUATE, FBR_TYPED_ORIGIN)               \
    X(TORCH_ASSIGN_PARENT, torch_assign_parent, FBR_TORCH_ASSIGN_PARENT, FBR_TYPED_ORIGIN)

#endif
