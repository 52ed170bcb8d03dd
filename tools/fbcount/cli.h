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
    FBX_SYMBOLS = 8,   /* symbolize: the dump's modules cannot be read (out of memory) */
    FBX_WRITE = 9,     /* the output cannot be written: a full disk, a closed pipe, -o
                        * naming something other than a regular file */
    FBX_NOTFOUND = 127 /* run: the command cannot be executed (126 also, as in sh) */
};

/* The text every --help ends with. */
extern const char fbx_exit_codes[];

/* Prints "fbcount: <cmd>: <message>" to stderr. */
void fbx_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Loads paths into a new census. On failure prints the error and returns NULL with the
 * exit code in *code. */
fbm_census *fbx_load(const char *cmd, char *const *paths, int n, int *code);

/* Loads paths into c (filters already set). Returns FBX_OK, or prints the error and
 * returns the exit code. */
int fbx_load_into(const char *cmd, fbm_census *c, char *const *paths, int n);

/* Whether name is a folder name fbcount run makes: "fbcount-<pid>" or "fbcount-<pid>.<n>". */
bool fbx_is_run_dir(const char *name);

/* The census to read when none is named: the newest fbcount-* folder in the working
 * directory (what fbcount run leaves), said on stderr. Writes its name into buf and returns
 * 0, or prints why not and returns -1. */
int fbx_default_dir(const char *cmd, char *buf, size_t len);

/* Prints "fbcount VERSION" (what -V and --version print). */
void fbx_version(void);

/* Finishes the command: checks standard output for write errors. Returns code, or
 * FBX_WRITE when something written to standard output did not arrive. */
int fbx_finish(const char *cmd, int code);

/* Subcommands: argc/argv start at the subcommand's name; each returns the exit code. */
int fbx_run(int argc, char **argv);
int fbx_report(int argc, char **argv);
int fbx_diff(int argc, char **argv);
int fbx_check(int argc, char **argv);
int fbx_snapshot(int argc, char **argv);
int fbx_symbolize(int argc, char **argv);

#endif
