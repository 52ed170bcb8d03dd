/* nofp.h - a call chain compiled without frame pointers (nofp.c). */
#ifndef NOFP_H
#define NOFP_H

/* Calls leaf(arg) depth + 1 frames down, through frames that keep no frame pointer. */
int nofp_call(int depth, int (*leaf)(void *), void *arg);
/* The same through frames that leave rbp untouched (the caller's chain shows through). */
int nofp_plain(int depth, int (*leaf)(void *), void *arg);

#endif
