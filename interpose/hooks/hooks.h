/* hooks.h - the top layer: the functions libfbcount interposes (host_result and
 * host_resident_op, sigaction and signal, the exec family, _Fork), the public API
 * (fbcount.h), and the policy around them: when the shim starts, when it arms its triggers,
 * what the warn and abort modes do. Uses every layer below; nothing below calls up here. */
#ifndef FBC_HOOKS_H
#define FBC_HOOKS_H

#include "readers.h"
#include "redirect.h"
#include "triggers.h"

/* init.c: start-up and arming */
void fbc_load(void); /* what runs at load: process facts and configuration */
/* Everything else, at the first use of a backend or of the API; idempotent. */
void fbc_init(void);
/* Decides whether the calling thread records (the process census or an open scope). */
void fbc_thread_decide(void);
/* The process used a backend: the dumper, the signal handlers and the exit dump, once. */
void fbc_arm(void);
/* Whether fbc_arm ran: the process has a census to write. */
bool fbc_armed(void);
/* Arms the census when a module loaded since the last call (a dlopen) defines a backend's
 * exit: a program that loads its backend later has snapshots, termination dumps and its exit
 * census as one linked at start has. One look at the modules' generation when none was. */
void fbc_notice_modules(void);

/* modes.c: FBCOUNT_MODE=warn, abort and error, for each fallback counted */
/* Decides e's verdict (once, or again when fresh: a stack counted for the first time), prints
 * the warning the first time an (op, site) falls back, and aborts in abort mode where the op
 * is not allowed. True when error mode refuses the call. */
bool fbc_mode_check(fbc_entry *e, bool fresh);
/* The message a refused call fails with (the op and the user's line). */
void fbc_mode_refusal(const fbc_entry *e, char *why, size_t cap);
/* Error mode where the backend has no error path: writes the census as abort mode does and
 * aborts. */
void fbc_mode_abort(const fbc_entry *e) __attribute__((noreturn));
void fbc_modes_register(void); /* its fork handling */

/* exits.c: the backends' exits the shim defines */
/* Makes every thread take the slow path (a process-wide scope is open) or not. */
void fbc_wrap_slow(bool all);
/* Whether the shim defines symbol (so LD_PRELOAD interposes it). */
bool fbc_exit_defined(const char *symbol);
#define FBC_BUILTIN_MAX 16 /* exits the shim defines, at most */
/* A shim that is not preloaded: the redirections of every exit it defines to its definitions
 * (r: FBC_BUILTIN_MAX of room); 0 when preloaded (LD_PRELOAD reaches them). */
size_t fbc_exits_builtin(fbc_redirection *r);
/* Counts a call made through a declared exit's entry (c: bm, exit, fn set, the rest zero):
 * stack, reader none, the modes. With timed, true when the entry is to run the call and then
 * call fbc_exit_end(c) (the call stays in progress for the calls nested in it); false when
 * it does not record, and without timed (the entry cannot see the call end). */
bool fbc_exit_begin(fbc_call *c, bool timed);
/* The end of a call fbc_exit_begin timed: its time added to its count. */
void fbc_exit_end(fbc_call *c);

/* declared.c: exits reached by redirection (FBCOUNT_EXIT, a descriptor's exits the shim does
 * not define), and the loader entries that redirect modules loaded later */
/* Redirects, in the modules loaded since the last call: the built-in exits to the shim's
 * definitions (when not preloaded), the declared exits to their entries (entries.S), and
 * dlopen, dlmopen, dlsym and dlvsym to entries that call this again first (when not
 * preloaded, or with exits declared). Cheap when nothing was loaded. For attach: call it
 * once the shim is loaded into the process; fbc_exits_undo() takes everything back. */
void fbc_exits_redirect(void);
/* Restores every entry fbc_exits_redirect wrote, the loader entries included (a call in
 * flight finishes where it went); a later fbc_exits_redirect writes them again. */
void fbc_exits_undo(void);
/* attach: reads the rows again (with the attach's FBCOUNT_EXIT and FBCOUNT_BACKEND) and
 * declares their exits, before anything is redirected. False, changing nothing, when the
 * process declared exits already (loaded with FBCOUNT_EXIT set): their entries may be in use,
 * and the rows they name stay. */
bool fbc_exits_declare_again(void);

/* exitwrap.c: _exit and _Exit, which end a process with no exit handler run */
/* Finds the real _exit and _Exit (at the shim's first use). */
void fbc_exits_resolve_end(void);

/* attach.c: a census attached to a running process (fbcount_attach, fbcount_detach) */
#define FBC_ATTACH_VARS_MAX 16000 /* the variables' text, at most (base/config.c keeps it) */
/* The shim was attached (fbcount_attach): termination signals chain to the program's own. */
extern bool fbc_attached;

#endif
