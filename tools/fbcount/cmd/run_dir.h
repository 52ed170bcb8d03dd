/* run_dir.h - the directory an `fbcount run` writes its dumps into: made or taken over before
 * the command starts, and left behind only when it holds a census.
 *
 * Without -o it is a new ./fbcount-<pid>. An -o DIR holding dumps of an earlier run has them
 * moved aside to DIR.old first (a DIR.old of dumps is replaced), so DIR holds this run only;
 * --append keeps them. When the run wrote no dump, what the run made is undone: a folder it
 * created is removed, dumps it moved aside are moved back, and its run log goes; later
 * commands never take an empty folder for a census of zero. The commands that read a census
 * find the newest such folder here when none is named.
 */
#ifndef FBCOUNT_RUN_DIR_H
#define FBCOUNT_RUN_DIR_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "cli.h" /* FBX_PATH */

typedef struct {
    char path[PATH_MAX];      /* as named, or fbcount-<pid> */
    char abs[PATH_MAX];       /* resolved */
    char moved[PATH_MAX + 8]; /* where earlier dumps went ("" when nowhere) */
    char log[PATH_MAX + 64];  /* the run log the shim appends to */
    bool created;             /* this run made the directory */
} fbx_run_dir;

/* Prepares the directory for output (NULL: a new fbcount-<pid>). Returns 0, or an exit code
 * after one line on stderr; nothing is left changed then. */
int fbx_run_dir_make(fbx_run_dir *d, const char *output, bool append);

/* Whether the directory holds a dump now. */
bool fbx_run_dir_has_dump(const fbx_run_dir *d);

/* Undoes what fbx_run_dir_make did, for a run that wrote no dump: removes the run log, and a
 * directory this run created (with the shim's temporaries), or moves the earlier dumps
 * back. Returns true when the directory is gone. */
bool fbx_run_dir_undo(fbx_run_dir *d);

/* Removes the shim's temporaries from the directory: dumps a process was killed while
 * writing (its census is the file it wrote before, the raw one of its exit). Only once no
 * watched process is alive. */
void fbx_run_dir_sweep(const fbx_run_dir *d);

/* ---- finding the folders runs left, for the commands that read them ------------------ */

/* Whether dir holds a dump (a *.json file that is not hidden). */
bool fbx_holds_dump(const char *dir);

/* The k newest fbcount-* folders in the working directory (what fbcount run leaves) that
 * hold a dump, oldest first, into names; a newer folder without a dump is named on stderr
 * as skipped. Returns how many were found (at most k). */
size_t fbx_newest_runs(const char *cmd, size_t k, char names[][FBX_PATH]);

/* The census to read when none is named: fbx_newest_runs(cmd, 1), said on stderr. Writes
 * its name into buf and returns 0, or prints why not and returns -1. */
int fbx_default_dir(const char *cmd, char *buf, size_t len);

#endif
