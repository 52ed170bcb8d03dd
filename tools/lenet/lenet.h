/* lenet.h — LeNet-5 trained with libvkt: the model behind vkt-lenet and its tests.
 *
 * conv(1->6, 5x5, pad 2) -> act -> max pool 2x2/2 -> conv(6->16, 5x5) -> act ->
 * max pool -> dense 400->120 -> act -> 84 -> act -> 10 -> log-softmax
 * cross-entropy, with the backward pass written as the ops an autodiff emits
 * (gradient convs with swapped axes, window_scatter_max, dot + transpose) and
 * an SGD update. All of a step's work goes to the GPU in one submission. */
#ifndef LENET_H
#define LENET_H

#include <stddef.h>
#include <stdint.h>

#include "vkt.h"

typedef struct lenet lenet;

typedef enum lenet_act { LENET_TANH = 0, LENET_RELU = 1 } lenet_act;

/* Creates the parameters on ctx (weights scaled normal from `seed`, biases
 * zero) for SGD with learning rate lr. Returns VKT_OK or a libvkt status;
 * lenet_error() says what failed. */
int lenet_create(vkt_ctx *ctx, lenet_act act, uint64_t seed, double lr, lenet **out);
/* Releases the parameters (NULL is ignored); the context stays. */
void lenet_free(lenet *m);

/* One training step on images [batch, 1, 28, 28] and one-hot labels [batch, 10]
 * (row-major floats). With loss != NULL the mean cross-entropy is read back
 * (one sync point); otherwise the step ends with one vkt_sync, so either way
 * its work is done on return. Returns VKT_OK or a libvkt status. */
int lenet_step(lenet *m, const float *images, const float *onehot, int batch, float *loss);
/* The same step from a recorded graph (vkt_graph_*): the first call, and a
 * call with another batch size, records it; every call writes the inputs into
 * the graph's bound tensors and launches it (one submission). Parameters are
 * updated in place. Returns VKT_OK or a libvkt status, VKT_EGRAPH when an op
 * of the step would fall back (a graph records native work only). */
int lenet_step_graph(lenet *m, const float *images, const float *onehot, int batch, float *loss);
/* Launches the recorded step again on the batch it holds (the last one
 * written), as a CUDA graph replays on static inputs: no input is written.
 * VKT_EGRAPH when no step is recorded. */
int lenet_step_graph_again(lenet *m, float *loss);
/* The recorded step's dispatches and the dependency levels they run in
 * (vkt_graph_dispatches, vkt_graph_levels); 0 and 0 before it is recorded. */
void lenet_graph_size(const lenet *m, size_t *dispatches, size_t *levels);
/* Drops the recorded step; the next lenet_step_graph records it again (after
 * turning profiling on, say: a graph times its dispatches when recorded so). */
void lenet_forget_graph(lenet *m);

/* The parameters, in forward order: conv1 kernel and bias, conv2 kernel and
 * bias, then weight and bias of each dense layer (LENET_PARAMS tensors). */
#define LENET_PARAMS 10
/* Number of float32 elements of parameter i (0 for a bad index). */
size_t lenet_param_numel(int i);
/* Copies parameter i out (a sync point) or replaces it; n must equal its
 * numel. For checkpoints and gradient checks. Returns VKT_OK or a status. */
int lenet_param_read(const lenet *m, int i, float *dst, size_t n);
int lenet_param_write(lenet *m, int i, const float *src, size_t n);

/* One line naming the call that failed last on this thread and libvkt's
 * message ("" if none). */
const char *lenet_error(void);

#endif
