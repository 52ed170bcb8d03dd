/* readers.c - the table of readers: rules/backend.h's FBR_READERS, each id to the file that
 * reads its calls. */
#include "readers.h"

extern const fbc_reader_ops fbc_read_none, fbc_read_vkt, fbc_read_torch, fbc_read_ggml_graph,
    fbc_read_ggml_copy, fbc_read_ggml_copy_async, fbc_read_ggml_sched, fbc_read_ggml_set_async;

const fbc_reader_ops *fbc_reader(fbr_reader id)
{
    static const fbc_reader_ops *const table[FBR_READ_COUNT] = {
        [FBR_READ_NONE] = &fbc_read_none,
        [FBR_READ_VKT] = &fbc_read_vkt,
        [FBR_READ_TORCH] = &fbc_read_torch,
        [FBR_READ_GGML_GRAPH] = &fbc_read_ggml_graph,
        [FBR_READ_GGML_COPY] = &fbc_read_ggml_copy,
        [FBR_READ_GGML_COPY_ASYNC] = &fbc_read_ggml_copy_async,
        [FBR_READ_GGML_SCHED] = &fbc_read_ggml_sched,
        [FBR_READ_GGML_SET_ASYNC] = &fbc_read_ggml_set_async,
    };
    return (unsigned)id < FBR_READ_COUNT && table[id] ? table[id] : &fbc_read_none;
}
