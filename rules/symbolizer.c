/* symbolizer.c - see symbolizer.h. */
#include "symbolizer.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "attrib.h"

static const char *const names[] = {
#define FBR_DEBUGINFO_NAME(id, name, find, what) name,
    FBR_DEBUGINFO_POLICIES(FBR_DEBUGINFO_NAME)
#undef FBR_DEBUGINFO_NAME
};

static const char *const whats[] = {
#define FBR_DEBUGINFO_WHAT(id, name, find, what) what,
    FBR_DEBUGINFO_POLICIES(FBR_DEBUGINFO_WHAT)
#undef FBR_DEBUGINFO_WHAT
};

const char *fbr_debuginfo_name(fbr_debuginfo policy)
{
    return policy < FBR_DEBUGINFO_COUNT ? names[policy] : NULL;
}

const char *fbr_debuginfo_what(fbr_debuginfo policy)
{
    return policy < FBR_DEBUGINFO_COUNT ? whats[policy] : NULL;
}

int fbr_debuginfo_parse(const char *name, fbr_debuginfo *out)
{
    for (int i = 0; name && i < FBR_DEBUGINFO_COUNT; i++)
        if (!strcmp(name, names[i])) {
            *out = (fbr_debuginfo)i;
            return 0;
        }
    return -1;
}

char *fbr_hex_bytes(char *out, const unsigned char *bytes, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t k = 0; k < n; k++) {
        *out++ = hex[bytes[k] >> 4];
        *out++ = hex[bytes[k] & 15];
    }
    *out = '\0';
    return out;
}

typedef struct {
    GElf_Addr start, end;
    const char *name;
    bool global;
} fn_range;

struct fbr_functions {
    fn_range *fn;
    size_t n;
};

/* The order of a table: by start; among aliases (one start) the global name first, as
 * libdwfl prefers it, then the longer extent. */
static bool before(const fn_range *x, const fn_range *y)
{
    if (x->start != y->start)
        return x->start < y->start;
    if (x->global != y->global)
        return x->global;
    return x->end > y->end;
}

/* Sorts f (n) by before(): a radix sort of the starts, 11 bits a pass over the span the
 * module's functions cover (stable), then each run of aliases put in order. qsort took 5.6 ms
 * of the 8 ms that libtorch_cpu's 23,487 functions cost a watched process at its exit (this
 * VM); the radix passes take 0.8 ms. tmp holds n entries. */
static void sort_functions(fn_range *f, fn_range *tmp, size_t n)
{
    GElf_Addr lo = (GElf_Addr)-1, hi = 0;
    for (size_t i = 0; i < n; i++) {
        lo = f[i].start < lo ? f[i].start : lo;
        hi = f[i].start > hi ? f[i].start : hi;
    }
    fn_range *from = f, *to = tmp;
    for (unsigned shift = 0; n > 1 && shift < 64 && (hi - lo) >> shift; shift += 11) {
        size_t count[2049] = {0};
        for (size_t i = 0; i < n; i++)
            count[((from[i].start - lo) >> shift & 2047) + 1]++;
        for (size_t d = 0; d < 2048; d++)
            count[d + 1] += count[d];
        for (size_t i = 0; i < n; i++)
            to[count[(from[i].start - lo) >> shift & 2047]++] = from[i];
        fn_range *t = from;
        from = to;
        to = t;
    }
    if (from != f)
        memcpy(f, from, n * sizeof *f);
    for (size_t i = 1; i < n; i++) /* aliases: a few entries at a time */
        for (size_t j = i; j > 0 && f[j].start == f[j - 1].start && before(&f[j], &f[j - 1]); j--) {
            fn_range t = f[j];
            f[j] = f[j - 1];
            f[j - 1] = t;
        }
}

static fbr_functions *functions_of(Dwfl_Module *m)
{
    fbr_functions *t = calloc(1, sizeof *t);
    int n = dwfl_module_getsymtab(m);
    fn_range *f = t && n > 0 ? calloc((size_t)n, sizeof *f) : NULL;
    size_t k = 0;
    for (int j = 1; f && j < n; j++) {
        GElf_Sym sym;
        GElf_Addr addr;
        const char *name = dwfl_module_getsym_info(m, j, &sym, &addr, NULL, NULL, NULL);
        int type = GELF_ST_TYPE(sym.st_info);
        /* The name is not read here: reading each one's first byte faulted in the whole
         * string table (libtorch_cpu's: megabytes of mangled names), most of this function's
         * time; an empty name is found where a lookup lands on it. */
        if (name && sym.st_shndx != SHN_UNDEF && (type == STT_FUNC || type == STT_GNU_IFUNC))
            f[k++] =
                (fn_range){addr, addr + sym.st_size, name, GELF_ST_BIND(sym.st_info) != STB_LOCAL};
    }
    fn_range *tmp = k > 1 ? malloc(k * sizeof *tmp) : NULL;
    if (tmp)
        sort_functions(f, tmp, k);
    else if (k > 1)
        k = 0; /* no memory to sort in: no table, every lookup unnamed */
    free(tmp);
    if (t)
        *t = (fbr_functions){f, k};
    return t;
}

