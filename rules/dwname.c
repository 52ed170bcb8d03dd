/* dwname.c - see dwname.h. */
#include "dwname.h"

#include <string.h>

#include <dwarf.h>
#include <stdlib.h>

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

int fbr_dw_chain(Dwfl_Module *mod, Dwarf_Addr addr, fbr_dw_frame *out, int max, char *buf,
                 size_t cap)
{
    memset(out, 0, (size_t)max * sizeof *out);
    GElf_Off symoff;
    GElf_Sym sym;
    const char *name = dwfl_module_addrinfo(mod, addr, &symoff, &sym, NULL, NULL, NULL);
    Dwfl_Line *line = dwfl_module_getsrc(mod, addr);
    int lineno = 0;
    const char *src = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
    if (src) {
        out[0].file = place(src, dwfl_line_comp_dir(line), &buf, &cap);
        out[0].line = out[0].file ? lineno : 0;
    }
    int n = 1;
    Dwarf_Addr bias;
    Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, &bias);
    Dwarf_Die *scopes = NULL;
    int ns = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0;
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
        if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
            continue;
        out[n - 1].symbol = fbr_die_name(&scopes[i]);
        out[n - 1].inlined = true;
        fbr_dw_frame *caller = &out[n++];
        Dwarf_Attribute a;
        Dwarf_Word fi = 0, li = 0;
        if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &fi) == 0 && files &&
            fi < nfiles)
            caller->file = place(dwarf_filesrc(files, fi, NULL, NULL), comp_dir, &buf, &cap);
        if (caller->file && dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &li) == 0)
            caller->line = (long)li;
    }
    free(scopes);
    /* The outermost is the function the symbol table names, at the innermost call. */
    out[n - 1].symbol = name;
    return n;
}
