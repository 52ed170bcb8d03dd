/* attrib.c - see attrib.h. */
#include "attrib.h"
#include "fields.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int fbr_names_parse(const char *value, const char *def, fbr_names *out)
{
    memset(out, 0, sizeof *out);
    const char *src = value ? value : def;
    int rc = 0;
    for (int attempt = 0; attempt < 2; attempt++) {
        out->storage = strdup(src);
        out->n = 0;
        bool bad = !out->storage;
        for (char *p = out->storage; p && *p && !bad;) {
            char *comma = strchr(p, ',');
            if (comma)
                *comma = '\0';
            while (*p == ' ' || *p == '\t')
                p++;
            size_t len = strlen(p);
            while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
                p[--len] = '\0';
            if (len) {
                if (out->n == FBR_MAX_NAMES)
                    bad = true;
                else
                    out->name[out->n++] = p;
            }
            if (!comma)
                break;
            p = comma + 1;
        }
        if (!bad && out->n > 0)
            return rc;
        free(out->storage);
        out->storage = NULL;
        out->n = 0;
        rc = -1;
        if (src == def)
            break;
        src = def;
    }
    return -1;
}

void fbr_names_free(fbr_names *n)
{
    free(n->storage);
    n->storage = NULL;
    n->n = 0;
}

bool fbr_is_op(const char *symbol, const fbr_names *prefixes)
{
    for (int i = 0; symbol && i < prefixes->n; i++)
        if (!strncmp(symbol, prefixes->name[i], strlen(prefixes->name[i])))
            return true;
    return false;
}

const char *fbr_base_name(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    return slash && slash[1] ? slash + 1 : path ? path : "";
}

bool fbr_module_is_interpreter(const char *path)
{
    if (!path)
        return false;
    const char *b = fbr_base_name(path);
    static const char *const starts[] = {"libffi.so", "_ctypes.", "_cffi_backend.", "libpython"};
    for (size_t i = 0; i < sizeof starts / sizeof *starts; i++)
        if (!strncmp(b, starts[i], strlen(starts[i])))
            return true;
    /* The interpreter itself: python, python3, python3.11, python3.11d; not python_tool. */
    if (strncmp(b, "python", 6))
        return false;
    for (b += 6; *b; b++)
        if (!((*b >= '0' && *b <= '9') || *b == '.' || *b == 'd' || *b == 'm' || *b == 'u'))
            return false;
    return true;
}

bool fbr_module_is_system(const char *path)
{
    /* OpenMP's runtimes too: a parallel region's frames there (GOMP_parallel, a worker's
     * start) are between the user's body and its caller, never the user's line. */
    static const char *const libs[] = {"libc.so",     "ld-linux", "libpthread.so", "libstdc++.so",
                                       "libgcc_s.so", "libdl.so", "libm.so",       "librt.so",
                                       "libgomp.so",  "libomp.so"};
    const char *b = path ? fbr_base_name(path) : "";
    for (size_t i = 0; i < sizeof libs / sizeof *libs; i++)
        if (!strncmp(b, libs[i], strlen(libs[i])))
            return true;
    return false;
}

bool fbr_function_is_runtime(const char *symbol)
{
    static const char *const whole[] = {"execute_native_thread_routine", "start_thread", "__clone",
                                        "__clone3", "clone3"};
    static const char *const starts[] = {"_ZNSt6thread15_M_start_thread",
                                         "std::thread::_M_start_thread"};
    if (!symbol)
        return false;
    for (size_t i = 0; i < sizeof whole / sizeof *whole; i++)
        if (!strcmp(symbol, whole[i]))
            return true;
    for (size_t i = 0; i < sizeof starts / sizeof *starts; i++)
        if (!strncmp(symbol, starts[i], strlen(starts[i])))
            return true;
    return false;
}

bool fbr_source_is_system(const char *file)
{
    return file && (!strncmp(file, "/usr/include/", 13) || strstr(file, "/include/c++/"));
}

/* Whether the directory file[0..len) is a Python package: it holds __init__.py, or it is not
 * here to look at (a dump read on another machine), where the name alone decides. A folder
 * that merely shares the name (a project checked out in ~/src/torch) is not the package. */
static bool package_dir(const char *file, size_t len)
{
    char dir[4096];
    if (len + sizeof "/__init__.py" > sizeof dir)
        return true;
    memcpy(dir, file, len);
    strcpy(dir + len, "/__init__.py");
    if (access(dir, F_OK) == 0)
        return true;
    dir[len] = '\0';
    return access(dir, F_OK) != 0;
}

