/* chain.h - two call chains outside the capture's own module (chain.c) that reach one leaf
 * through the same frames at the same places and differ only further out. */
#ifndef CHAIN_H
#define CHAIN_H

/* Calls leaf(arg) through depth + 1 frames of one function, which keeps no frame pointer,
 * entered from chain_a or chain_b: frames of one size, so the leaf's return address lies at
 * the same place from both, while the frames outward of the shared ones differ. */
int chain_a(int depth, int (*leaf)(void *), void *arg);
int chain_b(int depth, int (*leaf)(void *), void *arg);

#endif
