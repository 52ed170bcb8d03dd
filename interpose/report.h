/* report.h - the attributed form of a census (report.c), shared by dumps and the API. */
#ifndef FBC_REPORT_H
#define FBC_REPORT_H

#include "shim.h"

typedef struct {
    const char *site, *file, *module;
    int line;
    uint64_t count, bytes;
} fbc_rsite;

typedef struct fbc_rop {
    UT_hash_handle hh;
    const char *op;
    uint64_t count, bytes, max_bytes;
    fbc_rsite *sites;
    size_t nsites;
    fbc_shape *shapes;
    size_t nshapes;
} fbc_rop;

typedef struct {
    const fbc_entry *e; /* frames are immutable; counts below are the copy taken under the lock */
    uint64_t count, bytes, max_bytes;
    fbc_shape *shapes;
    size_t nshapes;
    fbc_attrib a;
} fbc_rstack;

struct fbc_report {
    fbc_rstack *stacks;
    size_t nstacks;
    fbc_rop *ophash[2];
    fbc_rop **ops[2]; /* sorted by bytes, then count */
    size_t nops[2];
    uint64_t total[2], bytes[2], max[2];
    bool has_backend; /* libvkt's counters, read when the census was copied */
    uint64_t native, fallback, host;
};

void fbc_fmt_bytes(uint64_t b, char *out, size_t cap);

#endif
