/* backend_args.h - the backends a run or an attach is told of on its command line (--exit
 * LIB:SYMBOL[:op=PREFIX], --backend FILE): each checked as the shim will read it, so that a
 * mistake is named before any process starts or is touched, and kept as the values of
 * FBCOUNT_EXIT and FBCOUNT_BACKEND. */
#ifndef FBCOUNT_BACKEND_ARGS_H
#define FBCOUNT_BACKEND_ARGS_H

typedef struct {
    char exits[4096];    /* FBCOUNT_EXIT: ','-separated */
    char backends[4096]; /* FBCOUNT_BACKEND: ':'-separated absolute paths */
} fbx_backend_args;

/* Adds the declared exit spec; cmd names the command in the error line. Returns FBX_OK, or
 * FBX_USAGE after one line on stderr. */
int fbx_add_exit(fbx_backend_args *a, const char *cmd, const char *spec);

/* Adds the descriptor file at path (parsed now, passed on by its absolute path). Returns
 * FBX_OK, or FBX_READ, FBX_INVALID or FBX_USAGE after one line on stderr. */
int fbx_add_backend(fbx_backend_args *a, const char *cmd, const char *path);

#endif
