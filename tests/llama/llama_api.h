/* llama_api.h - the part of llama.cpp's C API (llama.h) the llama driver uses, loaded at run
 * time from the prebuilt libraries node-llama-cpp ships without headers (tools/deps/ggml.sh
 * fetches them, pinned). Declared from the API's documentation for that build; the two
 * parameter structs are passed whole, so they are opaque blocks of the build's sizes whose
 * few fields the driver sets are checked against the build's defaults before use
 * (llama_api_params). */
#ifndef LLAMA_API_H
#define LLAMA_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct llama_model;
struct llama_context;
struct llama_vocab;
typedef int32_t llama_token;

/* struct llama_model_params and struct llama_context_params of the pinned build. */
typedef struct {
    _Alignas(8) unsigned char b[80];
} llama_model_params;
typedef struct {
    _Alignas(8) unsigned char b[160];
} llama_context_params;

/* struct llama_batch, as llama_batch_get_one fills it: only passed back to llama_decode. */
typedef struct {
    int32_t n_tokens;
    void *token, *embd, *pos, *n_seq_id, *seq_id, *logits;
} llama_batch;

/* enum ggml_log_level's values the callback sees, and the callback. */
typedef void (*llama_log_fn)(int level, const char *text, void *user);

/* return type, name, parameters */
#define LLAMA_FUNCS(X)                                                                             \
    X(void, llama_backend_init, (void))                                                            \
    X(void, llama_backend_free, (void))                                                            \
    X(void, llama_log_set, (llama_log_fn, void *))                                                 \
    X(llama_model_params, llama_model_default_params, (void))                                      \
    X(llama_context_params, llama_context_default_params, (void))                                  \
    X(struct llama_model *, llama_model_load_from_file, (const char *, llama_model_params))        \
    X(void, llama_model_free, (struct llama_model *))                                              \
    X(const struct llama_vocab *, llama_model_get_vocab, (const struct llama_model *))             \
    X(int32_t, llama_vocab_n_tokens, (const struct llama_vocab *))                                 \
    X(int32_t, llama_tokenize,                                                                     \
      (const struct llama_vocab *, const char *, int32_t, llama_token *, int32_t, bool, bool))     \
    X(struct llama_context *, llama_init_from_model, (struct llama_model *, llama_context_params)) \
    X(void, llama_free, (struct llama_context *))                                                  \
    X(llama_batch, llama_batch_get_one, (llama_token *, int32_t))                                  \
    X(int32_t, llama_decode, (struct llama_context *, llama_batch))                                \
    X(float *, llama_get_logits_ith, (struct llama_context *, int32_t))                            \
    X(void *, llama_get_memory, (const struct llama_context *))                                    \
    X(void, llama_memory_clear, (void *, bool))

#define LLAMA_DECLARE(ret, name, params) extern ret(*name) params;
LLAMA_FUNCS(LLAMA_DECLARE)
#undef LLAMA_DECLARE

/* Loads llama.cpp's libraries from dir (ggml's, as ggml_api_load does, with its functions;
 * libllama or node-llama-cpp's libllama.<gpu>.<version>.so) and every function above. 0, or -1
 * with the reason on stderr. */
int llama_api_load(const char *dir);

/* The settings the driver changes, written into the build's default parameters. */
typedef struct {
    int gpu_layers; /* layers offloaded; -1: all */
    int ctx, batch; /* context size; logical and physical batch */
    int threads;    /* CPU threads, for generation and for batches */
    int flash_attn; /* 1 on, 0 off */
} llama_api_settings;

/* The default model and context parameters of the pinned build with s written in: 0, or -1
 * (with the reason on stderr) when the defaults are not where that build keeps them, so the
 * fields would be written to the wrong places. */
int llama_api_params(const llama_api_settings *s, llama_model_params *m, llama_context_params *c);

#endif
