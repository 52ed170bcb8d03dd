/* fakevkt.h - a small backend shaped like libvkt for the shim's tests: public vkt_ ops that
 * reach host_result (or host_resident_op) through internal helpers and the PLT, and libvkt's
 * optional accessors, so attribution and shapes can be checked exactly. */
#ifndef FAKEVKT_H
#define FAKEVKT_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int dtype; /* 0 f32, 1 i32 */
    int rank;
    int64_t shape[4];
} fake_tensor;

int host_result(void *out, const void *data, size_t nbytes);
void host_resident_op(const void *out, size_t nbytes);

int vkt_dot(fake_tensor *out, size_t nbytes);        /* falls back */
int vkt_add(fake_tensor *out, size_t nbytes);        /* falls back */
int vkt_matmul(fake_tensor *out, size_t nbytes);     /* a public op that calls vkt_dot */
int vkt_native(void);                                /* stays native: counted by vkt_stats */
void vkt_transpose(fake_tensor *out, size_t nbytes); /* host-resident work */
int fake_raw(size_t nbytes);                         /* host_result with no vkt_ frame */
int fake_recurse(unsigned pattern, int depth);       /* a distinct stack per pattern */

void fake_set_rc(int rc);         /* what host_result returns from now on */
void fake_set_delay(unsigned us); /* how long host_result sleeps from now on */
uint64_t fake_calls(void);        /* host_result calls the backend itself received */
uint64_t fake_host_calls(void);

#endif