const char *fbr_function_at(fbr_functions **fns, Dwfl_Module *mod, GElf_Addr addr)
{
    if (!*fns && !(*fns = functions_of(mod)))
        return NULL;
    const fn_range *f = (*fns)->fn;
    size_t lo = 0, hi = (*fns)->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* lo: the first starting after addr; the ones before it may hold addr (nested extents
     * are rare: a few steps back are enough). */
    for (size_t j = lo, steps = 0; j-- > 0 && steps < 8; steps++)
        if (addr < f[j].end || (f[j].end == f[j].start && j + 1 == lo)) {
            /* Aliases start together, the best first (before): the first of the run, where
             * it holds addr. Folded functions leave sized and zero-sized aliases at one start;
             * a walk back that stopped at the first zero-sized one named a folded function. */
            size_t first = j;
            while (first > 0 && f[first - 1].start == f[j].start)
                first--;
            const char *name = addr < f[first].end ? f[first].name : f[j].name;
            return *name ? name : NULL;
        }
    return NULL;
}

void fbr_functions_free(fbr_functions *fns)
{
    if (fns)
        free(fns->fn);
    free(fns);
}

Dwfl_Module *fbr_report_module(Dwfl *dwfl, const char *name, const char *path, int fd,
                               GElf_Addr base, const char *build_id, char *why, size_t cap)
{
    Dwfl_Module *mod = dwfl_report_elf(dwfl, name, path, fd, base, false);
    if (!mod) {
        snprintf(why, cap, "cannot open: %s", dwfl_errmsg(-1));
        return NULL;
    }
    const unsigned char *bits;
    GElf_Addr vaddr;
    int len = dwfl_module_build_id(mod, &bits, &vaddr);
    size_t want = build_id ? strlen(build_id) : 0;
    if (want && len > 0 && len < 128) {
        char id[257];
        fbr_hex_bytes(id, bits, (size_t)len);
        /* the module map keeps the first 20 bytes of a longer id */
        if (want > 2 * (size_t)len || strncasecmp(id, build_id, want)) {
            snprintf(why, cap,
                     "build id %s differs from the recorded %s: the file changed "
                     "since the process loaded it",
                     id, build_id);
            return NULL;
        }
    }
    return mod;
}

/* Separate debug information from the local build-id tree only, and none for the system's
 * runtime. elfutils' standard lookup loads libdebuginfod and initializes curl and a TLS
 * library inside the process that calls it - in a watched program at exit, after its own
 * atexit handlers have torn OpenSSL down, that crashed - and may reach the network: the shim
 * must do neither. The system's runtime is named by its own symbol tables: its debug
 * information (glibc's libc6-dbg: compressed, megabytes) would cost a process more than its
 * whole census, for frames no view names as the user's. */
static int build_id_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                              Dwarf_Addr base, const char *file_name, const char *debuglink_file,
                              GElf_Word debuglink_crc, char **debuginfo_file_name)
{
    (void)userdata, (void)modname, (void)base, (void)debuglink_file;
    (void)debuglink_crc;
    if (fbr_module_is_system(file_name))
        return -1;
    const unsigned char *id;
    GElf_Addr vaddr;
    int n = dwfl_module_build_id(mod, &id, &vaddr);
    if (n < 2)
        return -1;
    /* .build-id/xx/yyyy...debug: the first byte names the folder. */
    char path[64 + 2 * 255] = "/usr/lib/debug/.build-id/";
    char *end = fbr_hex_bytes(path + strlen(path), id, 1);
    *end++ = '/';
    end = fbr_hex_bytes(end, id + 1, (size_t)n - 1);
    snprintf(end, sizeof path - (size_t)(end - path), ".debug");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0)
        *debuginfo_file_name = strdup(path);
    return fd;
}

/* Module files are found by their build ids and read at the bases they are reported at;
 * the policies differ in their separate debug information only. */
static const Dwfl_Callbacks callbacks[] = {
#define FBR_DEBUGINFO_CALLBACKS(id, name, find, what)                                              \
    {.find_elf = dwfl_build_id_find_elf,                                                           \
     .find_debuginfo = find,                                                                       \
     .section_address = dwfl_offline_section_address},
    FBR_DEBUGINFO_POLICIES(FBR_DEBUGINFO_CALLBACKS)
#undef FBR_DEBUGINFO_CALLBACKS
};

const Dwfl_Callbacks *fbr_debuginfo_callbacks(fbr_debuginfo policy)
{
    return policy < FBR_DEBUGINFO_COUNT ? &callbacks[policy] : NULL;
}
