/* rng.h — the deterministic generator behind vkt-lenet's data and weights.
 *
 * A 64-bit LCG: tiny, the same on every platform and compiler, so a seed
 * names one exact run (data, initial weights, hence the loss curve). */
#ifndef LENET_RNG_H
#define LENET_RNG_H

#include <math.h>
#include <stdint.h>

/* Seeds a generator; distinct seeds give unrelated streams. */
static inline uint64_t rng_seed(uint64_t seed)
{
    return seed * 2654435761u + 1;
}

/* Uniform in [0, 1). */
static inline double rng_uniform(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*state >> 11) / 9007199254740992.0;
}

/* Standard normal (Box-Muller; one value per call keeps the stream simple). */
static inline double rng_normal(uint64_t *state)
{
    double u = rng_uniform(state) + 1e-12, v = rng_uniform(state);
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

#endif
