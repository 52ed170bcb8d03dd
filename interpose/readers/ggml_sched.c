/* ggml_sched.c - ggml_backend_sched_graph_compute_async(sched, graph): one graph of ggml's
 * scheduler (for llama.cpp, one decode's). Nothing of its own is counted: it notes the
 * scheduler's GPU backends (an op is a fallback where none of them can run it), starts its
 * splits' numbering (GGML_SCHED_DEBUG's) and the tensors downstream of a fallback afresh,
 * and wraps each backend's cpy_tensor_async so the copies the scheduler makes through it are
 * seen (ggml_copy.c). */
#include "ggml.h"

static bool sched_before(fbc_call *c)
{
    ggml_api *a = c->bm->reader;
    ggml_thread *th = ggml_thread_state();
    if (!th || !ggml_ready(a))
        return false;
    void *sched = (void *)c->arg[0];
    th->sched = sched;
    th->outer = *c->ev; /* the stack every call the scheduler makes lies within */
    th->ngpu = 0;
    th->split = 0;
    th->state = SPLIT_FRESH;
    th->last_backend = NULL;
    ggml_taint_clear(th);
    int n = a->sched_n_backends(sched);
    for (int i = 0; i < n; i++) {
        void *b = a->sched_backend(sched, i);
        void *dev = b ? a->get_device(b) : NULL;
        if (ggml_dev_is_gpu(a, dev) && th->ngpu < GGML_GPUS_MAX)
            th->gpu[th->ngpu++] = dev;
        if (b)
            ggml_wrap_backend(a, b, c->bm, c->exit);
    }
    return false;
}

static void sched_after(fbc_call *c, uint64_t ns)
{
    (void)c, (void)ns;
    ggml_thread *th = ggml_thread_state();
    if (th)
        th->sched = NULL;
}

const fbc_reader_ops FBC_READER_OPS(GGML_SCHED) = {ggml_bind, sched_before, sched_after,
                                                   fbc_reader_no_refuse, NULL};
