/* attrib.h - which op a recorded stack belongs to and which code called it: the rule the
 * shim applies when it writes a dump and the command applies when it symbolizes one later.
 *
 *   op   = the innermost native frame whose function name starts with an op prefix
 *          (FBCOUNT_OP_PREFIX, default "vkt_");
 *   site = the first native frame outward from the op that lies outside the op's module
 *          (without an op: outside the module of the innermost frame), unless that frame
 *          belongs to an FFI layer or an interpreter (libffi, _ctypes, cffi's backend,
 *          libpython, the python executable): then the innermost Python frame outside the
 *          backend's own Python packages (FBCOUNT_PY_BACKEND, default "vkt"), when the
 *          stack carries Python frames.
 */
#ifndef FBR_ATTRIB_H
#define FBR_ATTRIB_H

#include <stdbool.h>
#include <stddef.h>

#define FBR_DEFAULT_OP_PREFIX "vkt_"
#define FBR_DEFAULT_PY_BACKEND "vkt"
#define FBR_MAX_NAMES 16
#define FBR_UNKNOWN "(unknown)"

/* A list of names from a comma-separated value: op prefixes, or Python packages. */
typedef struct {
    int n;
    const char *name[FBR_MAX_NAMES];
    char *storage;
} fbr_names;

/* Parses value ("vkt_, mylib_"; blanks around names are dropped, empty names skipped) into
 * out. Returns 0, or -1 when it is not a list of 1..16 names: out then holds def alone.
 * A NULL value gives def. Free with fbr_names_free. */
int fbr_names_parse(const char *value, const char *def, fbr_names *out);
void fbr_names_free(fbr_names *n);

/* Whether symbol starts with one of the op prefixes. */
bool fbr_is_op(const char *symbol, const fbr_names *prefixes);

/* The base name of path: what follows its last '/' (path itself when it has none or ends
 * in one); "" for NULL. The one rule for every module and file name shown or matched. */
const char *fbr_base_name(const char *path);

/* Whether the module at path is an FFI layer or a Python interpreter, whose frames stand
 * for the Python code that called through them. */
bool fbr_module_is_interpreter(const char *path);

/* Whether the module at path is the system's runtime: the C library, the loader, the C++
 * and OpenMP runtimes and their kin, whose frames no census names as the user's and whose
 * separate debug information the shim never reads (its symbol tables name them). */
bool fbr_module_is_system(const char *path);

/* Whether a native source file is the system's: a header of the C or C++ standard library
 * (/usr/include, .../include/c++/), whose templates and inline functions compile into the
 * program's own module (std::thread's start of a worker) but are no line of its own. */
bool fbr_source_is_system(const char *file);

/* Whether a Python source file belongs to one of the packages: under a directory named like
 * the package that is a Python package (holds __init__.py, or is not on this machine), or the
 * module file <package>.py. */
bool fbr_py_in_package(const char *file, const fbr_names *packages);

/* Whether symbol (raw or demangled) is a thread's start or std::thread's machinery in the C
 * and C++ runtimes (not the _State_impl that runs a thread's callable, the user's code inlined
 * into it): never a user's site, even where a program links its runtime statically and
 * the function lies in the program's own file. */
bool fbr_function_is_runtime(const char *symbol);

/* A native frame as attribution needs it. module: an id shared by the frames of one
 * module, -1 when unknown; path: that module's file, NULL when unknown. */
typedef struct {
    const char *symbol;
    long module;
    const char *path;
} fbr_native;

/* Native frame i (innermost first); names may be looked up lazily, only as far as asked. */
typedef const fbr_native *(*fbr_native_at)(void *ctx, size_t i);

typedef struct {
    const char *file, *function;
    long line;
} fbr_pyframe;

typedef struct {
    long op;         /* native frame of the op, -1 when no frame is an op */
    long site;       /* native frame of the site, -1 when none lies outside the module */
    long py_site;    /* Python frame of the site (innermost first), -1 when not Python */
    int site_inline; /* the site's function among those inlined at its frame (0: innermost) */
} fbr_attrib;

/* The name of a frame as people read it where its symbol is unknown: "libfoo.so+0x1f30"
 * (the module's file name and the offset from its load base), or "(unknown)" without a
 * module. symbol itself when known. Written into buf (cap bytes) when made. */
const char *fbr_unnamed(const char *symbol, const char *module_path, unsigned long offset,
                        char *buf, size_t cap);

/* Whether two sites of an op are one: the same function, at the same file and line (no file
 * on either side: the function alone). The shim's report and `fbcount symbolize` merge by it. */
bool fbr_same_site(const char *site_a, const char *file_a, long line_a, const char *site_b,
                   const char *file_b, long line_b);

/* How a function reads in a site, from its demangled name: a lambda by the function that
 * encloses it ("lambda in main" for main::{lambda()#1}::operator()() const), an OpenMP
 * outlined region by its function ("parallel body in main" for main._omp_fn.0); any other
 * name as it is. Written into out (cap bytes) and returned. */
const char *fbr_function_display(const char *name, char *out, size_t cap);

/* A site as the dump gives it (interpose/dump-format.md); NULL for what it does not have. */
typedef struct {
    const char *origin;     /* where the work came from: "backward", "thread" */
    const char *node;       /* the autograd node a backward ran: "EluBackward0" */
    const char *forward;    /* where the forward op that made that node ran, as a site reads */
    const char *name;       /* the function, demangled */
    const char *file;       /* its source file */
    long line;              /* its line (0: unknown) */
    const char *inlined_in; /* the functions it is inlined in, as "inlined_in" gives them */
} fbr_site;

/* A site as every view prints it: "[NODE[ of FORWARD], ][from backward() at ]NAME
 * (file:line)[ inlined in CALLERS]", NAME through fbr_function_display, file its base name (no
 * parenthesis without a line). Written into out (cap bytes) and returned. */
const char *fbr_site_text(const fbr_site *s, char *out, size_t cap);

/* Appends one caller to an inlined_in text (out, cap bytes, "" to start): "main (app.cpp:20)",
 * after " inlined in " when out already names one. name is demangled; file may be NULL. */
void fbr_inlined_in_add(char *out, size_t cap, const char *name, const char *file, long line);

/* How a site reads where it is where a thread's work came from (origin: "backward",
 * "thread", as the dump names it): "from backward() at ", "thread started at "; "" for NULL
 * or another name. */
const char *fbr_origin_prefix(const char *origin);

#endif
