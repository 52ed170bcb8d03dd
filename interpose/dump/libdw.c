/* libdw.c - elfutils' libdw, loaded when the first address is named rather than with the
 * shim. Linked in, libdw and what it pulls in (libelf, zlib, bzip2, lzma, and its own
 * constructor) were loaded into every process the shim is preloaded into, at every exec
 * under `fbcount run`, while most of them never name an address. The libdw functions that
 * symbolize.c and rules/dwname.c call are defined here under their own names, hidden (the
 * program's own libdw, if it has one, is untouched), each forwarding to libdw's; the table
 * below lists them once: a new call needs its row. Where libdw cannot be loaded, each
 * returns its failure value, one warning says so, and dumps hold unsymbolized frames
 * (module + offset) that `fbcount symbolize` names later. Never called from a signal
 * handler (dump.h). */
#include <dlfcn.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <string.h>

#include "dump.h"

/* libdw's soname; FBC_LIBDW_DIR, where the build found it, is tried when the loader's search
 * does not find it (an elfutils installed under a prefix of its own). */
#define LIBDW_SONAME "libdw.so.1"

#define HIDDEN __attribute__((visibility("hidden")))

/* return type, name, parameters, arguments, value when libdw is missing */
/* clang-format 14 reads these parameter lists as products (Dwfl * a): kept as written. */
// clang-format off
#define LIBDW_FUNCTIONS(X)                                                                      \
    X(Dwfl *, dwfl_begin, (const Dwfl_Callbacks *a), (a), NULL)                                \
    X(Dwfl_Module *, dwfl_report_elf,                                                           \
      (Dwfl *a, const char *b, const char *c, int d, GElf_Addr e, bool f), (a, b, c, d, e, f),  \
      NULL)                                                                                     \
    X(int, dwfl_report_end,                                                                     \
      (Dwfl *a, int (*b)(Dwfl_Module *, void *, const char *, Dwarf_Addr, void *), void *c),    \
      (a, b, c), -1)                                                                            \
    X(int, dwfl_module_getsymtab, (Dwfl_Module *a), (a), -1)                                   \
    X(const char *, dwfl_module_getsym_info,                                                    \
      (Dwfl_Module *a, int b, GElf_Sym *c, GElf_Addr *d, GElf_Word *e, Elf **f, Dwarf_Addr *g), \
      (a, b, c, d, e, f, g), NULL)                                                              \
    X(Dwfl_Line *, dwfl_module_getsrc, (Dwfl_Module *a, Dwarf_Addr b), (a, b), NULL)           \
    X(const char *, dwfl_lineinfo,                                                              \
      (Dwfl_Line *a, Dwarf_Addr *b, int *c, int *d, Dwarf_Word *e, Dwarf_Word *f),              \
      (a, b, c, d, e, f), NULL)                                                                 \
    X(const char *, dwfl_line_comp_dir, (Dwfl_Line *a), (a), NULL)                             \
    X(Dwarf_Die *, dwfl_module_addrdie, (Dwfl_Module *a, Dwarf_Addr b, Dwarf_Addr *c),         \
      (a, b, c), NULL)                                                                          \
    X(const char *, dwfl_errmsg, (int a), (a), "libdw is not loaded")                          \
    X(int, dwfl_module_build_id, (Dwfl_Module *a, const unsigned char **b, GElf_Addr *c),      \
      (a, b, c), -1)                                                                            \
    X(int, dwfl_build_id_find_elf,                                                              \
      (Dwfl_Module *a, void **b, const char *c, Dwarf_Addr d, char **e, Elf **f),               \
      (a, b, c, d, e, f), -1)                                                                   \
    X(int, dwfl_standard_find_debuginfo,                                                        \
      (Dwfl_Module *a, void **b, const char *c, Dwarf_Addr d, const char *e, const char *f,     \
       GElf_Word g, char **h),                                                                  \
      (a, b, c, d, e, f, g, h), -1)                                                             \
    X(int, dwfl_offline_section_address,                                                        \
      (Dwfl_Module *a, void **b, const char *c, Dwarf_Addr d, const char *e, GElf_Word f,       \
       const GElf_Shdr *g, Dwarf_Addr *h),                                                      \
      (a, b, c, d, e, f, g, h), -1)                                                             \
    X(int, dwarf_getscopes, (Dwarf_Die *a, Dwarf_Addr b, Dwarf_Die **c), (a, b, c), -1)        \
    X(int, dwarf_getscopes_die, (Dwarf_Die *a, Dwarf_Die **b), (a, b), -1)                     \
    X(Dwarf_Attribute *, dwarf_attr, (Dwarf_Die *a, unsigned int b, Dwarf_Attribute *c),       \
      (a, b, c), NULL)                                                                          \
    X(Dwarf_Attribute *, dwarf_attr_integrate,                                                  \
      (Dwarf_Die *a, unsigned int b, Dwarf_Attribute *c), (a, b, c), NULL)                     \
    X(const char *, dwarf_formstring, (Dwarf_Attribute *a), (a), NULL)                         \
    X(Dwarf_Die *, dwarf_formref_die, (Dwarf_Attribute *a, Dwarf_Die *b), (a, b), NULL)        \
    X(int, dwarf_formudata, (Dwarf_Attribute *a, Dwarf_Word *b), (a, b), -1)                   \
    X(int, dwarf_getsrcfiles, (Dwarf_Die *a, Dwarf_Files **b, size_t *c), (a, b, c), -1)       \
    X(const char *, dwarf_filesrc, (Dwarf_Files *a, size_t b, Dwarf_Word *c, Dwarf_Word *d),   \
      (a, b, c, d), NULL)                                                                       \
    X(int, dwarf_tag, (Dwarf_Die *a), (a), -1)                                                  \
    X(int, dwarf_child, (Dwarf_Die *a, Dwarf_Die *b), (a, b), -1)                              \
    X(int, dwarf_siblingof, (Dwarf_Die *a, Dwarf_Die *b), (a, b), -1)                          \
    X(int, dwarf_haspc, (Dwarf_Die *a, Dwarf_Addr b), (a, b), -1)                              \
    X(int, dwarf_haschildren, (Dwarf_Die *a), (a), -1)                                          \
    X(Dwarf_Off, dwarf_dieoffset, (Dwarf_Die *a), (a), (Dwarf_Off)-1)                           \
    X(Dwarf_Die *, dwarf_offdie, (Dwarf *a, Dwarf_Off b, Dwarf_Die *c), (a, b, c), NULL)        \
    X(Dwarf *, dwarf_cu_getdwarf, (Dwarf_CU *a), (a), NULL)                                     \
    X(ptrdiff_t, dwarf_ranges,                                                                  \
      (Dwarf_Die *a, ptrdiff_t b, Dwarf_Addr *c, Dwarf_Addr *d, Dwarf_Addr *e), (a, b, c, d, e), \
      -1)
