/* interposer.h — counters of libvkt's two fallback exits, kept by a shared
 * library that defines host_result and host_resident_op ahead of libvkt in the
 * link order, counts each call on the calling thread, and forwards to libvkt's
 * own definitions (dlsym RTLD_NEXT), as libfbcount does. Prefix ip_. */
#ifndef VKT_TEST_INTERPOSER_H
#define VKT_TEST_INTERPOSER_H

#include <stdbool.h>
#include <stddef.h>

#include "vkt.h"

typedef struct ip_counts {
    unsigned long host_result;      /* calls of host_result on this thread */
    unsigned long host_resident_op; /* calls of host_resident_op on this thread */
    size_t last_nbytes;             /* nbytes of the latest call of either */
    const vkt_tensor *last_out;     /* out of the latest call of either */
} ip_counts;

/* This thread's counters since the last ip_reset(). */
ip_counts ip_get(void);
void ip_reset(void);
/* While on, host_result on this thread returns VKT_EREFUSED without calling
 * libvkt's (still counted), as libfbcount's FBCOUNT_MODE=error does. */
void ip_refuse(bool on);
/* Address of the interposer's host_result, to compare with what the dynamic
 * linker resolves the name to. */
void *ip_host_result_addr(void);

#endif
