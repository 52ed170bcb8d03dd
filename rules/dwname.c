/* dwname.c - see dwname.h. */
#include "dwname.h"

#include <string.h>

#include <dwarf.h>

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
