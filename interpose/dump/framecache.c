/* framecache.c - the frame table of one dump: each distinct frame's JSON object once, stacks
 * naming frames by index, and how much of each frame is named: the program's own frames in
 * full (the functions inlined there, each at its line), the backend's, the interpreter's and
 * the system's by their symbol tables only (views of the user's code fold them; the command
 * names them further where it is asked to). Ten thousand stacks of twenty frames hold a few hundred
 * distinct frames; a frame object written in full at every use made a dump of 65,536 stacks 284 MB,
 * larger than a reader accepts. Naming and formatting each frame once is also most of what
 * makes a snapshot fast. A return address whose function was inlined into others takes
 * several consecutive entries (innermost first), a Python frame one. */
#include <stdlib.h>
#include <string.h>

#include "dump.h"
#include "fields.h"

typedef struct {
    uintptr_t key; /* ip * 2 + first; a Python frame's address | 1 << 63 */
    uint32_t index, count;
    bool used;
} slot;

struct fbc_framecache {
    slot *slots;
    size_t cap, n; /* cap a power of two, at most half full */
    char *text;    /* "[{...},{...}" while open; "]" added by fbc_fc_text */
    size_t len, tcap;
    uint32_t entries;
    bool failed;
    unsigned char *eval; /* per entry: CPython's evaluation loop */
    size_t ecap;
};

fbc_framecache *fbc_fc_new(void)
{
    fbc_framecache *c = calloc(1, sizeof *c);
    if (c && !(c->slots = calloc(c->cap = 1024, sizeof *c->slots))) {
        free(c);
        return NULL;
    }
    return c;
}

void fbc_fc_free(fbc_framecache *c)
{
    if (!c)
        return;
    free(c->slots);
    free(c->text);
    free(c->eval);
    free(c);
}

static size_t slot_of(const fbc_framecache *c, uintptr_t key)
{
    uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 32) & (c->cap - 1);
}

static bool grow(fbc_framecache *c)
{
    slot *old = c->slots;
    size_t ocap = c->cap;
    slot *s = calloc(ocap * 2, sizeof *s);
    if (!s)
        return false;
    c->slots = s;
    c->cap = ocap * 2;
    for (size_t i = 0; i < ocap; i++) {
        if (!old[i].used)
            continue;
        size_t j = slot_of(c, old[i].key);
        while (s[j].used)
            j = (j + 1) & (c->cap - 1);
        s[j] = old[i];
    }
    free(old);
    return true;
}

/* Appends an entry's JSON (from a memory writer) to the table text. */
static void append(fbc_framecache *c, const char *s, size_t n)
{
    if (c->failed)
        return;
    if (c->len + n + 2 > c->tcap) {
        size_t cap = c->tcap ? c->tcap : 65536;
        while (c->len + n + 2 > cap)
            cap *= 2;
        char *t = realloc(c->text, cap);
        if (!t) {
            c->failed = true;
            return;
        }
        c->text = t;
        c->tcap = cap;
    }
    c->text[c->len++] = c->entries ? ',' : '[';
    memcpy(c->text + c->len, s, n);
    c->len += n;
    c->entries++;
}

static void mark_eval(fbc_framecache *c, uint32_t index)
{
    if (index >= c->ecap) {
        size_t cap = c->ecap ? c->ecap : 64;
        while (cap <= index)
            cap *= 2;
        unsigned char *e = realloc(c->eval, cap);
        if (!e)
            return; /* the frame is then written as a native frame */
        memset(e + c->ecap, 0, cap - c->ecap);
        c->eval = e;
        c->ecap = cap;
    }
    c->eval[index] = 1;
}

bool fbc_fc_is_eval(const fbc_framecache *c, long index)
{
    return index >= 0 && (size_t)index < c->ecap && c->eval[index];
}

static void format_native(fbc_writer *w, uintptr_t ip, const fbc_frame_info *fi)
{
    fbc_w_str(w, "{" FBR_KEY(FBR_IP));
    fbc_w_hex(w, ip);
    if (fi->symbol) {
        fbc_w_str(w, "," FBR_KEY(FBR_SYMBOL));
        fbc_w_json(w, fi->symbol);
    }
    if (fi->module >= 0) {
        fbc_w_str(w, "," FBR_KEY(FBR_MODULE));
        fbc_w_json(w, fbc_modmap_at((size_t)fi->module)->path);
        fbc_w_str(w, "," FBR_KEY(FBR_OFFSET));
        fbc_w_hex(w, fi->offset);
    }
    if (fi->file) {
        fbc_w_str(w, "," FBR_KEY(FBR_FILE));
        fbc_w_json(w, fi->file);
        if (fi->line > 0) {
            fbc_w_num(w, "," FBR_KEY(FBR_LINE), (uint64_t)fi->line);
        }
    }
    if (fi->inlined)
        fbc_w_str(w, "," FBR_KEY(FBR_INLINED) "true");
    fbc_w_raw(w, "}", 1);
}

static slot *find(fbc_framecache *c, uintptr_t key, size_t *at)
{
    size_t i = slot_of(c, key);
    for (; c->slots[i].used; i = (i + 1) & (c->cap - 1))
        if (c->slots[i].key == key)
            return &c->slots[i];
    *at = i;
    return NULL;
}

