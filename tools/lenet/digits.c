/* digits.c — renders the synthetic digit set (see digits.h). */
#include "digits.h"

#include <math.h>

#include "rng.h"

typedef struct seg {
    float x0, y0, x1, y1;
} seg;

/* Strokes in a unit box (x right, y down); at most six per digit. */
static const struct {
    int n;
    seg s[6];
} templates[DIGITS_CLASSES] = {
    {4, {{0, 0, 1, 0}, {1, 0, 1, 1}, {1, 1, 0, 1}, {0, 1, 0, 0}}},
    {2, {{.5f, 0, .5f, 1}, {.2f, .25f, .5f, 0}}},
    {5, {{0, 0, 1, 0}, {1, 0, 1, .5f}, {1, .5f, 0, .5f}, {0, .5f, 0, 1}, {0, 1, 1, 1}}},
    {4, {{0, 0, 1, 0}, {1, 0, 1, 1}, {1, 1, 0, 1}, {.2f, .5f, 1, .5f}}},
    {3, {{0, 0, 0, .55f}, {0, .55f, 1, .55f}, {.75f, 0, .75f, 1}}},
    {5, {{1, 0, 0, 0}, {0, 0, 0, .5f}, {0, .5f, 1, .5f}, {1, .5f, 1, 1}, {1, 1, 0, 1}}},
    {5, {{1, 0, 0, 0}, {0, 0, 0, 1}, {0, 1, 1, 1}, {1, 1, 1, .5f}, {1, .5f, 0, .5f}}},
    {2, {{0, 0, 1, 0}, {1, 0, .35f, 1}}},
    {5, {{0, 0, 1, 0}, {1, 0, 1, 1}, {1, 1, 0, 1}, {0, 1, 0, 0}, {0, .5f, 1, .5f}}},
    {5, {{1, .5f, 0, .5f}, {0, .5f, 0, 0}, {0, 0, 1, 0}, {1, 0, 1, 1}, {1, 1, .2f, 1}}},
};

static float seg_dist(float px, float py, const seg *s)
{
    float dx = s->x1 - s->x0, dy = s->y1 - s->y0;
    float len2 = dx * dx + dy * dy;
    float t = len2 > 0 ? ((px - s->x0) * dx + (py - s->y0) * dy) / len2 : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    float ex = px - (s->x0 + t * dx), ey = py - (s->y0 + t * dy);
    return sqrtf(ex * ex + ey * ey);
}

static void render(uint64_t *rng, int c, float *img)
{
    /* The glyph box is about 12x18 pixels, placed and deformed at random. */
    float w = (float)(10 + 4 * rng_uniform(rng)), h = (float)(15 + 5 * rng_uniform(rng));
    float cx = (float)(14 + 4 * (rng_uniform(rng) - .5)),
          cy = (float)(14 + 4 * (rng_uniform(rng) - .5));
    float slant = (float)(.4 * (rng_uniform(rng) - .5)),
          thick = (float)(1.0 + 1.2 * rng_uniform(rng));
    seg px[6];
    for (int i = 0; i < templates[c].n; i++) {
        const seg *s = &templates[c].s[i];
        float y0 = cy + (s->y0 - .5f) * h, y1 = cy + (s->y1 - .5f) * h;
        px[i] = (seg){cx + (s->x0 - .5f) * w + slant * (y0 - cy), y0,
                      cx + (s->x1 - .5f) * w + slant * (y1 - cy), y1};
    }
    for (int y = 0; y < DIGITS_SIDE; y++)
        for (int x = 0; x < DIGITS_SIDE; x++) {
            float d = 1e9f;
            for (int i = 0; i < templates[c].n; i++) {
                float di = seg_dist((float)x, (float)y, &px[i]);
                d = di < d ? di : d;
            }
            /* A soft edge one pixel wide keeps small shifts visible to the gradient. */
            float v = thick - d + .5f;
            v = v < 0 ? 0 : v > 1 ? 1 : v;
            img[y * DIGITS_SIDE + x] = v + (float)(.15 * rng_normal(rng));
        }
}

void digits_batch(uint64_t *rng, int batch, float *images, float *onehot, int *labels)
{
    for (int i = 0; i < batch; i++) {
        int c = (int)(rng_uniform(rng) * DIGITS_CLASSES) % DIGITS_CLASSES;
        render(rng, c, images + (long)i * DIGITS_SIDE * DIGITS_SIDE);
        for (int k = 0; k < DIGITS_CLASSES; k++)
            onehot[i * DIGITS_CLASSES + k] = k == c ? 1.0f : 0.0f;
        if (labels)
            labels[i] = c;
    }
}
