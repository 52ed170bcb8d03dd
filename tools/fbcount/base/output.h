/* output.h - writing the command's output files the way the shim writes dumps: into a new
 * temporary next to the target, created with O_EXCL|O_NOFOLLOW so no planted file or
 * symlink is ever written through, then renamed over the target. A reader never sees half a
 * file, and a destination that is not a regular file (a device, a FIFO, a directory) is
 * refused rather than replaced.
 */
#ifndef FBCOUNT_OUTPUT_H
#define FBCOUNT_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct {
    FILE *f;    /* write here */
    char *path; /* NULL for standard output */
    char *tmp;
} fbo_file;

/* Opens path for writing (NULL or "-": standard output). Returns 0, or -1 with one line
 * "PATH: why" in err. */
int fbo_open(fbo_file *o, const char *path, char *err, size_t errlen);

/* Finishes the output: flushes it and checks every write; for a file, renames the temporary
 * into place when ok and every write arrived, else removes it. Returns 0, or -1 with
 * "PATH: why" in err (a full disk, a closed pipe, EIO, or ok false). Every file the command
 * writes goes through fbo_open and fbo_close: one policy for -o, --json=FILE, pprof, SVG. */
int fbo_close(fbo_file *o, bool ok, char *err, size_t errlen);

/* Flushes standard output and reports whether everything written to it arrived; -1 with
 * "standard output: why" in err otherwise. */
int fbo_check_stdout(char *err, size_t errlen);

#endif