// clang-format on

static struct {
#define POINTER(ret, name, params, args, fail) ret(*name) params;
    LIBDW_FUNCTIONS(POINTER)
#undef POINTER
    void (*dwfl_report_begin_add)(Dwfl *);
} real;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool loaded;

static void *open_libdw(void)
{
    void *h = dlopen(LIBDW_SONAME, RTLD_LAZY | RTLD_LOCAL);
#ifdef FBC_LIBDW_DIR
    if (!h)
        h = dlopen(FBC_LIBDW_DIR "/" LIBDW_SONAME, RTLD_LAZY | RTLD_LOCAL);
#endif
    return h;
}

/* Resolves every row, or none: a libdw without one of them is not used at all. */
static void load(void)
{
    void *h = open_libdw();
    const char *missing = h ? NULL : LIBDW_SONAME;
    void *p;
#define RESOLVE(ret, name, params, args, fail)                                                     \
    if (h && !missing) {                                                                           \
        p = dlsym(h, #name);                                                                       \
        if (p)                                                                                     \
            memcpy(&real.name, &p, sizeof p);                                                      \
        else                                                                                       \
            missing = #name;                                                                       \
    }
    LIBDW_FUNCTIONS(RESOLVE)
    RESOLVE(void, dwfl_report_begin_add, (Dwfl *), (a), )
#undef RESOLVE
    if (missing) {
        fbc_warn("cannot load %s (%s missing): frames are written unsymbolized (module + offset; "
                 "`fbcount symbolize` names them)",
                 LIBDW_SONAME, missing);
        return;
    }
    loaded = true;
}

static bool ready(void)
{
    pthread_once(&once, load);
    return loaded;
}

#define FORWARD(ret, name, params, args, fail)                                                     \
    HIDDEN ret name params                                                                         \
    {                                                                                              \
        if (!ready())                                                                              \
            return fail;                                                                           \
        return real.name args;                                                                     \
    }
LIBDW_FUNCTIONS(FORWARD)
#undef FORWARD

HIDDEN void dwfl_report_begin_add(Dwfl *a)
{
    if (ready())
        real.dwfl_report_begin_add(a);
}
