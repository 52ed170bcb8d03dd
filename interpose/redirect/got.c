/* got.c - see redirect.h. Reads each module's dynamic section as the loader left it in memory
 * (the relocations, the dynamic symbol table and its strings), finds the entries whose
 * relocation names a redirected symbol, and stores the new target there. */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "redirect.h"

#define MAX_ENTRIES 8192
#define MAX_SCANNED 2048

typedef struct {
    uintptr_t *slot;
    uintptr_t original;
    uintptr_t base; /* the module's load base */
    const char *symbol;
} entry;

static entry entries[MAX_ENTRIES];
static size_t nentries;
static struct {
    uintptr_t base;
    char name[64]; /* the last part of its path: a module unloaded and another loaded at its
                    * base must be scanned anew */
} scanned[MAX_SCANNED];
static size_t nscanned;
static unsigned long long seen_adds = ~0ull, seen_subs = ~0ull;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static bool was_scanned(uintptr_t base, const char *name)
{
    for (size_t i = 0; i < nscanned; i++)
        if (scanned[i].base == base && !strncmp(scanned[i].name, base_name(name), 63))
            return true;
    return false;
}

/* The loader rewrites most address entries of the dynamic section to absolute addresses; the
 * vdso's and some architectures' stay relative. */
static uintptr_t dyn_ptr(uintptr_t base, ElfW(Addr) p)
{
    return p < base ? base + p : p;
}

/* Stores v into slot, making a read-only (RELRO) page writable for the store alone. */
static bool store(uintptr_t *slot, uintptr_t v, uintptr_t relro_lo, uintptr_t relro_hi)
{
    uintptr_t a = (uintptr_t)slot;
    if (a < relro_lo || a >= relro_hi) {
        __atomic_store_n(slot, v, __ATOMIC_RELEASE);
        return true;
    }
    long page = sysconf(_SC_PAGESIZE);
    void *p = (void *)(a & ~((uintptr_t)page - 1));
    if (mprotect(p, (size_t)page, PROT_READ | PROT_WRITE) != 0)
        return false;
    __atomic_store_n(slot, v, __ATOMIC_RELEASE);
    mprotect(p, (size_t)page, PROT_READ);
    return true;
}

typedef struct {
    const fbc_redirection *r;
    size_t n;
    uintptr_t self;
    int written;
} scan_ctx;

static const fbc_redirection *wanted(const scan_ctx *c, const char *name, const char *module)
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->r[i].symbol, name) &&
            (!c->r[i].only || fbr_glob(c->r[i].only, base_name(module))))
            return &c->r[i];
    return NULL;
}

static void relocs(scan_ctx *c, struct dl_phdr_info *info, const ElfW(Rela) *rel, size_t size,
                   const ElfW(Sym) *symtab, const char *strtab, uintptr_t relro_lo,
                   uintptr_t relro_hi)
{
    uintptr_t base = info->dlpi_addr;
    for (size_t i = 0; rel && i < size / sizeof *rel; i++) {
        unsigned type = (unsigned)ELF64_R_TYPE(rel[i].r_info);
        if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT && type != R_X86_64_64)
            continue;
        size_t si = ELF64_R_SYM(rel[i].r_info);
        if (!si)
            continue;
        const fbc_redirection *w = wanted(c, strtab + symtab[si].st_name, info->dlpi_name);
        if (!w || nentries == MAX_ENTRIES)
            continue;
        uintptr_t *slot = (uintptr_t *)(base + rel[i].r_offset);
        uintptr_t was = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
        /* R_X86_64_64 may carry an addend: a pointer into the function, not to it. */
        if (type == R_X86_64_64 && rel[i].r_addend)
            continue;
        if (was == (uintptr_t)w->to || !store(slot, (uintptr_t)w->to, relro_lo, relro_hi))
            continue;
        entries[nentries++] = (entry){slot, was, base, w->symbol};
        c->written++;
    }
}

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    scan_ctx *c = data;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    if (info->dlpi_addr == c->self || was_scanned(info->dlpi_addr, name[0] ? name : "(main)"))
        return 0;
    const ElfW(Dyn) *dyn = NULL;
    uintptr_t relro_lo = 0, relro_hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
        if (ph->p_type == PT_GNU_RELRO) {
            long page = sysconf(_SC_PAGESIZE);
            relro_lo = (info->dlpi_addr + ph->p_vaddr) & ~((uintptr_t)page - 1);
            relro_hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + (uintptr_t)page - 1) &
                       ~((uintptr_t)page - 1);
        }
    }
    if (nscanned < MAX_SCANNED) {
        scanned[nscanned].base = info->dlpi_addr;
        snprintf(scanned[nscanned].name, sizeof scanned[nscanned].name, "%s",
                 base_name(name[0] ? name : "(main)"));
        nscanned++;
    }
    /* The vdso has no file and nothing to redirect; a module without a dynamic section has
     * no imports. */
    if (!dyn || (name[0] && name[0] != '/' && !strchr(name, '/') && strstr(name, "vdso")))
        return 0;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const ElfW(Rela) *jmprel = NULL, *rela = NULL;
    size_t pltrelsz = 0, relasz = 0;
    bool is_rela = true;
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB: symtab = (const ElfW(Sym) *)dyn_ptr(info->dlpi_addr, d->d_un.d_ptr); break;
        case DT_STRTAB: strtab = (const char *)dyn_ptr(info->dlpi_addr, d->d_un.d_ptr); break;
        case DT_JMPREL: jmprel = (const ElfW(Rela) *)dyn_ptr(info->dlpi_addr, d->d_un.d_ptr); break;
        case DT_PLTRELSZ: pltrelsz = d->d_un.d_val; break;
        case DT_PLTREL: is_rela = d->d_un.d_val == DT_RELA; break;
        case DT_RELA: rela = (const ElfW(Rela) *)dyn_ptr(info->dlpi_addr, d->d_un.d_ptr); break;
        case DT_RELASZ: relasz = d->d_un.d_val; break;
        default: break;
        }
    }
    if (!symtab || !strtab || !is_rela)
        return 0;
    const char *path = name[0] ? name : fbc_proc.exe;
    struct dl_phdr_info named = *info;
    named.dlpi_name = path;
    relocs(c, &named, jmprel, pltrelsz, symtab, strtab, relro_lo, relro_hi);
    relocs(c, &named, rela, relasz, symtab, strtab, relro_lo, relro_hi);
    return 0;
}

