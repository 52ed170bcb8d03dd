/* dynsym.c - what the loaded modules export, read from their dynamic symbol tables without
 * the dynamic loader's lookup (a failed dlsym walks every module and allocates its error):
 * - whether a module other than the shim defines a function, by the modules' own hash tables,
 *   a few hundred instructions a process: what decides at load and at exit whether a process
 *   can have a backend at all;
 * - the ops the process knows: every function a module exports under an op prefix.
 *   Attribution names an op by such a function, so these are the names an allow list can
 *   mean; a name that is none of them is a typo or another backend's op (rules/opname.h).
 *   Read only where a name is checked (the first FBCOUNT_ALLOW lookup). */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "early.h"

/* A module's dynamic symbol table, as its PT_DYNAMIC entries give it. */
typedef struct {
    const ElfW(Sym) * syms;
    const char *strs;
    size_t strsz, nsyms;
    const uint32_t *gnu, *sysv; /* its hash tables, either may be NULL */
} table;

typedef struct {
    const fbr_names *prefixes;
    const char **names;
    size_t n, cap;
    uintptr_t self;
} collect;

/* A dynamic entry's address: glibc has relocated most of them in place, the vdso's not. */
FBC_EARLY static uintptr_t at(uintptr_t base, ElfW(Addr) p)
{
    return p < base ? base + p : p;
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

/* A module's dynamic section, where dl_iterate_phdr describes it. */
FBC_EARLY static const ElfW(Dyn) * dynamic_of(const struct dl_phdr_info *info)
{
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            return (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    return NULL;
}

FBC_EARLY static bool read_table(uintptr_t base, const ElfW(Dyn) * dyn, table *t)
{
    *t = (table){0};
    for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB: t->syms = (const ElfW(Sym) *)at(base, dyn->d_un.d_ptr); break;
        case DT_STRTAB: t->strs = (const char *)at(base, dyn->d_un.d_ptr); break;
        case DT_STRSZ: t->strsz = dyn->d_un.d_val; break;
        case DT_HASH: t->sysv = (const uint32_t *)at(base, dyn->d_un.d_ptr); break;
        case DT_GNU_HASH: t->gnu = (const uint32_t *)at(base, dyn->d_un.d_ptr); break;
        }
    }
    /* A GNU table's count takes a walk over all its buckets: only a full listing needs it,
     * not a lookup (at every process's load and exit). */
    t->nsyms = t->sysv ? t->sysv[1] : 0;
    return t->syms && t->strs && (t->gnu || t->sysv);
}

/* A function the module defines and exports. */
FBC_EARLY static bool exported_function(const table *t, size_t i)
{
    const ElfW(Sym) *s = &t->syms[i];
    int type = ELF64_ST_TYPE(s->st_info), bind = ELF64_ST_BIND(s->st_info);
    return s->st_shndx != SHN_UNDEF && s->st_name < t->strsz &&
           (type == STT_FUNC || type == STT_GNU_IFUNC) && (bind == STB_GLOBAL || bind == STB_WEAK);
}

/* The GNU hash of a name (the dynamic loader's own function). */
FBC_EARLY static uint32_t gnu_hash(const char *name)
{
    uint32_t h = 5381;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = h * 33 + *p;
    return h;
}

/* The function name the module defines and exports, whose GNU hash is h, through its GNU
 * hash table (bloom filter, then one chain) or its System V one; NULL when it has none. */
FBC_EARLY static const ElfW(Sym) * defined(const table *t, const char *name, uint32_t h)
{
    if (t->gnu) {
        const uint32_t nbuckets = t->gnu[0], symoffset = t->gnu[1], nbloom = t->gnu[2],
                       shift = t->gnu[3];
        const ElfW(Addr) *bloom = (const ElfW(Addr) *)(t->gnu + 4);
        const unsigned bits = sizeof(ElfW(Addr)) * 8;
        ElfW(Addr) word = bloom[(h / bits) % nbloom];
        ElfW(Addr) mask = ((ElfW(Addr))1 << (h % bits)) | ((ElfW(Addr))1 << ((h >> shift) % bits));
        if (!nbuckets || (word & mask) != mask)
            return NULL;
        const uint32_t *buckets = (const uint32_t *)(bloom + nbloom), *chain = buckets + nbuckets;
        for (uint32_t i = buckets[h % nbuckets]; i >= symoffset; i++) {
            uint32_t ch = chain[i - symoffset];
            if ((ch | 1) == (h | 1) && exported_function(t, i) &&
                !strcmp(t->strs + t->syms[i].st_name, name))
                return &t->syms[i];
            if (ch & 1)
                break;
        }
        return NULL;
    }
    uint32_t sh = 0, nbucket = t->sysv[0]; /* the System V hash, made only for such a table */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        sh = (sh << 4) + *p;
        sh ^= (sh >> 24) & 0xf0;
    }
    sh &= 0x0fffffff;
    const uint32_t *bucket = t->sysv + 2, *chain = bucket + nbucket;
    for (uint32_t i = nbucket ? bucket[sh % nbucket] : 0; i && i < t->nsyms; i = chain[i])
        if (exported_function(t, i) && !strcmp(t->strs + t->syms[i].st_name, name))
            return &t->syms[i];
    return NULL;
}

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    collect *c = data;
    table t;
    if (info->dlpi_addr == c->self || !read_table(info->dlpi_addr, dynamic_of(info), &t))
        return 0;
    if (!t.sysv)
        t.nsyms = gnu_hash_count(t.gnu);
    for (size_t i = 0; i < t.nsyms; i++)
        if (exported_function(&t, i) && fbr_is_op(t.strs + t.syms[i].st_name, c->prefixes))
            add(c, t.strs + t.syms[i].st_name);
    return 0;
}

