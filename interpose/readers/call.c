/* call.c - what the readers share: an event's kind and start, counting it, a call a reader
 * intercepts itself (fbc_reader_intercept, set by hooks/), and the reader of
 * an exit whose signature is unknown (declared by name): the call is counted with its stack
 * and time, its bytes unknown. */
#include <stdio.h>

#include "readers.h"

void (*fbc_reader_intercept)(fbc_call *c, const fbc_reader_ops *rd, void (*thunk)(fbc_call *));

void fbc_reader_kind(fbc_call *c)
{
    static const fbc_kind kinds[] = {[FBR_EXIT_FALLBACK] = FBC_FALLBACK,
                                     [FBR_EXIT_HOST] = FBC_HOST,
                                     [FBR_EXIT_TRANSFER] = FBC_TRANSFER,
                                     [FBR_EXIT_GRAPH] = FBC_FALLBACK};
    c->ev->kind = kinds[c->bm->row->exit[c->exit].kind];
}

void fbc_reader_start(fbc_call *c)
{
    uint64_t s = fbc_bmod_started(c->bm);
    c->t0 = s ? (fbc_stamp){s, 0} : fbc_clock_start();
}

static void none_bind(fbc_bmod *bm)
{
    bm->sizes = false;
}

static bool none_before(fbc_call *c)
{
    fbc_reader_kind(c);
    fbc_reader_start(c);
    return true;
}

static void none_after(fbc_call *c, uint64_t ns)
{
    (void)c, (void)ns;
}

static bool none_refuse(fbc_call *c, const char *why)
{
    (void)c, (void)why;
    return false;
}

const fbc_reader_ops FBC_READER_OPS(NONE) = {none_bind, none_before, none_after, none_refuse, NULL};

bool fbc_reader_no_refuse(fbc_call *c, const char *why)
{
    return none_refuse(c, why);
}

fbc_recorded fbc_reader_count(fbc_call *c)
{
    fbc_recorded r = fbc_record_count(c->ev);
    if (c->counted)
        c->counted(c, r);
    return r;
}