bool fbr_py_in_package(const char *file, const fbr_names *packages)
{
    if (!file)
        return false;
    for (int i = 0; i < packages->n; i++) {
        const char *pkg = packages->name[i];
        size_t len = strlen(pkg);
        for (const char *p = file; (p = strstr(p, pkg)); p++) {
            bool starts = p == file || p[-1] == '/';
            if (starts && p[len] == '/' && package_dir(file, (size_t)(p - file) + len))
                return true; /* .../vkt/ops.py */
            if (starts && !strcmp(p + len, ".py"))
                return true; /* .../vkt.py */
        }
    }
    return false;
}

const char *fbr_unnamed(const char *symbol, const char *module_path, unsigned long offset,
                        char *buf, size_t cap)
{
    if (symbol)
        return symbol;
    if (!module_path)
        return FBR_UNKNOWN;
    snprintf(buf, cap, "%s+0x%lx", fbr_base_name(module_path), offset);
    return buf;
}

static bool same_text(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

bool fbr_same_site(const char *site_a, const char *file_a, long line_a, const char *site_b,
                   const char *file_b, long line_b)
{
    return same_text(site_a, site_b) && same_text(file_a, file_b) && (!file_a || line_a == line_b);
}

const char *fbr_origin_prefix(const char *origin)
{
    if (origin && !strcmp(origin, FBR_ORIGIN_BACKWARD))
        return "from backward() at ";
    if (origin && !strcmp(origin, FBR_ORIGIN_THREAD))
        return "thread started at ";
    return "";
}

/* Where "::{lambda" starts outside any template or parameter list in name, or NULL: a lambda
 * named inside another name's arguments (std::_Function_handler<void (), main::{lambda()#1}>)
 * is not the function itself. */
static const char *lambda_at(const char *name)
{
    int depth = 0;
    for (const char *p = name; *p; p++) {
        if (*p == '<' || *p == '(')
            depth++;
        else if ((*p == '>' || *p == ')') && depth > 0)
            depth--;
        else if (!depth && !strncmp(p, "::{lambda", 9))
            return p;
    }
    return NULL;
}

/* How much of name[0..n) names the function without its parameters: up to the first '('
 * outside a template's arguments (a lambda named in the debug information has none, one the
 * symbol table names has them: both read alike). */
static int without_parameters(const char *name, size_t n)
{
    int depth = 0;
    for (size_t i = 0; i < n; i++) {
        if (name[i] == '<')
            depth++;
        else if (name[i] == '>' && depth > 0)
            depth--;
        else if (name[i] == '(' && !depth && !(i >= 8 && !strncmp(name + i - 8, "operator", 8)))
            return (int)i;
    }
    return (int)n;
}

const char *fbr_function_display(const char *name, char *out, size_t cap)
{
    const char *end;
    if (!name)
        name = FBR_UNKNOWN;
    if ((end = lambda_at(name)))
        snprintf(out, cap, "lambda in %.*s", without_parameters(name, (size_t)(end - name)), name);
    else if ((end = strstr(name, " [clone ._omp_fn.")) || (end = strstr(name, "._omp_fn.")))
        snprintf(out, cap, "parallel body in %.*s", without_parameters(name, (size_t)(end - name)),
                 name);
    else
        snprintf(out, cap, "%s", name);
    return out;
}

/* before, then name as people read it, at file:line where the line is known; into out. */
static int function_at_line(char *out, size_t cap, const char *before, const char *name,
                            const char *file, long line)
{
    char fn[512];
    fbr_function_display(name, fn, sizeof fn);
    if (file && line > 0)
        return snprintf(out, cap, "%s%s (%s:%ld)", before, fn, fbr_base_name(file), line);
    return snprintf(out, cap, "%s%s", before, fn);
}

const char *fbr_site_text(const fbr_site *s, char *out, size_t cap)
{
    char before[640];
    /* node and forward cut short, never the origin's prefix after them */
    snprintf(before, sizeof before, "%.100s%s%.480s%s%s", s->node ? s->node : "",
             s->node && s->forward ? " of " : "", s->node && s->forward ? s->forward : "",
             s->node ? ", " : "", fbr_origin_prefix(s->origin));
    int n = function_at_line(out, cap, before, s->name, s->file, s->line);
    if (s->inlined_in && *s->inlined_in && n >= 0 && (size_t)n < cap)
        snprintf(out + n, cap - (size_t)n, " inlined in %s", s->inlined_in);
    return out;
}

void fbr_inlined_in_add(char *out, size_t cap, const char *name, const char *file, long line)
{
    size_t n = strlen(out);
    if (n + 1 < cap)
        function_at_line(out + n, cap - n, n ? " inlined in " : "", name, file, line);
}
