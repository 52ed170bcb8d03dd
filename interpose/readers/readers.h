/* readers.h - how a call of a backend's exit becomes events of the census. Each exit of a row
 * names a reader (rules/backend.h's FBR_READERS): it reads the call's arguments before the
 * call (libvkt's result tensor, PyTorch's operator and boxed stack) or after it (ggml's graph,
 * each node an event), says whether this backend's sizes are known, and makes a refused call
 * fail the way the backend's callers expect (FBCOUNT_MODE=error).
 *
 * Sits between hooks/ (which calls it) and record/ (which it calls). Never called from a
 * signal handler. */
#ifndef FBC_READERS_H
#define FBC_READERS_H

#include "record.h"

/* One call of an exit, as the hooks saw it. */
typedef struct fbc_call {
    fbc_bmod *bm;     /* the backend whose exit was called */
    unsigned exit;    /* the exit's index in bm->row */
    uintptr_t arg[6]; /* the integer-class arguments, as passed */
    uintptr_t ret;    /* the integer return value, once the call returned */
    void *fn;         /* the definition the call goes to */
    fbc_event *ev;    /* the stack captured at the call; the reader fills in the rest */
    fbc_recorded rec; /* the event counted before the call, when the reader counts then */
    fbc_stamp t0;     /* when the call's work began */
    uint64_t held_ns; /* time since t0 the shim held the call (a mode's verdict): not its own */
    bool skip;        /* nothing in this call is the census's (ggml: a split on the GPU) */
    bool refused;     /* FBCOUNT_MODE=error refuses it: the call is not made */
    /* The hooks' policy for each event counted (FBCOUNT_MODE's warn and abort). */
    void (*counted)(struct fbc_call *c, fbc_recorded r);
} fbc_call;

typedef struct {
    /* Once per backend module, at its first recorded call: sets bm->sizes, bm->reader. */
    void (*bind)(fbc_bmod *bm);
    /* Before the call: fills c->ev (kind, op, bytes, shape) and c->t0 from the arguments;
     * true when the event is to be counted now, before the call (its time is added after),
     * false when after() counts. */
    bool (*before)(fbc_call *c);
    /* After the call (ns: how long it took): counts what only the call's end can tell. */
    void (*after)(fbc_call *c, uint64_t ns);
    /* Makes the call fail the way its callers expect instead of running it (FBCOUNT_MODE=
     * error), with why as the message; false when the backend has no such way. May not
     * return (a C++ exception). */
    bool (*refuse)(fbc_call *c, const char *why);
    /* Optional (NULL: the stack is walked at every call): fills c->ev's stack from one this
     * thread captured already and that the call lies within (ggml: the scheduler's compute,
     * around every split and copy it makes), before before(); false when there is none. */
    bool (*stack)(fbc_call *c);
} fbc_reader_ops;

/* The reader id's operations; every member is set (the "none" reader's do nothing). */
const fbc_reader_ops *fbc_reader(fbr_reader id);
/* The name of reader ID's operations (FBR_READERS' id): each reader's file defines
 * `const fbc_reader_ops FBC_READER_OPS(ID)`, readers.c makes the table of them. */
#define FBC_READER_OPS(id) fbc_read_##id

/* The shared parts readers use. */
/* c->ev's kind from the exit's kind (fallback, host, transfer). */
void fbc_reader_kind(fbc_call *c);
/* c->t0: the backend's own start of this fallback when it keeps one, else now. */
void fbc_reader_start(fbc_call *c);
/* Counts c->ev as it stands (fbc_record_count) and hands the result to c->counted. */
fbc_recorded fbc_reader_count(fbc_call *c);
/* A refuse() for a backend without an error path of its own. */
bool fbc_reader_no_refuse(fbc_call *c, const char *why);

/* PyTorch in anomaly mode made autograd node `node` (fn: the Node::assign_parent its
 * constructor called, in libtorch_cpu): keeps the calling thread's stack as the node's
 * forward, for fallbacks made in the node's backward (readers/torch.c). */
void fbc_torch_node_made(void *node, void *fn);

/* Records a call that a reader intercepts itself, where the backend calls through a function
 * pointer of its own that the reader pointed at its code (c: bm, exit, fn and the arguments
 * set): as an exit's call is recorded (the stack, rd's before and after, the time), around
 * thunk(c), which makes the call. Set by hooks/ before any reader binds (hooks sit above the
 * readers, which reach them through this pointer only). */
extern void (*fbc_reader_intercept)(fbc_call *c, const fbc_reader_ops *rd,
                                    void (*thunk)(fbc_call *));

#endif
