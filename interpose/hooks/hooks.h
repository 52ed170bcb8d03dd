/* hooks.h - the top layer: the functions libfbcount interposes (host_result and
 * host_resident_op, sigaction and signal, the exec family, _Fork), the public API
 * (fbcount.h), and the policy around them: when the shim starts, when it arms its triggers,
 * what the warn and abort modes do. Uses every layer below; nothing below calls up here. */
#ifndef FBC_HOOKS_H
#define FBC_HOOKS_H

#include "triggers.h"

/* init.c: start-up and arming */
void fbc_load(void);          /* what runs at load: process facts and configuration */
/* Everything else, at the first use of a backend or of the API; idempotent. */
void fbc_init(void);
/* Decides whether the calling thread records (the process census or an open scope). */
void fbc_thread_decide(void);
/* The process used a backend: the dumper, the signal handlers and the exit dump, once. */
void fbc_arm(void);

/* modes.c: FBCOUNT_MODE=warn and abort, for a stack recorded for the first time */
void fbc_mode_check(const fbc_entry *e);
void fbc_modes_register(void); /* its fork handling */

/* wrap.c: makes every thread take the slow path (a process-wide scope is open) or not */
void fbc_wrap_slow(bool all);

#endif
