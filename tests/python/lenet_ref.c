/* lenet_ref.c - the C side of the Python LeNet test (test_lenet.py): vkt-lenet's data,
 * initial parameters and losses, at full precision.
 *   lenet_ref digits SEED BATCH        images then one-hot labels, raw float32, to stdout
 *   lenet_ref params SEED              the ten initial parameters, raw float32, to stdout
 *   lenet_ref losses SEED BATCH STEPS  each step's loss, %.9g, one a line
 *   lenet_ref graph-losses SEED BATCH STEPS  the same from the recorded step (lenet_step_graph) */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "digits.h"
#include "lenet.h"
#include "rng.h"

static int fail(const char *what)
{
    fprintf(stderr, "lenet_ref: %s\n", what);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return fail(
            "usage: lenet_ref digits SEED BATCH | params SEED | [graph-]losses SEED BATCH STEPS");
    uint64_t seed = strtoull(argv[2], NULL, 10);
    int batch = argc > 3 ? atoi(argv[3]) : 1, steps = argc > 4 ? atoi(argv[4]) : 0;
    if (batch < 1)
        return fail("batch must be >= 1");
    float *images = malloc((size_t)batch * DIGITS_SIDE * DIGITS_SIDE * sizeof *images);
    float *onehot = malloc((size_t)batch * DIGITS_CLASSES * sizeof *onehot);
    if (!images || !onehot)
        return fail("out of memory");
    uint64_t rng = rng_seed(seed);
    if (strcmp(argv[1], "digits") == 0) {
        digits_batch(&rng, batch, images, onehot, NULL);
        fwrite(images, sizeof *images, (size_t)batch * DIGITS_SIDE * DIGITS_SIDE, stdout);
        fwrite(onehot, sizeof *onehot, (size_t)batch * DIGITS_CLASSES, stdout);
        return 0;
    }
    vkt_ctx *ctx = NULL;
    lenet *m = NULL;
    if (vkt_ctx_create(NULL, &ctx) != VKT_OK)
        return fail(vkt_last_error());
    if (lenet_create(ctx, LENET_TANH, seed, 0.05, &m) != VKT_OK)
        return fail(lenet_error());
    if (strcmp(argv[1], "params") == 0) {
        for (int i = 0; i < LENET_PARAMS; i++) {
            size_t n = lenet_param_numel(i);
            float *p = malloc(n * sizeof *p);
            if (!p || lenet_param_read(m, i, p, n) != VKT_OK)
                return fail(p ? lenet_error() : "out of memory");
            fwrite(p, sizeof *p, n, stdout);
            free(p);
        }
    } else if (strcmp(argv[1], "losses") == 0 || strcmp(argv[1], "graph-losses") == 0) {
        bool graph = argv[1][0] == 'g';
        for (int s = 0; s < steps; s++) {
            float loss;
            digits_batch(&rng, batch, images, onehot, NULL);
            int status = graph ? lenet_step_graph(m, images, onehot, batch, &loss)
                               : lenet_step(m, images, onehot, batch, &loss);
            if (status != VKT_OK)
                return fail(lenet_error());
            printf("%.9g\n", (double)loss);
        }
    } else {
        return fail("unknown mode");
    }
    lenet_free(m);
    vkt_ctx_destroy(ctx);
    free(images);
    free(onehot);
    return 0;
}
