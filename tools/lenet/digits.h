/* digits.h — a deterministic, synthetic, digit-like image set for vkt-lenet.
 *
 * Ten stroke templates (seven-segment shapes with a few diagonals) rendered
 * into 28x28 images with a random shift, scale, slant, stroke thickness and
 * pixel noise: learnable by a small CNN, yet not a lookup table, and nothing
 * to download. */
#ifndef LENET_DIGITS_H
#define LENET_DIGITS_H

#include <stdint.h>

#define DIGITS_SIDE 28
#define DIGITS_CLASSES 10

/* Fills `images` (batch x 28 x 28 floats, roughly in [0, 1]) and `onehot`
 * (batch x 10) with fresh samples drawn from *rng; labels, when not NULL,
 * receives each sample's class. The same state gives the same batch. */
void digits_batch(uint64_t *rng, int batch, float *images, float *onehot, int *labels);

#endif