static int counters(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    unsigned long long *v = data;
    v[0] = info->dlpi_adds;
    v[1] = info->dlpi_subs;
    return 1;
}

bool fbc_redirect_stale(void)
{
    unsigned long long v[2] = {0, 0};
    dl_iterate_phdr(counters, v);
    return v[0] != __atomic_load_n(&seen_adds, __ATOMIC_RELAXED) ||
           v[1] != __atomic_load_n(&seen_subs, __ATOMIC_RELAXED);
}

int fbc_redirect_scan(const fbc_redirection *r, size_t n)
{
#if !defined(__x86_64__)
    (void)r, (void)n;
    return -1;
#else
    Dl_info me;
    pthread_mutex_lock(&lock);
    unsigned long long v[2] = {0, 0};
    dl_iterate_phdr(counters, v);
    if (v[1] != seen_subs)
        nscanned = 0; /* a module went away: another may sit at its base */
    scan_ctx c = {r, n, dladdr((void *)fbc_redirect_scan, &me) ? (uintptr_t)me.dli_fbase : 0, 0};
    dl_iterate_phdr(visit, &c);
    __atomic_store_n(&seen_adds, v[0], __ATOMIC_RELAXED);
    __atomic_store_n(&seen_subs, v[1], __ATOMIC_RELAXED);
    pthread_mutex_unlock(&lock);
    return c.written;
#endif
}

/* The page protection of an entry: writable unless it lies in its module's RELRO. */
static int restore_visit(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    entry *e = data;
    if (info->dlpi_addr != e->base)
        return 0;
    uintptr_t lo = 0, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_GNU_RELRO)
            continue;
        long page = sysconf(_SC_PAGESIZE);
        lo = (info->dlpi_addr + ph->p_vaddr) & ~((uintptr_t)page - 1);
        hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    }
    store(e->slot, e->original, lo, hi);
    return 1;
}

void fbc_redirect_undo(void)
{
    pthread_mutex_lock(&lock);
    for (size_t i = nentries; i-- > 0;)
        dl_iterate_phdr(restore_visit, &entries[i]); /* a module unloaded since is passed by */
    nentries = 0;
    nscanned = 0;
    seen_adds = seen_subs = ~0ull;
    pthread_mutex_unlock(&lock);
}

size_t fbc_redirect_count(void)
{
    return __atomic_load_n(&nentries, __ATOMIC_RELAXED);
}

void *fbc_redirect_original(uintptr_t base, const char *symbol)
{
    void *o = NULL;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nentries && !o; i++)
        if (entries[i].base == base && !strcmp(entries[i].symbol, symbol))
            o = (void *)entries[i].original;
    pthread_mutex_unlock(&lock);
    return o;
}
