/* symbolize.c - function, file and line for an address (elfutils libdwfl, reading the module
 * files at their load bases), and the attribution of a stack to an op and a site. Only dumps
 * and the warn/abort modes come here, never the counting path or a signal handler. */
#include <elfutils/libdwfl.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

pthread_mutex_t fbc_sym_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct {
    uintptr_t key; /* ip * 2 + first: the first frame is looked up as is, the others at ip - 1 */
    fbc_frame_info info;
    bool lines;    /* file:line looked up (sites only: a line table can take 0.4 s to load) */
    UT_hash_handle hh;
} cached;

typedef struct {
    UT_hash_handle hh;
    char s[];
} interned;

static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

static Dwfl *dwfl;
static Dwfl_Module *dmods[1024];
static unsigned char reported[1024];
static cached *cache;
static interned *strings;

static const char *intern(const char *s)
{
    if (!s)
        return NULL;
    interned *e;
    size_t len = strlen(s);
    HASH_FIND(hh, strings, s, len, e);
    if (e)
        return e->s;
    e = malloc(sizeof *e + len + 1);
    if (!e)
        return NULL;
    memcpy(e->s, s, len + 1);
    HASH_ADD_KEYPTR(hh, strings, e->s, len, e);
    return e->s;
}

static Dwfl_Module *module(long i)
{
    if (i < 0 || i >= 1024)
        return NULL;
    if (reported[i])
        return dmods[i];
    reported[i] = 1;
    const fbc_module *m = fbc_modmap_at((size_t)i);
    if (!m->file)
        return NULL;
    if (!dwfl && !(dwfl = dwfl_begin(&callbacks)))
        return NULL;
    const char *base = strrchr(m->path, '/');
    dwfl_report_begin_add(dwfl);
    dmods[i] = dwfl_report_elf(dwfl, base ? base + 1 : m->path, m->path, -1, m->base, false);
    dwfl_report_end(dwfl, NULL, NULL);
    return dmods[i];
}

static cached *lookup(uintptr_t ip, bool first, fbc_frame_info *out)
{
    uintptr_t key = ip * 2 + first;
    cached *c;
    HASH_FIND(hh, cache, &key, sizeof key, c);
    if (c) {
        *out = c->info;
        return c;
    }
    memset(out, 0, sizeof *out);
    out->module = fbc_modmap_find(ip);
    out->offset = out->module >= 0 ? ip - fbc_modmap_at((size_t)out->module)->base : ip;
    Dwfl_Module *m = module(out->module);
    if (m) {
        Dwarf_Addr addr = first ? ip : ip - 1;
        GElf_Off off;
        GElf_Sym sym;
        out->symbol = intern(dwfl_module_addrinfo(m, addr, &off, &sym, NULL, NULL, NULL));
    }
    c = malloc(sizeof *c);
    if (c) {
        c->key = key;
        c->info = *out;
        c->lines = false;
        HASH_ADD(hh, cache, key, sizeof key, c);
    }
    return c;
}

void fbc_symbolize(uintptr_t ip, bool first, fbc_frame_info *out)
{
    lookup(ip, first, out);
}

/* Adds file:line to a frame already symbolized. */
static void add_line(uintptr_t ip, bool first, fbc_frame_info *out)
{
    cached *c = lookup(ip, first, out);
    if (c && c->lines) {
        *out = c->info;
        return;
    }
    Dwfl_Module *m = module(out->module);
    if (m) {
        Dwfl_Line *line = dwfl_module_getsrc(m, first ? ip : ip - 1);
        int lineno = 0;
        const char *src = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
        if (src) {
            out->file = intern(src);
            out->line = lineno;
        }
    }
    if (c) {
        c->info = *out;
        c->lines = true;
    }
}

static const char *unnamed(const fbc_frame_info *f)
{
    if (f->symbol)
        return f->symbol;
    if (f->module < 0)
        return "(unknown)";
    const char *path = fbc_modmap_at((size_t)f->module)->path, *slash = strrchr(path, '/');
    char buf[512];
    snprintf(buf, sizeof buf, "%s+0x%lx", slash ? slash + 1 : path, (unsigned long)f->offset);
    const char *s = intern(buf);
    return s ? s : "(unknown)";
}

unsigned fbc_attribute(const uintptr_t *frames, unsigned n, fbc_frame_info *infos, fbc_attrib *out)
{
    /* Frames are named only as far as the op and its site need: a stack's outer frames
     * cost lookups (ten thousand stacks, a snapshot) and say nothing about attribution. */
    unsigned named = 0, op = n;
    memset(out, 0, sizeof *out);
    out->op = out->site = "(unknown)";
    for (unsigned i = 0; i < n && op == n; i++, named++) {
        fbc_symbolize(frames[i], i == 0, &infos[i]);
        if (fbc_has_prefix(infos[i].symbol))
            op = i;
    }
    if (n == 0)
        return 0;
    if (op < n)
        out->op = infos[op].symbol;
    /* Without an op, the site is the first caller outside the module that called host_result. */
    unsigned from = op < n ? op : 0;
    for (unsigned j = from + 1; j < n; j++) {
        if (j >= named) {
            fbc_symbolize(frames[j], false, &infos[j]);
            named = j + 1;
        }
        if (infos[j].module != infos[from].module) {
            add_line(frames[j], false, &infos[j]);
            out->site = unnamed(&infos[j]);
            out->site_file = infos[j].file;
            out->site_line = infos[j].line;
            out->site_module = infos[j].module >= 0 ? fbc_modmap_at((size_t)infos[j].module)->path
                                                    : NULL;
            break;
        }
    }
    return named;
}

void fbc_sym_reset(void)
{
    cached *c, *ct;
    HASH_ITER(hh, cache, c, ct) {
        HASH_DEL(cache, c);
        free(c);
    }
    interned *s, *st;
    HASH_ITER(hh, strings, s, st) {
        HASH_DEL(strings, s);
        free(s);
    }
    if (dwfl)
        dwfl_end(dwfl);
    dwfl = NULL;
    memset(reported, 0, sizeof reported);
}
