/* cli.h - what the subcommands share: exit codes, messages, loading inputs.
 *
 * Every error is one line on stderr, "fbcount: <subcommand>: <what>", and maps to one
 * documented exit code so scripts can tell a failed check from an unreadable dump.
 */
#ifndef FBCOUNT_CLI_H
#define FBCOUNT_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "merge.h"
#include "options.h" /* each command's table of options */

/* The exit codes, one list: the enum below, the text every --help ends with (cli.c: each
 * subcommand's own, "" for every subcommand) and the man page's EXIT STATUS (checked against
 * `fbcount --help` by tests/cmd/docs_test.py) come from it. X(code, NAME, subcommands,
 * meaning); a meaning is one line of --help. */
#define FBX_EXIT_CODES(X)                                                                          \
    X(0, OK, "", "success (check: within the allowance)")                                          \
    X(1, CHECK, "check diff", "check: over the allowance; diff --fail-on-increase: it grew")       \
    X(2, USAGE, "", "usage error (an unknown option or value, a missing argument)")                \
    X(3, READ, "", "a file or directory cannot be read, or holds no dump")                         \
    X(4, INVALID, "", "a file is not a valid fbcount/1 dump (bad JSON, truncated, wrong schema)")  \
    X(5, SHIM, "run attach detach", "run, attach: libfbcount.so not found")                        \
    X(6, TIMEOUT, "snapshot", "snapshot: no new dump before the timeout")                          \
    X(7, PROCESS, "snapshot attach detach", "snapshot: no such process, or not one with the shim") \
    X(8, NOMEM, "", "out of memory")                                                               \
    X(9, WRITE, "", "the output cannot be written (a full disk, a closed pipe, -o a device)")      \
    X(10, SYSTEM, "run attach detach", "run: the system refused what supervising takes (fork)")    \
    X(11, NOGDB, "attach detach", "attach/detach: gdb is not installed")                           \
    X(12, OTHER_USER, "attach detach", "attach/detach: another user's process, no CAP_SYS_PTRACE") \
    X(13, PTRACE_SCOPE, "attach detach", "attach/detach: yama's ptrace_scope forbids tracing")     \
    X(14, UNSUPPORTED, "attach", "attach: a static or non-x86-64 program")                         \
    X(15, HAS_SHIM, "attach", "attach: the process runs the shim already (a snapshot is taken)")   \
    X(16, NOT_ATTACHED, "detach", "detach: the process is not attached")                           \
    X(17, INJECT, "attach detach", "attach/detach: gdb failed, timed out or was refused")          \
    X(18, NO_MATCH, "report check diff", "report/check/diff: a --where filter selects nothing")

enum {
#define FBX_ENUM(code, name, cmds, text) FBX_##name = code,
    FBX_EXIT_CODES(FBX_ENUM)
#undef FBX_ENUM
        FBX_NOEXEC = 126, /* run: the command cannot be executed, as in sh */
    FBX_NOTFOUND = 127    /* run: the command is not found, as in sh */
};

/* The code of a failed load (fbd_status). */
int fbx_load_code(fbd_status st);

/* The text every --help ends with: the exit codes. */
/* The exit codes that cmd can end with, aligned, after "Exit codes:" (NULL: every code, what
 * `fbcount --help` prints). */
void fbx_put_exit_codes(FILE *out, const char *cmd);

/* Prints "fbcount: <cmd>: <message>" to stderr. */
void fbx_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Loads paths into a new census. On failure prints the error and returns NULL with the
 * exit code in *code. */
fbm_census *fbx_load(const char *cmd, char *const *paths, int n, int *code);

/* Loads paths into c (filters already set), a raw census named as it is read. On a lenient
 * census (fbm_census_set_lenient) each dump that cannot be read is named on stderr as
 * skipped. Returns FBX_OK, or prints the error and returns the exit code. */
int fbx_load_into(const char *cmd, fbm_census *c, char *const *paths, int n);

/* Room for a path the command names. */
#define FBX_PATH 4096

/* --where FIELD=VALUE into c (fbm_census_where). Returns FBX_OK, or prints the error (the
 * fields there are) and returns the exit code. */
int fbx_where(const char *cmd, fbm_census *c, char *arg);

/* Loads the paths a command was given into c, or the default folder when n is 0. A census
 * without any dump is an error (FBX_READ), never a census of zero: it means no process used
 * a backend, or the shim was not loaded. Returns FBX_OK or the exit code, after the error. */
int fbx_load_args(const char *cmd, fbm_census *c, char *const *paths, int n);

/* Prints "fbcount VERSION" (what -V and --version print). */
void fbx_version(void);

/* Finishes a command, once, in main.c: where code says its output is the result (success,
 * check's and diff's verdict, attach's snapshot), checks standard output for write errors.
 * Returns code, or FBX_WRITE when something written there did not arrive; an error's code
 * stands as it is. */
int fbx_finish(const char *cmd, int code);

/* Subcommands: argc/argv start at the subcommand's name; each returns the exit code. */
int fbx_run(int argc, char **argv);
int fbx_report(int argc, char **argv);
int fbx_diff(int argc, char **argv);
int fbx_check(int argc, char **argv);
int fbx_snapshot(int argc, char **argv);
int fbx_symbolize(int argc, char **argv);

/* The namer every command's census uses (fbm_namer): a raw census symbolized as `fbcount
 * symbolize` would, in memory, said on stderr; d itself where it cannot be. */
fbd_dump *fbx_name_raw(fbd_dump *d, const char *path);
/* Replaces the raw census at path with its symbolized form (atomically). FBX_OK, or the exit
 * code of what failed, after one line on stderr (the file is then left as it was). */
int fbx_symbolize_in_place(const char *cmd, const char *path);
int fbx_attach(int argc, char **argv);
int fbx_detach(int argc, char **argv);

#endif
