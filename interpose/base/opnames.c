/* opnames.c - the ops this process knows: every function a loaded module exports under an op
 * prefix, read from the modules' dynamic symbol tables. Attribution names an op by such a
 * function, so these are the names an allow list can mean; a name that is none of them is
 * a typo or another backend's op (rules/opname.h). Only read where a name is checked (the
 * first FBCOUNT_ALLOW lookup), never at load or on the counting path. */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

typedef struct {
    const fbr_names *prefixes;
    const char **names;
    size_t n, cap;
    uintptr_t self;
} collect;

/* A dynamic entry's address: glibc has relocated most of them in place, the vdso's not. */
static uintptr_t at(const struct dl_phdr_info *info, ElfW(Addr) p)
{
    return p < info->dlpi_addr ? info->dlpi_addr + p : p;
}

/* The number of symbols a GNU hash table covers: past the last chain of its last bucket. */
static size_t gnu_hash_count(const uint32_t *h)
{
    uint32_t nbuckets = h[0], symoffset = h[1], bloom = h[2];
    const uint32_t *buckets = h + 4 + bloom * (sizeof(ElfW(Addr)) / 4);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t last = 0;
    for (uint32_t i = 0; i < nbuckets; i++)
        if (buckets[i] > last)
            last = buckets[i];
    if (last < symoffset)
        return symoffset;
    while (!(chain[last - symoffset] & 1))
        last++;
    return last + 1;
}

static void add(collect *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->names[i], name))
            return;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        const char **g = realloc(c->names, cap * sizeof *g);
        if (!g)
            return;
        c->names = g;
        c->cap = cap;
    }
    char *copy = strdup(name);
    if (copy)
        c->names[c->n++] = copy;
}

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    collect *c = data;
    if (info->dlpi_addr == c->self)
        return 0;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    const ElfW(Sym) *syms = NULL;
    const char *strs = NULL;
    size_t nsyms = 0, strsz = 0;
    for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB: syms = (const ElfW(Sym) *)at(info, dyn->d_un.d_ptr); break;
        case DT_STRTAB: strs = (const char *)at(info, dyn->d_un.d_ptr); break;
        case DT_STRSZ: strsz = dyn->d_un.d_val; break;
        case DT_HASH: nsyms = ((const uint32_t *)at(info, dyn->d_un.d_ptr))[1]; break;
        case DT_GNU_HASH:
            if (!nsyms)
                nsyms = gnu_hash_count((const uint32_t *)at(info, dyn->d_un.d_ptr));
            break;
        }
    }
    for (size_t i = 0; syms && strs && i < nsyms; i++) {
        const ElfW(Sym) *s = &syms[i];
        int type = ELF64_ST_TYPE(s->st_info), bind = ELF64_ST_BIND(s->st_info);
        if (s->st_shndx == SHN_UNDEF || s->st_name >= strsz || (type != STT_FUNC && type != STT_GNU_IFUNC) ||
            (bind != STB_GLOBAL && bind != STB_WEAK))
            continue;
        const char *name = strs + s->st_name;
        if (fbr_is_op(name, c->prefixes))
            add(c, name);
    }
    return 0;
}

size_t fbc_opnames(const fbr_names *prefixes, const char ***out)
{
    collect c = {.prefixes = prefixes};
    Dl_info di;
    if (dladdr((void *)fbc_opnames, &di))
        c.self = (uintptr_t)di.dli_fbase;
    dl_iterate_phdr(visit, &c);
    *out = c.names;
    return c.n;
}

void fbc_opnames_free(const char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free((void *)names[i]);
    free(names);
}