static long remember(fbc_framecache *c, size_t at, uintptr_t key, uint32_t index, uint32_t count)
{
    if (c->failed)
        return -1;
    c->slots[at] = (slot){key, index, count, true};
    if (++c->n * 2 > c->cap && !grow(c))
        c->failed = true; /* the table stays correct but can take no more */
    return index;
}

static const char *module_path_at(uintptr_t ip)
{
    long m = fbc_modmap_find(ip);
    return m >= 0 ? fbc_modmap_at((size_t)m)->path : NULL;
}

/* Whether path is a plugin of e's backend: the library that called e's exit (its second
 * frame) where the backend itself called into it (its third frame is in a module of the row),
 * as PyTorch's dispatcher calls a device's boxed fallback in the device's extension library.
 * Its frames are the backend's, as its row's are. The program itself never is one. */
static bool backend_plugin(const fbc_entry *e, const char *path)
{
    const char *caller = e->nframes > 2 ? module_path_at(e->frames[1] - 1) : NULL;
    const char *outer = caller ? module_path_at(e->frames[2] - 1) : NULL;
    return caller && outer && !strcmp(caller, path) && strcmp(path, fbc_process_exe()) &&
           fbr_backend_module(fbc_entry_row(e), outer);
}

bool fbc_fc_full(const fbc_entry *e, uintptr_t ip)
{
    long m = fbc_modmap_find(ip);
    const char *path = m >= 0 ? fbc_modmap_at((size_t)m)->path : NULL;
    const fbc_bmod *bm = fbc_bmod_at(FBC_BACKEND_BMOD(e->backend));
    return path && !fbr_module_is_system(path) && !fbr_module_is_interpreter(path) &&
           !fbr_backend_module(fbc_entry_row(e), path) && !(bm && !strcmp(bm->path, path)) &&
           !backend_plugin(e, path);
}

/* The frames at ip: its inline chain with lines where full, else the function its symbol
 * table names there. Returns how many (at least 1). */
static int name(uintptr_t ip, bool first, bool full, fbc_frame_info *chain)
{
    pthread_mutex_lock(&fbc_sym_lock);
    int n = 1;
    if (full)
        n = fbc_symbolize_chain(ip, first, chain, FBC_MAX_INLINE);
    else
        fbc_symbolize(ip, first, &chain[0]);
    pthread_mutex_unlock(&fbc_sym_lock);
    return n;
}

void fbc_fc_warm(const fbc_entry *e)
{
    fbc_frame_info chain[FBC_MAX_INLINE];
    for (uint32_t f = 0; f < e->nframes; f++)
        name(e->frames[f], f == 0, fbc_fc_full(e, e->frames[f]), chain);
}

long fbc_fc_index(fbc_framecache *c, const fbc_entry *e, uintptr_t ip, bool first, uint32_t *count)
{
    uintptr_t key = ip * 2 + first;
    size_t at;
    slot *s = find(c, key, &at);
    if (s) {
        *count = s->count;
        return s->index;
    }
    fbc_frame_info chain[FBC_MAX_INLINE];
    int n = name(ip, first, fbc_fc_full(e, ip), chain);
    uint32_t index = c->entries;
    for (int k = 0; k < n; k++) {
        char buf[8192];
        fbc_writer mem;
        fbc_w_init(&mem, -1, buf, sizeof buf);
        format_native(&mem, ip, &chain[k]);
        if (mem.failed || mem.len == sizeof buf) { /* an absurdly long name: keep the address */
            fbc_frame_info bare = {.module = -1};
            fbc_w_init(&mem, -1, buf, sizeof buf);
            format_native(&mem, ip, &bare);
        }
        append(c, buf, mem.len);
    }
    const char *outer = chain[n - 1].symbol;
    if (n == 1 && outer && !strcmp(outer, "_PyEval_EvalFrameDefault"))
        mark_eval(c, index);
    *count = (uint32_t)n;
    return remember(c, at, key, index, (uint32_t)n);
}

long fbc_fc_python(fbc_framecache *c, const fbc_pyframe *f)
{
    uintptr_t key = (uintptr_t)f | (uintptr_t)1 << 63;
    size_t at;
    slot *s = find(c, key, &at);
    if (s)
        return s->index;
    char buf[8192];
    fbc_writer mem;
    fbc_w_init(&mem, -1, buf, sizeof buf);
    fbc_w_str(&mem, "{" FBR_KEY(FBR_PYTHON) "true," FBR_KEY(FBR_SYMBOL));
    fbc_w_json(&mem, f->function);
    fbc_w_str(&mem, "," FBR_KEY(FBR_FILE));
    fbc_w_json(&mem, f->file);
    fbc_w_num(&mem, "," FBR_KEY(FBR_LINE), (uint64_t)(f->line > 0 ? f->line : 0));
    fbc_w_raw(&mem, "}", 1);
    if (mem.failed || mem.len == sizeof buf)
        return -1;
    uint32_t index = c->entries;
    append(c, buf, mem.len);
    return remember(c, at, key, index, 1);
}

const char *fbc_fc_text(fbc_framecache *c, size_t *len)
{
    if (c->failed)
        return NULL;
    if (!c->entries) {
        *len = 2;
        return "[]";
    }
    c->text[c->len] = ']'; /* append keeps room for it */
    *len = c->len + 1;
    return c->text;
}
