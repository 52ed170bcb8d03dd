/* modmap.c - the loaded modules (path, load base, span, build id), captured with
 * dl_iterate_phdr when a new stack is recorded and at every dump. Append-only with a published
 * count, so the crash handler can read it without locks or allocation. */
#include <elf.h>
#include <link.h>
#include <string.h>

#include "base.h"
#include "symbolizer.h" /* rules/: a build id as text */

#define MAX_MODULES 1024
#define ARENA (256 * 1024)

static fbc_module mods[MAX_MODULES];
static size_t nmods; /* published with release; entries below it never change */
static char arena[ARENA];
static size_t arena_used;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long seen_adds, seen_subs;
static unsigned generation;
static uintptr_t self_start, self_end;

static void build_id(const struct dl_phdr_info *info, char out[41])
{
    out[0] = '\0';
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            const char *name = p + sizeof *nh;
            const unsigned char *desc = (const unsigned char *)name + ((nh->n_namesz + 3) & ~3u);
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
                fbr_hex_bytes(out, desc, nh->n_descsz < 20 ? nh->n_descsz : 20);
                return;
            }
            p = (const char *)desc + ((nh->n_descsz + 3) & ~3u);
        }
    }
}

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    int *first = data;
    if (*first) {
        *first = 0;
        if (info->dlpi_adds == seen_adds && info->dlpi_subs == seen_subs && nmods)
            return 1; /* nothing loaded or unloaded since the last look */
        if (info->dlpi_subs != seen_subs && nmods) /* new code may sit where old code was */
            __atomic_add_fetch(&generation, 1, __ATOMIC_RELEASE);
        seen_adds = info->dlpi_adds;
        seen_subs = info->dlpi_subs;
    }
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
        lo = s < lo ? s : lo;
        hi = e > hi ? e : hi;
    }
    if (lo >= hi)
        return 0;
    const char *path = info->dlpi_name;
    bool file = true;
    if (!path || !*path) {
        path = fbc_process_exe()[0] ? fbc_proc.exe : "(main)";
    } else if (path[0] != '/') {
        file = strchr(path, '/') != NULL; /* "linux-vdso.so.1" has no file */
    }
    size_t n = __atomic_load_n(&nmods, __ATOMIC_RELAXED);
    for (size_t i = n; i-- > 0;)
        if (mods[i].base == info->dlpi_addr && mods[i].start == lo && !strcmp(mods[i].path, path))
            return 0;
    size_t len = strlen(path) + 1;
    if (n == MAX_MODULES || arena_used + len > ARENA)
        return 0;
    char *copy = arena + arena_used;
    memcpy(copy, path, len);
    arena_used += len;
    fbc_module *m = &mods[n];
    m->base = info->dlpi_addr;
    m->start = lo;
    m->end = hi;
    m->path = copy;
    m->file = file;
    build_id(info, m->build_id);
    __atomic_store_n(&nmods, n + 1, __ATOMIC_RELEASE);
    return 0;
}

void fbc_modmap_refresh(void)
{
    pthread_mutex_lock(&lock);
    int first = 1;
    dl_iterate_phdr(visit, &first);
    if (!self_start) {
        long i = fbc_modmap_find((uintptr_t)fbc_modmap_refresh);
        if (i >= 0) {
            self_start = mods[i].start;
            self_end = mods[i].end;
        }
    }
    pthread_mutex_unlock(&lock);
}

size_t fbc_modmap_count(void)
{
    return __atomic_load_n(&nmods, __ATOMIC_ACQUIRE);
}

const fbc_module *fbc_modmap_at(size_t i)
{
    return &mods[i];
}

long fbc_modmap_find(uintptr_t ip)
{
    /* Newest first: a module loaded where an unloaded one used to be wins. */
    for (size_t i = fbc_modmap_count(); i-- > 0;)
        if (ip >= mods[i].start && ip < mods[i].end)
            return (long)i;
    return -1;
}

unsigned fbc_modmap_generation(void)
{
    return __atomic_load_n(&generation, __ATOMIC_ACQUIRE);
}

void fbc_modmap_self(uintptr_t *start, uintptr_t *end)
{
    *start = self_start;
    *end = self_end;
}

/* fork: the child inherits the mappings, so the map stays; only the lock is taken around it,
 * and unlocked by both sides (1), or made anew in a child of a fork that ran no handlers (2). */
void fbc_modmap_fork(int phase)
{
    if (phase == 0)
        pthread_mutex_lock(&lock);
    else if (phase == 1)
        pthread_mutex_unlock(&lock);
    else
        pthread_mutex_init(&lock, NULL);
}
