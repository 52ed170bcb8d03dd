/* driver.c - llama.cpp's own decode, as an application drives it: loads a GGUF model through
 * libllama (the prebuilt build node-llama-cpp ships, with its Vulkan backend), decodes a
 * prompt, then generates tokens one at a time by greedy choice, each a llama_decode. Between
 * the decodes it marks the log ("@@ decode N tokens T" before, "@@ end N" after), so the
 * scheduler's own account (GGML_SCHED_DEBUG=2, printed through the log) can be cut per
 * decode; under the census it asks for a dump after each decode (fbcount_dump, when the shim
 * is loaded), so the census can be cut the same way. The generated tokens go to stdout.
 *   usage: llama-driver BINS_DIR MODEL [--gpu-layers N] [--prompt N] [--gen N]
 *                       [--threads N] [--flash-attn] [--log FILE] [--dump-each]
 *                       [--rounds N]   (tokens/s of each round on stdout, for benchmarks)
 *                       [--alternate]  (with the shim loaded: every other generated
 *                                       token's decode in a census scope, each token's
 *                                       time on stdout, "token 0|1 SECONDS", then the
 *                                       last scope's totals: "scope {...}")
 * Exit 77 when llama.cpp finds no Vulkan device and GPU layers were asked for. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ggml_api.h"
#include "llama_api.h"

typedef struct {
    const char *bins, *model, *log;
    llama_api_settings s;
    int prompt, gen, rounds;
    bool dump_each, alternate;
} options;

/* The shim's in-process API (fbcount.h), where it is loaded: a dump after each decode, and
 * census scopes around every other decode. */
typedef struct {
    int (*dump)(const char *path);
    void (*scope_begin)(void);
    void *(*scope_end)(void);
    void (*census_free)(void *census);
    int (*json)(void *census, char *buf, size_t cap);
} shim_api;

/* The last scope's census, freed when the next one ends: what scopes record, read once at
 * the end (reading each would name its stacks between the timed decodes). */
static void *last_scope;

static FILE *logf_;

/* llama.cpp's and ggml's log (the scheduler's account among it), with the driver's marks. */
static void on_log(int level, const char *text, void *user)
{
    (void)level, (void)user;
    fputs(text, logf_);
}

static int parse(int argc, char **argv, options *o)
{
    *o = (options){.s = {-1, 512, 512, 2, 0}, .prompt = 16, .gen = 31, .rounds = 0};
    if (argc < 3)
        return -1;
    o->bins = argv[1];
    o->model = argv[2];
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--flash-attn"))
            o->s.flash_attn = 1;
        else if (!strcmp(a, "--dump-each"))
            o->dump_each = true;
        else if (!strcmp(a, "--alternate"))
            o->alternate = true;
        else if (!v)
            return -1;
        else if (!strcmp(a, "--gpu-layers"))
            o->s.gpu_layers = atoi(argv[++i]);
        else if (!strcmp(a, "--prompt"))
            o->prompt = atoi(argv[++i]);
        else if (!strcmp(a, "--gen"))
            o->gen = atoi(argv[++i]);
        else if (!strcmp(a, "--threads"))
            o->s.threads = atoi(argv[++i]);
        else if (!strcmp(a, "--rounds"))
            o->rounds = atoi(argv[++i]);
        else if (!strcmp(a, "--log"))
            o->log = argv[++i];
        else
            return -1;
    }
    bool fits = o->prompt > 0 && o->prompt < o->s.ctx / 2 && o->gen >= 0 && o->gen < o->s.ctx / 2;
    return fits ? 0 : -1;
}

/* The prompt: a sentence through the model's SentencePiece vocabulary, repeated to n tokens
 * (the first is <s>). */
