/* triggers.h - when a census is written: at exit, before an exec, on a termination signal, on
 * the census signal (a snapshot), every FBCOUNT_INTERVAL (a checkpoint), on a fatal signal,
 * and what a fork does to it. Dumps are written by one dumper thread, started once the
 * process uses a backend; signal handlers only wake it. Uses dump/, record/ and base/. */
#ifndef FBC_TRIGGERS_H
#define FBC_TRIGGERS_H

#include <signal.h>

#include "dump.h"

/* ---- chain.c: the signals the shim handles, and the application's view of them --------- */
/* Whether the real sigaction (the next definition after the shim) was found. */
bool fbc_sig_ready(void);
/* Installs handler for sig as the shim's, recording what was there as the application's
 * action. census: the application's own actions are never installed, only called by the
 * handler (fbc_sig_call_app); otherwise the shim steps aside while the application's action
 * is anything but the default. Returns 0, or -1 when sig was not the default (termination
 * signals) or cannot be handled. */
int fbc_sig_take(int sig, void (*handler)(int, siginfo_t *, void *), bool census);
/* Installs handler for sig as the shim's whatever the application's action is, SIG_IGN apart
 * (an attached shim: the program's sigaction was not interposed, so the handler must chain
 * to the program's own, fbc_sig_app_handles). Returns 0 or -1 as fbc_sig_take. */
int fbc_sig_take_chained(int sig, void (*handler)(int, siginfo_t *, void *));
/* Whether the application's action for sig is a handler of its own. Async-signal-safe. */
bool fbc_sig_app_handles(int sig);
/* Puts back the application's action on every signal the shim took (where the shim's handler
 * is still the one installed) and lets them go: the shim handles no signal after. */
void fbc_sig_release_all(void);
/* The application's sigaction(): on a signal the shim took, its view is kept and reported
 * back; others go to the real one. Returns 1 (done), -1 (failed, errno set), or 0 when the
 * real sigaction cannot be found. */
int fbc_sig_app_action(int sig, const struct sigaction *act, struct sigaction *old);
/* Runs the application's handler for sig with the arguments the kernel gave. */
void fbc_sig_call_app(int sig, siginfo_t *si, void *uc);
/* Ends the process by sig as its default action would (core dump included): the default
 * restored, sig unblocked and raised. Async-signal-safe; returns only if sig does not kill. */
void fbc_sig_die(int sig);

/* ---- requests.c: what handlers ask of the dumper, and its wake-up ---------------------- */
extern unsigned fbc_req_snapshot; /* snapshots asked for so far */
extern int fbc_req_terminate;     /* a termination signal's number, 0 when none */
extern int fbc_terminate_done;    /* its dump is written (or given up) */
bool fbc_req_open(void);          /* marks the dumper as starting; false if it already is */
void fbc_req_close(void);         /* it could not start */
bool fbc_dumper_running(void);
void fbc_dumper_wake(void);                      /* async-signal-safe */
void fbc_req_wait(const struct timespec *until); /* the dumper's sleep (CLOCK_MONOTONIC) */
void fbc_req_after_fork(void);
/* Has fn(arg) run on the dumper thread, after what was posted before, without waiting; false
 * where there is no dumper or no memory (the caller then runs it: fbc_run_big). */
bool fbc_dumper_post(void (*fn)(void *), void *arg);
/* Runs what is posted and not yet run, on the calling thread: the dumper's loop, and the final
 * dump (the process is ending, and what was posted must not be lost). before (when not NULL)
 * is called first, only where there is something to run. */
void fbc_dumper_drain(void (*before)(void));
/* The final dump's: drains, then waits (at most 2 s) for what the dumper thread took and is
 * still running, so that no message posted before the exit is lost with the process. */
void fbc_dumper_finish(void);

/* ---- dumper.c: the one thread that writes dumps ---------------------------------------- */
/* Starts it (once; safe to call again). Called when the process first uses a backend: a
 * process that never does runs no thread of the shim's. first (when not NULL) runs on the
 * thread before anything else: work that must not run where the start was asked (inside
 * the loader, on a backend's arrival). */
void fbc_dumper_start(void (*first)(void));
/* Runs fn(arg) on a thread with a full stack (the dumper, or a thread made for it) and
 * waits: symbolizing needs more stack than an application thread may have. */
void fbc_run_big(void (*fn)(void *), void *arg);
/* Fork: the child has no dumper thread; it starts one when it uses a backend. */
void fbc_dumper_after_fork(void);

/* ---- snapshot.c: the census signal ----------------------------------------------------- */
void fbc_snapshot_install(void);
/* Serves snapshot requests (the dumper's loop, and the exit path for one asked just before). */
void fbc_snapshot_serve(void);
void fbc_snapshot_drain(void);
/* Asks for a snapshot and waits, at most ms milliseconds, for it to be written (from a signal
 * handler: async-signal-safe). */
void fbc_snapshot_await(int ms);
/* Releases the census signal (detach); a later fbc_snapshot_install takes it again. */
void fbc_snapshot_release(void);
void fbc_snapshot_after_fork(void);

/* ---- terminate.c: termination signals whose action is the default ----------------------- */
void fbc_terminate_install(void);
/* In an attached process: also the termination signals the program handles itself; the
 * census is written (a snapshot) and then the program's handler runs. */
void fbc_terminate_install_chained(void);
/* The dumper's part: the final dump for signal sig, then the handler is released. */
void fbc_terminate_serve(int sig);

/* ---- crash.c: fatal signals ------------------------------------------------------------- */
void fbc_crash_install(void);
/* An alternate signal stack for the calling thread, where it has none (a stack overflow
 * must still reach the crash handler). */
void fbc_crash_altstack(void);

/* ---- final.c: the census's last state, at exit or before an exec ------------------------ */
/* Writes the final dump once (reason exit; extra: e.g. the exec marker) and its summary;
 * later calls write again only when something was recorded since (a fallback in a late
 * atexit handler or a library destructor). */
void fbc_final_dump(const char *extra);
/* The same at detach (reason detach), for an attached census; returns the dump's path ("" when
 * none was written). */
const char *fbc_final_detach(void);
bool fbc_final_done(void); /* the final dump was written (by exit, a signal or abort mode) */
/* The census's last state for a process that ends without exit (_exit, _Exit): its raw
 * census, async-signal-safe as they are (a program's signal handler may call them). A fork
 * child writes one only when it counted an event since the fork. */
void fbc_final_raw(void);
bool fbc_final_writing_now(void); /* a final dump is being written (async-signal-safe) */
/* The parent's side of a fork: what tells a child that used its backend since. */
void fbc_final_before_fork(void);
/* A termination signal's handler, while a final dump may be written: false when none is;
 * else the process dies by sig once the raw census is on disk (at once when it is, after a
 * bounded wait for another thread writing it), or, on the writing thread itself, true is
 * returned and the writer ends the process as soon as the raw census lands. Async-signal-
 * safe. */
bool fbc_final_terminate(int sig);
void fbc_final_mark(void); /* another path wrote the final dump */
void fbc_final_after_fork(void);

/* ---- fork.c: the census across fork ---------------------------------------------------- */
void fbc_fork_register(void);
/* The child of a fork that ran no handlers (_Fork): starts an empty census of its own. */
void fbc_fork_child_bare(void);

#endif