/* This library's load address: its first byte, a symbol the linker makes. */
static uintptr_t self_base(void)
{
    extern const ElfW(Ehdr) __ehdr_start;
    return (uintptr_t)&__ehdr_start;
}

typedef struct {
    const char *const *names;
    const uint32_t *hashes; /* the names' GNU hashes, made once for all the modules */
    size_t n;
    uintptr_t self;
    bool found;
    uint64_t gen; /* the modules' generation, from any module's description */
} find;

/* The loaded and unloaded modules' counts, in every module's description. */
FBC_EARLY static uint64_t generation_of(const struct dl_phdr_info *info, size_t size)
{
    return size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs
               ? info->dlpi_adds + info->dlpi_subs
               : 0;
}

FBC_EARLY static int visit_find(struct dl_phdr_info *info, size_t size, void *data)
{
    find *f = data;
    f->gen = generation_of(info, size);
    table t;
    if (info->dlpi_addr != f->self && read_table(info->dlpi_addr, dynamic_of(info), &t))
        for (size_t i = 0; i < f->n && !f->found; i++)
            f->found = defined(&t, f->names[i], f->hashes[i]) != NULL;
    return f->found;
}

FBC_EARLY bool fbc_defined_elsewhere(const char *const *names, size_t n, uint64_t *gen)
{
    uint32_t hashes[FBR_BACKENDS_MAX * FBR_EXITS_MAX];
    n = n < sizeof hashes / sizeof *hashes ? n : sizeof hashes / sizeof *hashes;
    for (size_t i = 0; i < n; i++)
        hashes[i] = gnu_hash(names[i]);
    find f = {names, hashes, n, self_base(), false, 0};
    dl_iterate_phdr(visit_find, &f);
    if (gen)
        *gen = f.gen;
    return f.found;
}

FBC_EARLY static int visit_count(struct dl_phdr_info *info, size_t size, void *data)
{
    *(uint64_t *)data = generation_of(info, size);
    return 1; /* the first module carries the counts */
}

FBC_EARLY uint64_t fbc_modules_generation(void)
{
    uint64_t gen = 0;
    dl_iterate_phdr(visit_count, &gen);
    return gen;
}

size_t fbc_opnames(const fbr_names *prefixes, const char ***out)
{
    collect c = {.prefixes = prefixes, .self = self_base()};
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

typedef struct {
    const char *name;
    uint32_t hash;
    uintptr_t self;
    bool past_self;     /* the modules after the shim's own are being visited */
    void *next, *first; /* the definition after the shim, and the first one anywhere */
} next_def;

static int visit_next(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    next_def *d = data;
    table t;
    if (info->dlpi_addr == d->self) {
        d->past_self = true;
        return 0;
    }
    const ElfW(Sym) *s =
        read_table(info->dlpi_addr, dynamic_of(info), &t) ? defined(&t, d->name, d->hash) : NULL;
    if (!s || ELF64_ST_TYPE(s->st_info) == STT_GNU_IFUNC)
        return 0; /* an ifunc's address is its resolver's */
    void *at = (void *)(info->dlpi_addr + s->st_value);
    if (!d->first)
        d->first = at;
    if (d->past_self)
        d->next = at;
    return d->next != NULL;
}

void *fbc_next_definition(const char *name)
{
    next_def d = {name, gnu_hash(name), self_base(), false, NULL, NULL};
    dl_iterate_phdr(visit_next, &d);
    return d.next ? d.next : d.first;
}

void *fbc_module_definition(const struct dl_phdr_info *info, const char *name)
{
    table t;
    const ElfW(Sym) *s = read_table(info->dlpi_addr, dynamic_of(info), &t)
                             ? defined(&t, name, gnu_hash(name))
                             : NULL;
    return s && ELF64_ST_TYPE(s->st_info) != STT_GNU_IFUNC ? (void *)(info->dlpi_addr + s->st_value)
                                                           : NULL;
}
