/* ggml_memo.c - splits kept once read (ggml.h's ggml_split): llama.cpp computes the same
 * graph decode after decode, and a split's nodes, their classes and the bytes they write
 * stay what they were while the graph holds the same nodes of the same shapes. A graph is
 * known again by a hash of what the reading depends on: each node's address, op, type,
 * flags and shape, and the same of its sources; a graph that differs in any of them is read
 * again. */
#include <stdlib.h>
#include <string.h>

#include "ggml.h"

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v;
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 32);
}

static uint64_t tensor_hash(uint64_t h, const void *t)
{
    h = mix(h, (uintptr_t)t);
    h = mix(h, (uint64_t)(uint32_t)ggml_t_op(t) << 32 | (uint32_t)ggml_t_type(t));
    h = mix(h, (uint32_t)ggml_t_flags(t));
    for (int d = 0; d < 4; d++)
        h = mix(h, (uint64_t)ggml_t_ne(t, d));
    return h;
}

uint64_t ggml_graph_hash(const ggml_api *a, void *graph, uint64_t salt)
{
    int n = a->n_nodes(graph);
    uint64_t h = mix(0x9e3779b97f4a7c15ull ^ salt, (uint64_t)n);
    for (int i = 0; i < n; i++) {
        const void *t = a->node(graph, i);
        if (!t || !ggml_tensor_layout(a, t))
            return 0;
        h = tensor_hash(h, t);
        for (int s = 0; s < GGML_SRC_MAX; s++)
            if (ggml_t_src(t, s))
                h = tensor_hash(h, ggml_t_src(t, s));
    }
    return h ? h : 1;
}

ggml_split *ggml_memo_find(ggml_thread *th, const void *graph, uint64_t hash)
{
    for (int i = 0; hash && i < GGML_MEMO; i++)
        if (th->memo[i].graph == graph && th->memo[i].hash == hash)
            return &th->memo[i];
    return NULL;
}

ggml_split *ggml_memo_take(ggml_thread *th, const void *graph)
{
    ggml_split *s = NULL;
    for (int i = 0; i < GGML_MEMO && !s; i++)
        if (th->memo[i].graph == graph)
            s = &th->memo[i];
    if (!s)
        s = &th->memo[th->memo_next++ % GGML_MEMO];
    s->graph = graph;
    s->hash = 0;
    s->op = NULL;
    s->bytes = 0;
    s->nev = 0;
    return s;
}

bool ggml_memo_push(ggml_split *s, fbc_kind kind, const char *op, size_t bytes, const void *t)
{
    if (s->nev == s->cap) {
        uint32_t cap = s->cap ? 2 * s->cap : 16;
        ggml_node_event *ev = realloc(s->ev, cap * sizeof *ev);
        if (!ev)
            return false;
        s->ev = ev;
        s->cap = cap;
    }
    s->ev[s->nev++] = (ggml_node_event){kind, op, bytes, t};
    return true;
}