static int prompt_tokens(const struct llama_vocab *v, llama_token *out, int n)
{
    static const char text[] = "the quick brown fox jumps over the lazy dog";
    llama_token one[256];
    int k = llama_tokenize(v, text, (int32_t)strlen(text), one, 256, true, false);
    if (k < 2)
        return -1;
    for (int i = 0; i < n; i++)
        out[i] = i < k ? one[i] : one[1 + (i - k) % (k - 1)];
    return 0;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* One decode, marked in the log, and its census state dumped where asked. */
static int decode(struct llama_context *ctx, llama_token *t, int n, int *seq,
                  int (*dump)(const char *))
{
    fprintf(logf_, "@@ decode %d tokens %d\n", *seq, n);
    fflush(logf_);
    int rc = llama_decode(ctx, llama_batch_get_one(t, n)); /* DRIVER-DECODE */
    fprintf(logf_, "@@ end %d\n", (*seq)++);
    fflush(logf_);
    if (dump && dump(NULL) != 0)
        fprintf(stderr, "llama-driver: the census dump after a decode failed\n");
    return rc;
}

static llama_token greedy(struct llama_context *ctx, int n_vocab)
{
    const float *l = llama_get_logits_ith(ctx, -1);
    llama_token best = 0;
    for (llama_token i = 1; i < n_vocab; i++)
        if (l[i] > l[best])
            best = i;
    return best;
}

/* One generated token: its decode, inside a census scope where asked, up to its logits;
 * its time on stdout with --alternate. The token chosen from them in *next. */
static int step(struct llama_context *ctx, llama_token *next, int n_vocab, int *seq,
                const shim_api *api, bool scoped, bool timed)
{
    double t0 = now();
    if (scoped)
        api->scope_begin();
    int rc = decode(ctx, next, 1, seq, api->dump);
    *next = greedy(ctx, n_vocab);
    if (scoped) {
        api->census_free(last_scope);
        last_scope = api->scope_end();
    }
    if (timed)
        printf("token %d %.9f\n", scoped, now() - t0);
    return rc;
}

/* A prompt, then o->gen tokens; their ids on stdout, or the round's rates with rounds. */
static int generate(struct llama_context *ctx, const struct llama_vocab *v, const options *o,
                    int *seq, const shim_api *api)
{
    int (*dump)(const char *) = api->dump;
    llama_token tokens[512];
    if (prompt_tokens(v, tokens, o->prompt) != 0)
        return fprintf(stderr, "llama-driver: the vocabulary tokenizes nothing\n"), -1;
    double t0 = now();
    if (decode(ctx, tokens, o->prompt, seq, dump) != 0)
        return fprintf(stderr, "llama-driver: the prompt's decode failed\n"), -1;
    int n_vocab = llama_vocab_n_tokens(v);
    llama_token next = greedy(ctx, n_vocab); /* its logits: the decode has finished */
    double t1 = now();
    bool alt = o->alternate && api->scope_begin;
    for (int i = 0; i < o->gen; i++) {
        if (!o->rounds)
            printf("%s%d", i ? " " : "", next);
        if (step(ctx, &next, n_vocab, seq, api, alt && i % 2, o->alternate) != 0)
            return fprintf(stderr, "llama-driver: decode %d failed\n", *seq - 1), -1;
    }
    double t2 = now();
    if (o->rounds)
        printf("prompt_tps %.3f gen_tps %.3f\n", o->prompt / (t1 - t0), o->gen / (t2 - t1));
    else
        printf(" %d\n", next);
    return 0;
}

int main(int argc, char **argv)
{
    options o;
    if (parse(argc, argv, &o) != 0)
        return fprintf(stderr, "usage: llama-driver BINS_DIR MODEL [--gpu-layers N] [--prompt N] "
                               "[--gen N] [--threads N] [--flash-attn] [--log FILE] "
                               "[--dump-each] [--rounds N] [--alternate]\n"),
               2;
    logf_ = o.log ? fopen(o.log, "w") : stderr;
    if (!logf_ || llama_api_load(o.bins) != 0)
        return 1;
    ggml_backend_load_all_from_path(o.bins);
    llama_log_set(on_log, NULL);
    llama_backend_init();
    llama_model_params mp;
    llama_context_params cp;
    if (llama_api_params(&o.s, &mp, &cp) != 0)
        return 1;
    struct llama_model *model = llama_model_load_from_file(o.model, mp);
    struct llama_context *ctx = model ? llama_init_from_model(model, cp) : NULL;
    if (!ctx)
        return fprintf(stderr, "llama-driver: cannot load %s\n", o.model), 1;
    shim_api api = {0};
    void *p[5] = {
        o.dump_each ? dlsym(RTLD_DEFAULT, "fbcount_dump") : NULL,
        dlsym(RTLD_DEFAULT, "fbcount_scope_begin"), dlsym(RTLD_DEFAULT, "fbcount_scope_end"),
        dlsym(RTLD_DEFAULT, "fbcount_census_free"), dlsym(RTLD_DEFAULT, "fbcount_census_json")};
    memcpy(&api.dump, &p[0], sizeof p[0]);
    if (p[1] && p[2] && p[3] && p[4]) {
        memcpy(&api.scope_begin, &p[1], sizeof p[1]);
        memcpy(&api.scope_end, &p[2], sizeof p[2]);
        memcpy(&api.census_free, &p[3], sizeof p[3]);
        memcpy(&api.json, &p[4], sizeof p[4]);
    } else if (o.alternate) {
        return fprintf(stderr, "llama-driver: --alternate needs libfbcount.so loaded\n"), 2;
    }
    int seq = 0, rc = 0;
    for (int r = 0; r < (o.rounds ? o.rounds : 1) && rc == 0; r++) {
        llama_memory_clear(llama_get_memory(ctx), true);
        rc = generate(ctx, llama_model_get_vocab(model), &o, &seq, &api);
    }
    if (last_scope) { /* its "total" object: what a scope recorded of one decode */
        static char text[1 << 20];
        const char *total =
            api.json(last_scope, text, sizeof text) > 0 ? strstr(text, "\"total\"") : NULL;
        const char *end = total ? strchr(total, '}') : NULL;
        printf("scope {%.*s}\n", end ? (int)(end - total + 1) : 0, end ? total : "");
        api.census_free(last_scope);
    }
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    if (o.log)
        fclose(logf_);
    return rc ? 1 : 0;
}
