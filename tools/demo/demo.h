/* demo.h - what the demo programs (vkt-lenet, vkt-lenet-mpi, vkt-mlp) share in their setup:
 * numbers read from options, each refused with one message that names the program and the
 * option, and the libvkt context opened on the device asked for.
 */
#ifndef DEMO_H
#define DEMO_H

#include "vkt.h"

/* s as an integer in [lo, hi] into *out: 0, or -1 after "PROG: FLAG expects an integer in
 * [lo, hi], got 'S'" on stderr. */
int demo_long(const char *prog, const char *flag, const char *s, long lo, long hi, long *out);

/* s as a number strictly between lo and hi into *out: 0, or -1 after "PROG: FLAG expects
 * WHAT, got 'S'" on stderr (what: "a number in (0, 100)", "a positive number"). */
int demo_number(const char *prog, const char *flag, const char *s, double lo, double hi,
                const char *what, double *out);

/* The context on device (NULL: libvkt's choice, VKT_DEVICE), or NULL after "PROG: why" on
 * stderr. */
vkt_ctx *demo_ctx(const char *prog, const char *device);

#endif
