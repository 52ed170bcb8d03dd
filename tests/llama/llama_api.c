/* llama_api.c - see llama_api.h. */
#include "llama_api.h"

#include <stdio.h>
#include <string.h>

#include "ggml_api.h"

#define LLAMA_DEFINE(ret, name, params) ret(*name) params;
LLAMA_FUNCS(LLAMA_DEFINE)
#undef LLAMA_DEFINE

int llama_api_load(const char *dir)
{
    if (ggml_api_load(dir) != 0 || !ggml_api_open(dir, "libllama.so", "libllama."))
        return -1;
#define LLAMA_NAME(ret, name, params) #name,
#define LLAMA_SLOT(ret, name, params) (void *)&name,
    static const char *const names[] = {LLAMA_FUNCS(LLAMA_NAME)};
    void *const slots[] = {LLAMA_FUNCS(LLAMA_SLOT)};
#undef LLAMA_NAME
#undef LLAMA_SLOT
    return ggml_api_bind(names, slots, sizeof names / sizeof *names);
}

/* Where the pinned build keeps the fields set here, and the default each holds there. */
enum {
    M_GPU_LAYERS = 16, /* int32_t n_gpu_layers: -1 */
    C_CTX = 0,         /* uint32_t n_ctx: 512 */
    C_BATCH = 4,       /* uint32_t n_batch: 2048 */
    C_UBATCH = 8,      /* uint32_t n_ubatch: 512 */
    C_SEQ_MAX = 12,    /* uint32_t n_seq_max: 1 */
    C_THREADS = 28,    /* int32_t n_threads: 4 (GGML_DEFAULT_N_THREADS) */
    C_THREADS_BATCH = 32,
    C_FLASH_ATTN = 52, /* enum llama_flash_attn_type: -1 (auto) */
    C_TYPE_K = 104,    /* enum ggml_type type_k, type_v: 1 (f16) */
    C_TYPE_V = 108,
};

static int32_t get(const unsigned char *b, int at)
{
    int32_t v;
    memcpy(&v, b + at, sizeof v);
    return v;
}

static void set(unsigned char *b, int at, int32_t v)
{
    memcpy(b + at, &v, sizeof v);
}

int llama_api_params(const llama_api_settings *s, llama_model_params *m, llama_context_params *c)
{
    *m = llama_model_default_params();
    *c = llama_context_default_params();
    static const struct {
        int at;
        int32_t v;
    } ctx_defaults[] = {{C_CTX, 512},       {C_BATCH, 2048}, {C_UBATCH, 512},
                        {C_SEQ_MAX, 1},     {C_THREADS, 4},  {C_THREADS_BATCH, 4},
                        {C_FLASH_ATTN, -1}, {C_TYPE_K, 1},   {C_TYPE_V, 1}};
    int bad = get(m->b, M_GPU_LAYERS) != -1;
    for (size_t i = 0; i < sizeof ctx_defaults / sizeof *ctx_defaults; i++)
        bad += get(c->b, ctx_defaults[i].at) != ctx_defaults[i].v;
    if (bad) {
        fprintf(stderr,
                "llama: this build's parameters are not laid out as the driver "
                "expects (%d defaults differ): not the pinned node-llama-cpp build\n",
                bad);
        return -1;
    }
    set(m->b, M_GPU_LAYERS, s->gpu_layers);
    set(c->b, C_CTX, s->ctx);
    set(c->b, C_BATCH, s->batch);
    set(c->b, C_UBATCH, s->batch);
    set(c->b, C_THREADS, s->threads);
    set(c->b, C_THREADS_BATCH, s->threads);
    set(c->b, C_FLASH_ATTN, s->flash_attn);
    return 0;
}
