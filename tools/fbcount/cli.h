/* cli.h - what the subcommands share: exit codes, messages, loading inputs.
 *
 * Every error is one line on stderr, "fbcount: <subcommand>: <what>", and maps to one
 * documented exit code so scripts can tell a failed check from an unreadable dump.
 */
#ifndef FBCOUNT_CLI_H
#define FBCOUNT_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "merge.h"

enum {
    FBX_OK = 0,        /* success; check: within the allowance */
    FBX_CHECK = 1,     /* check: the census is over the allowance */
    FBX_USAGE = 2,     /* bad command line */
    FBX_READ = 3,      /* a file or directory cannot be read */
    FBX_INVALID = 4,   /* a file is not a valid fbcount/1 dump */
    FBX_SHIM = 5,      /* run: libfbcount.so not found */
    FBX_TIMEOUT = 6,   /* snapshot: no new dump in time */
    FBX_PROCESS = 7,   /* snapshot: no such process, or it cannot be signalled */
    FBX_SYMBOLS = 8,   /* symbolize: a module could not be opened or written */
    FBX_NOTFOUND = 127 /* run: the command cannot be executed (126 also, as in sh) */
};

/* The text every --help ends with. */
extern const char fbx_exit_codes[];

/* Prints "fbcount: <cmd>: <message>" to stderr. */
void fbx_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Loads paths into a new census. On failure prints the error and returns NULL with the
 * exit code in *code. */
fbm_census *fbx_load(const char *cmd, char *const *paths, int n, int *code);

/* Subcommands: argc/argv start at the subcommand's name; each returns the exit code. */
int fbx_run(int argc, char **argv);
int fbx_report(int argc, char **argv);
int fbx_diff(int argc, char **argv);
int fbx_check(int argc, char **argv);
int fbx_snapshot(int argc, char **argv);
int fbx_symbolize(int argc, char **argv);

#endif
