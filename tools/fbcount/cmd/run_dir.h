/* run_dir.h - the directory an `fbcount run` writes its dumps into: made or taken over before
 * the command starts, and left behind only when it holds a census.
 *
 * Without -o it is a new ./fbcount-<pid>. An -o DIR holding dumps of an earlier run has them
 * moved aside to DIR.old first (a DIR.old of dumps is replaced), so DIR holds this run only;
 * --append keeps them. When the run wrote no dump, what the run made is undone: a folder it
 * created is removed, dumps it moved aside are moved back, and its run log goes; later
 * commands never take an empty folder for a census of zero.
 */
#ifndef FBCOUNT_RUN_DIR_H
#define FBCOUNT_RUN_DIR_H

#include <limits.h>
#include <stdbool.h>

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

#endif
