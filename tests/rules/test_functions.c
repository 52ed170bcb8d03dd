/* The function table that names frames by symbol tables (rules/symbolizer.h), on the C
 * library, the shim's own table and a module tens of megabytes long: every function's start
 * and last byte are named as a plain search through the symbol table names them (the latest
 * start holding the address; among aliases the global name, then the longer extent). */
#include <criterion/criterion.h>
#include <elfutils/libdwfl.h>
#include <glob.h>
#include <gnu/lib-names.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer.h"

typedef struct {
    GElf_Addr start, end;
    const char *name;
    bool global;
} fn;

/* The answer by a search of every symbol: among the functions holding addr, the latest
 * start, then a global name, then the longer extent, then the first in the table. */
static const char *expected(const fn *f, size_t n, GElf_Addr addr)
{
    const fn *best = NULL;
    for (size_t i = 0; i < n; i++) {
        if (addr < f[i].start || addr >= f[i].end)
            continue;
        if (!best || f[i].start > best->start ||
            (f[i].start == best->start &&
             (f[i].global > best->global || (f[i].global == best->global && f[i].end > best->end))))
            best = &f[i];
    }
    return best ? best->name : NULL;
}

static int by_start(const void *a, const void *b)
{
    const fn *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

typedef struct {
    size_t functions, aliases, mixed, checked;
    GElf_Addr span;
} tally;

/* Checks every function of the module at path against expected(). */
static tally check_module(const char *path)
{
    tally t = {0};
    Dwfl *dwfl = dwfl_begin(fbr_debuginfo_callbacks(FBR_DEBUGINFO_BUILD_ID));
    char why[256];
    Dwfl_Module *m = fbr_report_module(dwfl, "m", path, -1, 0x10000000, NULL, why, sizeof why);
    cr_assert_not_null(m, "%s: %s", path, why);
    dwfl_report_end(dwfl, NULL, NULL);
    int nsym = dwfl_module_getsymtab(m);
    cr_assert_gt(nsym, 1, "%s: no symbol table", path);
    fn *f = calloc((size_t)nsym, sizeof *f);
    size_t n = 0;
    GElf_Addr lo = (GElf_Addr)-1, hi = 0;
    for (int j = 1; j < nsym; j++) {
        GElf_Sym sym;
        GElf_Addr addr;
        const char *name = dwfl_module_getsym_info(m, j, &sym, &addr, NULL, NULL, NULL);
        int type = GELF_ST_TYPE(sym.st_info);
        if (name && *name && sym.st_shndx != SHN_UNDEF && sym.st_size &&
            (type == STT_FUNC || type == STT_GNU_IFUNC)) {
            f[n++] = (fn){addr, addr + sym.st_size, name, GELF_ST_BIND(sym.st_info) != STB_LOCAL};
            lo = addr < lo ? addr : lo;
            hi = addr > hi ? addr : hi;
        }
    }
    t.functions = n;
    t.span = hi > lo ? hi - lo : 0;
    fn *by = malloc(n * sizeof *by); /* by start (qsort), for the aliases' count */
    memcpy(by, f, n * sizeof *by);
    qsort(by, n, sizeof *by, by_start);
    for (size_t i = 0; i < n; i++) {
        size_t k = i + 1;
        while (k < n && by[k].start == by[i].start)
            k++;
        for (size_t a = i; k - i > 1 && a < k; a++) {
            t.aliases++;
            t.mixed += by[a].global != by[i].global;
        }
        i = k - 1;
    }
    free(by);
    fbr_functions *table = NULL;
    /* Each probe searches every symbol: a few thousand functions probed, spread over all. */
    size_t step = n / 4000 + 1;
    for (size_t i = 0; i < n; i += step) {
        GElf_Addr probe[2] = {f[i].start, f[i].end - 1};
        for (int p = 0; p < 2; p++) {
            const char *want = expected(f, n, probe[p]),
                       *got = fbr_function_at(&table, m, probe[p]);
            cr_assert(got && want && !strcmp(got, want), "%s: %#lx (%s%s): %s, expected %s", path,
                      (unsigned long)probe[p], f[i].name, p ? ", its end" : "", got ? got : "none",
                      want ? want : "none");
            t.checked++;
        }
    }
    fbr_functions_free(table);
    free(f);
    dwfl_end(dwfl);
    cr_log_info("%s: %zu functions over %#lx bytes, %zu aliases (%zu local beside global), %zu "
                "addresses",
                path, t.functions, (unsigned long)t.span, t.aliases, t.mixed, t.checked);
    return t;
}

static int in_libc(struct dl_phdr_info *info, size_t size, void *out)
{
    (void)size;
    if (info->dlpi_name && strstr(info->dlpi_name, LIBC_SO)) {
        *(const char **)out = info->dlpi_name;
        return 1;
    }
    return 0;
}

/* The C library: thousands of exported functions, aliases among them. */
Test(functions, the_c_library)
{
    const char *path = NULL;
    dl_iterate_phdr(in_libc, &path);
    cr_assert_not_null(path, "no %s mapped", LIBC_SO);
    tally t = check_module(path);
    cr_assert_gt(t.functions, 1000);
    cr_assert_gt(t.aliases, 10, "the C library's table has no aliases to order");
}

/* The shim's own symbol table: its hidden local aliases start where its exported
 * definitions do, and the exported name is the one to give. */
Test(functions, local_aliases_beside_global_names)
{
    tally t = check_module(SHIM_LIB);
    cr_assert_gt(t.mixed, 4, "no local alias beside a global name in %s", SHIM_LIB);
}

/* A module whose functions span more than the first passes of the sort cover (4 MiB): the
 * LLVM that lavapipe runs on, a dependency of every build. */
Test(functions, a_module_spanning_tens_of_megabytes)
{
    glob_t g;
    cr_assert_eq(glob("/usr/lib/" MULTIARCH "/libLLVM-*.so.1", 0, NULL, &g), 0,
                 "no libLLVM (mesa-vulkan-drivers' dependency) in /usr/lib/" MULTIARCH);
    tally t = check_module(g.gl_pathv[0]);
    globfree(&g);
    cr_assert_gt(t.span, (GElf_Addr)1 << 24, "its functions span only %#lx bytes",
                 (unsigned long)t.span);
}
