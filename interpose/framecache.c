/* framecache.c - the JSON text of each distinct frame of a dump, symbolized and formatted
 * once per dump. Ten thousand stacks of twenty frames hold only a few hundred distinct
 * frames; naming and formatting each one anew (hex, escaping a module path) was most of a
 * snapshot's time. */
#include <stdlib.h>
#include <string.h>

#include "shim.h"

typedef struct {
    uintptr_t ip;
    bool first, used;
    uint32_t len;
    char *text;
} slot;

struct fbc_framecache {
    slot *slots;
    size_t cap, n; /* cap a power of two, at most half full */
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
    for (size_t i = 0; i < c->cap; i++)
        free(c->slots[i].text);
    free(c->slots);
    free(c);
}

static void format_frame(fbc_writer *w, uintptr_t ip, const fbc_frame_info *fi)
{
    fbc_w_str(w, "{\"ip\":");
    fbc_w_hex(w, ip);
    if (fi->symbol) {
        fbc_w_str(w, ",\"symbol\":");
        fbc_w_json(w, fi->symbol);
    }
    if (fi->module >= 0) {
        fbc_w_str(w, ",\"module\":");
        fbc_w_json(w, fbc_modmap_at((size_t)fi->module)->path);
        fbc_w_str(w, ",\"offset\":");
        fbc_w_hex(w, fi->offset);
    }
    if (fi->file) {
        fbc_w_str(w, ",\"file\":");
        fbc_w_json(w, fi->file);
        if (fi->line > 0) {
            fbc_w_str(w, ",\"line\":");
            fbc_w_u64(w, (uint64_t)fi->line);
        }
    }
    fbc_w_raw(w, "}", 1);
}

static size_t slot_of(const fbc_framecache *c, uintptr_t ip, bool first)
{
    uint64_t h = ((uint64_t)ip * 2 + first) * 0x9e3779b97f4a7c15ull;
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
        size_t j = slot_of(c, old[i].ip, old[i].first);
        while (s[j].used)
            j = (j + 1) & (c->cap - 1);
        s[j] = old[i];
    }
    free(old);
    return true;
}

static void symbolize(uintptr_t ip, bool first, fbc_frame_info *fi)
{
    pthread_mutex_lock(&fbc_sym_lock);
    fbc_symbolize(ip, first, fi); /* its strings live as long as the process */
    pthread_mutex_unlock(&fbc_sym_lock);
}

void fbc_fc_write(fbc_framecache *c, fbc_writer *w, uintptr_t ip, bool first)
{
    fbc_frame_info fi;
    size_t i = c ? slot_of(c, ip, first) : 0;
    for (; c && c->slots[i].used; i = (i + 1) & (c->cap - 1))
        if (c->slots[i].ip == ip && c->slots[i].first == first) {
            fbc_w_raw(w, c->slots[i].text, c->slots[i].len);
            return;
        }
    symbolize(ip, first, &fi);
    /* First sight: format into memory (an unwritable fd marks an overflow as failed). */
    char buf[8192];
    fbc_writer mem;
    fbc_w_init(&mem, -1, buf, sizeof buf);
    format_frame(&mem, ip, &fi);
    char *text = !c || mem.failed || mem.len == sizeof buf ? NULL : malloc(mem.len);
    if (!text) {
        format_frame(w, ip, &fi); /* too long to keep, or out of memory: write it directly */
        return;
    }
    memcpy(text, buf, mem.len);
    fbc_w_raw(w, text, mem.len);
    if (c->n + 2 > c->cap) {
        free(text); /* a table that could not grow: keep a free slot so probes end */
        return;
    }
    c->slots[i] = (slot){ip, first, true, (uint32_t)mem.len, text};
    if (++c->n * 2 > c->cap)
        grow(c); /* on failure the table stays correct, only fuller */
}
