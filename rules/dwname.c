/* dwname.c - see dwname.h. */
#include "dwname.h"

#include <string.h>

#include <dwarf.h>
#include <stdlib.h>
#include <uthash.h>

/* Appends the components of path to out[0..*o), folding "." and "..". */
static void fold(const char *path, char *out, size_t cap, size_t *o)
{
    for (const char *p = path; *p;) {
        const char *end = strchr(p, '/');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == 0 || (n == 1 && p[0] == '.')) {
            /* an empty or "." component names the same directory */
        } else if (n == 2 && p[0] == '.' && p[1] == '.') {
            while (*o > 0 && out[*o - 1] != '/')
                (*o)--;
            if (*o > 0)
                (*o)--;
        } else if (*o + n + 2 < cap) {
            out[(*o)++] = '/';
            memcpy(out + *o, p, n);
            *o += n;
        }
        p += n + (end ? 1 : 0);
    }
}

char *fbr_source_path(const char *file, const char *comp_dir, char *out, size_t cap)
{
    if (!file || cap < 2)
        return NULL;
    if (file[0] == '/' || !comp_dir || !*comp_dir) {
        size_t n = strlen(file) < cap - 1 ? strlen(file) : cap - 1;
        memcpy(out, file, n);
        out[n] = '\0';
        return out;
    }
    size_t o = 0;
    fold(comp_dir, out, cap, &o);
    fold(file, out, cap, &o);
    if (!o)
        out[o++] = '/';
    out[o] = '\0';
    return out;
}

const char *fbr_die_name(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    const char *n = NULL;
    if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
        dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
        n = dwarf_formstring(&a);
    if (!n && dwarf_attr_integrate(die, DW_AT_name, &a))
        n = dwarf_formstring(&a);
    return n;
}

/* text (n bytes) and a NUL into what is left of buf; NULL when it does not fit. */
static const char *place_text(const char *text, size_t n, char **buf, size_t *cap)
{
    if (n + 1 > *cap)
        return NULL;
    char *p = *buf;
    memcpy(p, text, n);
    p[n] = '\0';
    *buf += n + 1;
    *cap -= n + 1;
    return p;
}

/* The DIE that declares die's function: through its abstract origin (an inlined or
 * out-of-line instance) to its specification (a member's declaration in its class). */
static Dwarf_Die declaration(Dwarf_Die *die)
{
    Dwarf_Die d = *die, next;
    Dwarf_Attribute a;
    for (int i = 0; i < 4 && dwarf_formref_die(dwarf_attr(&d, DW_AT_abstract_origin, &a), &next);
         i++)
        d = next;
    if (dwarf_formref_die(dwarf_attr(&d, DW_AT_specification, &a), &next))
        d = next;
    return d;
}

/* "f::{lambda}::operator()" for the call operator of a lambda that f encloses, where the
 * debug information names it "operator()" alone (inlined everywhere, it has no linkage name;
 * its class has no name, and f's DIE holds it): the symbol table's lambdas demangle to
 * "f(args)::{lambda()#1}::operator()() const", and views name both by f (rules/attrib.h's
 * fbr_function_display). NULL where die is no lambda's. */
static const char *lambda_name(Dwarf_Die *die, char **buf, size_t *cap)
{
    Dwarf_Die decl = declaration(die), *scopes = NULL;
    int n = dwarf_getscopes_die(&decl, &scopes);
    const char *fn = NULL;
    if (n > 2 && !fbr_die_name(&scopes[1]) &&
        (dwarf_tag(&scopes[1]) == DW_TAG_class_type ||
         dwarf_tag(&scopes[1]) == DW_TAG_structure_type))
        for (int i = 2; i < n && !fn; i++)
            if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
                Dwarf_Attribute a;
                fn = dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_name, &a));
            }
    free(scopes);
    char text[1024];
    int len = fn ? snprintf(text, sizeof text, "%s::{lambda}::operator()", fn) : -1;
    return len > 0 && (size_t)len < sizeof text ? place_text(text, (size_t)len, buf, cap) : NULL;
}

/* The name of an inlined instance: its linkage name, else a lambda's by its function, else
 * its plain name. */
static const char *inlined_name(Dwarf_Die *die, char **buf, size_t *cap)
{
    Dwarf_Attribute a;
    if (!dwarf_attr_integrate(die, DW_AT_linkage_name, &a) &&
        !dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a)) {
        const char *n = fbr_die_name(die);
        const char *lambda = n && !strcmp(n, "operator()") ? lambda_name(die, buf, cap) : NULL;
        if (lambda)
            return lambda;
    }
    return fbr_die_name(die);
}

