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

#include "attrib.h"
#include "redirect.h"

#define MAX_ENTRIES 8192
#define MAX_SCANNED 2048

typedef struct {
    uintptr_t *slot;
    uintptr_t original;
    uintptr_t to;   /* the value written: undo restores only an entry that still holds it */
    uintptr_t base; /* the module's load base */
    const char *symbol;
    char name[64]; /* the module's base name: another module may later sit at its base */
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

static bool was_scanned(uintptr_t base, const char *name)
{
    for (size_t i = 0; i < nscanned; i++)
        if (scanned[i].base == base && !strncmp(scanned[i].name, fbr_base_name(name), 63))
            return true;
    return false;
}

static const char *module_name(const struct dl_phdr_info *info)
{
    return info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "(main)";
}

/* The pages the loader made read-only after relocating (PT_GNU_RELRO), as it rounds them:
 * the start down and the end down too, the last partial page staying writable (it holds
 * .got.plt or .data). Writing PROT_READ back on that page would break the module. */
static void relro_of(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    *lo = *hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_GNU_RELRO)
            continue;
        *lo = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
        *hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz) & ~(page - 1);
    }
}

/* The addresses the module's loadable segments span: a lazily bound entry points in there. */
static void span_of(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi)
{
    *lo = UINTPTR_MAX;
    *hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        *lo = a < *lo ? a : *lo;
        *hi = a + ph->p_memsz > *hi ? a + ph->p_memsz : *hi;
    }
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
    uintptr_t lo, hi;  /* the module being scanned */
    const char *mname; /* its name as dl_iterate_phdr gives it ("(main)": the program) */
} scan_ctx;

static const fbc_redirection *wanted(const scan_ctx *c, const char *name, const char *module)
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->r[i].symbol, name) &&
            (!c->r[i].only || fbr_glob(c->r[i].only, fbr_base_name(module))))
            return &c->r[i];
    return NULL;
}

static void relocs(scan_ctx *c, struct dl_phdr_info *info, const ElfW(Rela) * rel, size_t size,
                   const ElfW(Sym) * symtab, const char *strtab, uintptr_t relro_lo,
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
        if (!w)
            continue;
        if (nentries == MAX_ENTRIES) {
            static int warned;
            if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
                fbc_warn("more than %d entries to redirect: calls through the others (%.200s "
                         "first) go straight to their definition, uncounted",
                         MAX_ENTRIES, strtab + symtab[si].st_name);
            continue;
        }
        uintptr_t *slot = (uintptr_t *)(base + rel[i].r_offset);
        uintptr_t was = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
        /* R_X86_64_64 may carry an addend: a pointer into the function, not to it. */
        if (type == R_X86_64_64 && rel[i].r_addend)
            continue;
        /* Not bound yet: a jump slot still pointing into the module's own PLT (not at a
         * definition of its own). Bound elsewhere (another library's function of the same
         * name, or the module's own): not this redirection's. */
        const ElfW(Sym) *sym = &symtab[si];
        bool own = sym->st_shndx != SHN_UNDEF && was == base + sym->st_value;
        bool lazy = type == R_X86_64_JUMP_SLOT && was >= c->lo && was < c->hi && !own;
        if (w->def && !lazy && was != (uintptr_t)w->def && was != (uintptr_t)w->to)
            continue;
        if (was == (uintptr_t)w->to || !store(slot, (uintptr_t)w->to, relro_lo, relro_hi))
            continue;
        entry *e = &entries[nentries];
        *e = (entry){slot, was, (uintptr_t)w->to, base, w->symbol, ""};
        snprintf(e->name, sizeof e->name, "%s", fbr_base_name(c->mname));
        __atomic_store_n(&nentries, nentries + 1, __ATOMIC_RELEASE);
        c->written++;
    }
}

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    scan_ctx *c = data;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    c->mname = module_name(info);
    if (info->dlpi_addr == c->self || was_scanned(info->dlpi_addr, c->mname))
        return 0;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    uintptr_t relro_lo, relro_hi;
    relro_of(info, &relro_lo, &relro_hi);
    span_of(info, &c->lo, &c->hi);
    if (nscanned < MAX_SCANNED) {
        scanned[nscanned].base = info->dlpi_addr;
        snprintf(scanned[nscanned].name, sizeof scanned[nscanned].name, "%s",
                 fbr_base_name(c->mname));
        nscanned++;
    } else {
        static int warned;
        if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
            fbc_warn("more than %d modules loaded: those past it are looked into again at every "
                     "load (slower, nothing lost)",
                     MAX_SCANNED);
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
    const char *path = name[0] ? name : fbc_process_exe();
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

/* Whether the module an entry was written in is still loaded where it was. */
static int find_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const entry *e = data;
    return info->dlpi_addr == e->base && !strcmp(fbr_base_name(module_name(info)), e->name);
}

static bool still_loaded(const entry *e)
{
    return dl_iterate_phdr(find_module, (void *)e) != 0;
}

/* Forgets the entries of modules unloaded since they were written (their memory is gone, or
 * another module's). */
static void prune(void)
{
    size_t k = 0;
    for (size_t i = 0; i < nentries; i++)
        if (still_loaded(&entries[i]))
            entries[k++] = entries[i];
    __atomic_store_n(&nentries, k, __ATOMIC_RELEASE);
}

/* The shim's own load base, found once outside the lock (dladdr takes the loader's lock, which
 * a thread in dlopen holds while a constructor of its may call into a redirected entry). */
static uintptr_t self_base(void)
{
    static uintptr_t self;
    uintptr_t s = __atomic_load_n(&self, __ATOMIC_RELAXED);
    Dl_info me;
    if (!s && dladdr((void *)self_base, &me))
        __atomic_store_n(&self, s = (uintptr_t)me.dli_fbase, __ATOMIC_RELAXED);
    return s;
}

int fbc_redirect_scan(const fbc_redirection *r, size_t n)
{
#if !defined(__x86_64__)
    (void)r, (void)n;
    return -1;
#else
    uintptr_t self = self_base();
    pthread_mutex_lock(&lock);
    unsigned long long v[2] = {0, 0};
    dl_iterate_phdr(counters, v);
    if (v[1] != seen_subs) {
        nscanned = 0; /* a module went away: another may sit at its base */
        prune();
    }
    scan_ctx c = {r, n, self, 0, 0, 0, NULL};
    dl_iterate_phdr(visit, &c);
    __atomic_store_n(&seen_adds, v[0], __ATOMIC_RELAXED);
    __atomic_store_n(&seen_subs, v[1], __ATOMIC_RELAXED);
    pthread_mutex_unlock(&lock);
    return c.written;
#endif
}

void fbc_redirect_forget(void)
{
    pthread_mutex_lock(&lock);
    nscanned = 0;
    __atomic_store_n(&seen_adds, ~0ull, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&lock);
}

/* Puts an entry back where its module is still the one it was written in and the entry
 * still holds the value written (a module reloaded at the same base has its own). */
static int restore_visit(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const entry *e = data;
    if (info->dlpi_addr != e->base || strcmp(fbr_base_name(module_name(info)), e->name))
        return 0;
    uintptr_t lo, hi;
    relro_of(info, &lo, &hi);
    if (__atomic_load_n(e->slot, __ATOMIC_ACQUIRE) == e->to)
        store(e->slot, e->original, lo, hi);
    return 1;
}

void fbc_redirect_undo(void)
{
    pthread_mutex_lock(&lock);
    for (size_t i = nentries; i-- > 0;)
        dl_iterate_phdr(restore_visit, &entries[i]); /* a module unloaded since is passed by */
    __atomic_store_n(&nentries, 0, __ATOMIC_RELEASE);
    nscanned = 0;
    __atomic_store_n(&seen_adds, ~0ull, __ATOMIC_RELAXED);
    __atomic_store_n(&seen_subs, ~0ull, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&lock);
}

void fbc_redirect_fork(int phase)
{
    fbc_mutex_fork(&lock, phase);
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