/* A source path into what is left of buf; NULL when it does not fit. */
static const char *place(const char *file, const char *comp_dir, char **buf, size_t *cap)
{
    if (!file || *cap < 2)
        return NULL;
    char *p = fbr_source_path(file, comp_dir, *buf, *cap);
    size_t n = strlen(p) + 1;
    if (n >= *cap)
        return NULL;
    *buf += n;
    *cap -= n;
    return p;
}

/* The innermost function or inlined instance under parent that holds pc, into out; false
 * where none does. Unlike dwarf_getscopes, it looks inside scopes that hold no code of their
 * own: GCC nests an OpenMP region's outlined function (f._omp_fn.0) in the abstract
 * definition of the function whose region it is, which has no addresses. */
static bool code_at(Dwarf_Die *parent, Dwarf_Addr pc, int depth, Dwarf_Die *out)
{
    Dwarf_Die child;
    if (depth > 32 || dwarf_child(parent, &child) != 0)
        return false;
    do {
        int tag = dwarf_tag(&child);
        bool fn = tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
        if (!fn && tag != DW_TAG_lexical_block && tag != DW_TAG_namespace &&
            tag != DW_TAG_class_type && tag != DW_TAG_structure_type)
            continue;
        Dwarf_Attribute a;
        bool code = dwarf_attr(&child, DW_AT_low_pc, &a) || dwarf_attr(&child, DW_AT_ranges, &a);
        if (code && dwarf_haspc(&child, pc) <= 0)
            continue; /* its code is elsewhere: nothing inside it is here */
        if (code_at(&child, pc, depth + 1, out))
            return true;
        if (code && fn) {
            *out = child;
            return true;
        }
        if (code)
            return false; /* a block of its parent's holds pc: the parent is the answer */
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

/* The scopes holding pc, innermost first, as dwarf_getscopes finds them; past the innermost
 * inlined instance, the physical nesting of that instance rather than its abstract
 * definition's (dwarf_getscopes goes on with the latter; addr2line -i reads the former). Two
 * walks of the compilation unit's tree. Returns how many (*scopes: malloc'd). */
static int scopes_by_walk(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die **scopes)
{
    Dwarf_Die found;
    *scopes = NULL;
    int ns = dwarf_getscopes(cu, pc, scopes);
    if (ns <= 0 && code_at(cu, pc, 0, &found)) {
        free(*scopes);
        *scopes = NULL;
        ns = dwarf_getscopes_die(&found, scopes);
    }
    for (int i = 0; i < ns; i++) {
        if (dwarf_tag(&(*scopes)[i]) != DW_TAG_inlined_subroutine)
            continue;
        Dwarf_Die *nest = NULL;
        int nn = dwarf_getscopes_die(&(*scopes)[i], &nest);
        if (nn > 0) {
            free(*scopes);
            *scopes = nest;
            ns = nn;
        } else {
            free(nest);
        }
        break;
    }
    return ns;
}

/* The frames of fbr_dw_chain from the scopes at addr (innermost first). */
static int chain_of(Dwfl_Module *mod, fbr_functions **fns, Dwarf_Addr addr, Dwarf_Die *cu,
                    const Dwarf_Die *scopes, int ns, fbr_dw_frame *out, int max, char *buf,
                    size_t cap)
{
    memset(out, 0, (size_t)max * sizeof *out);
    const char *name = fbr_function_at(fns, mod, addr);
    Dwfl_Line *line = dwfl_module_getsrc(mod, addr);
    int lineno = 0;
    const char *src = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
    if (src) {
        out[0].file = place(src, dwfl_line_comp_dir(line), &buf, &cap);
        out[0].line = out[0].file ? lineno : 0;
    }
    int n = 1;
    Dwarf_Files *files = NULL;
    size_t nfiles = 0;
    const char *comp_dir = NULL;
    Dwarf_Attribute cd;
    if (cu && dwarf_attr(cu, DW_AT_comp_dir, &cd))
        comp_dir = dwarf_formstring(&cd);
    if (cu && dwarf_getsrcfiles(cu, &files, &nfiles) != 0)
        files = NULL;
    /* Innermost first: each inlined instance is a frame named after its function, at the line
     * inside it; its call site is the line of the frame that called it. */
    for (int i = 0; i < ns && n < max; i++) {
        Dwarf_Die scope = scopes[i];
        if (dwarf_tag(&scope) != DW_TAG_inlined_subroutine)
            continue;
        out[n - 1].symbol = inlined_name(&scope, &buf, &cap);
        out[n - 1].inlined = true;
        fbr_dw_frame *caller = &out[n++];
        Dwarf_Attribute a;
        Dwarf_Word fi = 0, li = 0;
        if (dwarf_formudata(dwarf_attr(&scope, DW_AT_call_file, &a), &fi) == 0 && files &&
            fi < nfiles)
            caller->file = place(dwarf_filesrc(files, fi, NULL, NULL), comp_dir, &buf, &cap);
        if (caller->file && dwarf_formudata(dwarf_attr(&scope, DW_AT_call_line, &a), &li) == 0)
            caller->line = (long)li;
    }
    /* The outermost is the function the symbol table names, at the innermost call. */
    out[n - 1].symbol = name;
    return n;
}

int fbr_dw_chain(Dwfl_Module *mod, fbr_functions **fns, Dwarf_Addr addr, fbr_dw_frame *out, int max,
                 char *buf, size_t cap)
{
    Dwarf_Addr bias;
    Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, &bias);
    Dwarf_Die *scopes = NULL;
    int ns = cu ? scopes_by_walk(cu, addr - bias, &scopes) : 0;
    int n = chain_of(mod, fns, addr, cu, scopes, ns, out, max, buf, cap);
    free(scopes);
    return n;
}

/* ---- a unit's functions by address, found once --------------------------------------- */

/* One range of a function with code (a subprogram: out-of-line functions, OpenMP's outlined
 * bodies nested in abstract definitions, lambdas), by its DIE's offset. */
typedef struct {
    Dwarf_Addr lo, hi;
    Dwarf_Off die;
} code_range;

typedef struct {
    struct {
        Dwarf *dw;
        Dwarf_Off cu;
    } key;
    code_range *r;
    size_t n, cap;
    UT_hash_handle hh;
} unit_index;

static int by_lo(const void *a, const void *b)
{
    const code_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Whether a DIE without code may hold functions with code: a namespace, or a function's
 * abstract definition (GCC nests OpenMP's outlined bodies there) and its blocks. Types hold
 * declarations only (a member function's code is a DIE of the unit or namespace that names
 * its declaration); a function with code holds its own blocks and inlined instances. Looking
 * inside nothing else is what keeps this walk cheaper than one dwarf_getscopes. */
static bool may_hold_code(Dwarf_Die *die)
{
    int tag = dwarf_tag(die);
    if (tag == DW_TAG_namespace)
        return true;
    if (tag != DW_TAG_subprogram && tag != DW_TAG_lexical_block)
        return false;
    Dwarf_Attribute a;
    return !dwarf_attr(die, DW_AT_low_pc, &a) && !dwarf_attr(die, DW_AT_ranges, &a);
}

/* Every subprogram with code under die (depth-limited), its ranges into u. */
static void index_under(Dwarf_Die *die, int depth, unit_index *u)
{
    Dwarf_Die child;
    if (depth > 64 || dwarf_child(die, &child) != 0)
        return;
    do {
        if (dwarf_tag(&child) == DW_TAG_subprogram) {
            Dwarf_Addr base, lo, hi;
            ptrdiff_t off = 0;
            while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
                if (hi <= lo)
                    continue;
                if (u->n == u->cap) {
                    size_t cap = u->cap ? u->cap * 2 : 64;
                    code_range *r = realloc(u->r, cap * sizeof *r);
                    if (!r)
                        return;
                    u->r = r;
                    u->cap = cap;
                }
                u->r[u->n++] = (code_range){lo, hi, dwarf_dieoffset(&child)};
            }
        }
        if (dwarf_haschildren(&child) && may_hold_code(&child))
            index_under(&child, depth + 1, u);
    } while (dwarf_siblingof(&child, &child) == 0);
}

/* The chain of scopes from sub down to the innermost block or inlined instance holding pc
 * (path[0] = sub); blocks without addresses of their own are looked through. Returns the
 * length. */
static int descend(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *path, int n, int max)
{
    Dwarf_Die child;
    if (n >= max || dwarf_child(parent, &child) != 0)
        return n;
    do {
        int tag = dwarf_tag(&child);
        if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block)
            continue;
        Dwarf_Attribute a;
        bool code = dwarf_attr(&child, DW_AT_low_pc, &a) || dwarf_attr(&child, DW_AT_ranges, &a);
        if (!code) {
            int m = descend(&child, pc, path, n, max);
            if (m > n)
                return m;
            continue;
        }
        if (dwarf_haspc(&child, pc) <= 0)
            continue;
        path[n] = child;
        return descend(&child, pc, path, n + 1, max);
    } while (dwarf_siblingof(&child, &child) == 0);
    return n;
}

typedef struct {
    struct {
        Dwfl_Module *mod;
        Dwarf_Addr addr;
    } key;
    int n;
    fbr_dw_frame f[FBR_MAX_CHAIN];
    UT_hash_handle hh;
    char text[]; /* the files and names fbr_dw_chain placed in its buffer */
} chain_ent;

struct fbr_chains {
    chain_ent *map;
    unit_index *units;
};

/* The unit's index in cache (made at its first use: one walk of its tree); NULL without
 * memory. */
static unit_index *unit_of(fbr_chains *cache, Dwarf_Die *cu)
{
    unit_index probe, *u;
    memset(&probe.key, 0, sizeof probe.key);
    probe.key.dw = dwarf_cu_getdwarf(cu->cu);
    probe.key.cu = dwarf_dieoffset(cu);
    HASH_FIND(hh, cache->units, &probe.key, sizeof probe.key, u);
    if (u || !(u = calloc(1, sizeof *u)))
        return u;
    u->key = probe.key;
    index_under(cu, 0, u);
    if (u->n > 1)
        qsort(u->r, u->n, sizeof *u->r, by_lo);
    HASH_ADD(hh, cache->units, key, sizeof u->key, u);
    return u;
}

/* The scopes holding pc, innermost first, from the unit's index: the smallest function range
 * holding pc, then down through its blocks. Where the index has no function there, the walk
 * of scopes_by_walk. Returns how many (*scopes: malloc'd). */
static int scopes_indexed(fbr_chains *cache, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die **scopes)
{
    unit_index *u = unit_of(cache, cu);
    const code_range *best = NULL;
    size_t lo = 0, hi = u ? u->n : 0;
    while (lo < hi) { /* the first range starting after pc */
        size_t mid = lo + (hi - lo) / 2;
        if (u->r[mid].lo <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t j = lo; j-- > 0 && lo - j <= 16;) /* nested ranges are rare and near */
        if (pc < u->r[j].hi && (!best || u->r[j].hi - u->r[j].lo < best->hi - best->lo))
            best = &u->r[j];
    Dwarf_Die path[FBR_MAX_CHAIN * 4];
    if (!best || !dwarf_offdie(dwarf_cu_getdwarf(cu->cu), best->die, &path[0]))
        return scopes_by_walk(cu, pc, scopes);
    int n = descend(&path[0], pc, path, 1, (int)(sizeof path / sizeof *path));
    if (!(*scopes = malloc((size_t)n * sizeof **scopes)))
        return 0;
    for (int i = 0; i < n; i++)
        (*scopes)[i] = path[n - 1 - i];
    return n;
}

/* How far into buf (cap bytes) the string p ends, 0 where p is not in it. */
static size_t end_in(const char *p, const char *buf, size_t cap)
{
    return p && p >= buf && p < buf + cap ? (size_t)(p - buf) + strlen(p) + 1 : 0;
}

/* p moved from the buffer at from to the copy at to, where it points into the buffer. */
static const char *rebase(const char *p, const char *from, size_t used, char *to)
{
    return p && p >= from && p < from + used ? to + (p - from) : p;
}

int fbr_chain_at(fbr_chains **cache, Dwfl_Module *mod, fbr_functions **fns, Dwarf_Addr addr,
                 const fbr_dw_frame **out)
{
    if (!*cache && !(*cache = calloc(1, sizeof **cache)))
        return 0;
    chain_ent probe, *e;
    memset(&probe.key, 0, sizeof probe.key);
    probe.key.mod = mod;
    probe.key.addr = addr;
    HASH_FIND(hh, (*cache)->map, &probe.key, sizeof probe.key, e);
    if (!e) {
        fbr_dw_frame f[FBR_MAX_CHAIN];
        char buf[8192];
        Dwarf_Addr bias;
        Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, &bias), *scopes = NULL;
        int ns = cu ? scopes_indexed(*cache, cu, addr - bias, &scopes) : 0;
        int n = chain_of(mod, fns, addr, cu, scopes, ns, f, FBR_MAX_CHAIN, buf, sizeof buf);
        free(scopes);
        size_t used = 0;
        for (int i = 0; i < n; i++) {
            size_t a = end_in(f[i].file, buf, sizeof buf), b = end_in(f[i].symbol, buf, sizeof buf);
            used = a > used ? a : used;
            used = b > used ? b : used;
        }
        if (!(e = malloc(sizeof *e + used)))
            return 0;
        e->key = probe.key;
        e->n = n;
        memcpy(e->text, buf, used);
        for (int i = 0; i < n; i++) {
            e->f[i] = f[i];
            e->f[i].file = rebase(f[i].file, buf, used, e->text);
            e->f[i].symbol = rebase(f[i].symbol, buf, used, e->text);
        }
        HASH_ADD(hh, (*cache)->map, key, sizeof e->key, e);
    }
    *out = e->f;
    return e->n;
}

void fbr_chains_free(fbr_chains *cache)
{
    chain_ent *e, *tmp;
    if (!cache)
        return;
    HASH_ITER(hh, cache->map, e, tmp)
    {
        HASH_DEL(cache->map, e);
        free(e);
    }
    unit_index *u, *utmp;
    HASH_ITER(hh, cache->units, u, utmp)
    {
        HASH_DEL(cache->units, u);
        free(u->r);
        free(u);
    }
    free(cache);
}
