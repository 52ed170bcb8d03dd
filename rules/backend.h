/* backend.h - a backend is a row of data: its name, how its library is recognised, its exits
 * (a symbol, and what a call of it means), how its op is named, and which native modules and
 * Python packages are its own when a stack is attributed to the user's code.
 *
 * The built-in rows are descriptor files (rules/backends/<name>.backend) compiled into the
 * shim and the command; a user's descriptor in the same format is read at run time
 * (FBCOUNT_BACKEND, `fbcount run --backend FILE`). The format, one directive a line:
 *
 *   # a comment, to the end of the line
 *   name      vkt                       1..31 of [a-z0-9_.-], unique among the rows
 *   library   libvkt.so*                base names (glob) of the module that defines the exits
 *   exit      host_result fallback read=vkt
 *   exit      host_resident_op host read=vkt
 *                                       exit SYMBOL KIND [read=READER]; KIND: fallback | host |
 *                                       transfer | graph (each node a fallback or host work, as
 *                                       the reader decides); READER: how a call's arguments are
 *                                       read (fbr_readers below); default none: counted, bytes
 *                                       unknown
 *   op        prefix vkt_               the innermost frame whose name starts with a prefix
 *   op        scope at::_ops            the component after the scope in the innermost C++ frame
 *                                       named inside it (at::_ops::gelu_out::call -> gelu_out)
 *   op        library                   the innermost frame inside the exit's library
 *   op        reader                    the reader names it (ggml: each graph node's op)
 *   modules   libvkt.so* _vkt.*.so      more modules of the backend (the exit's module and the
 *                                       op's module always are)
 *   python    vkt                       the backend's Python packages
 *   sources   PATTERN...                the backend's source files (its headers: torch's are
 *                                       the ATen and c10 trees), whole-path globs: a function of
 *                                       theirs inlined into the user's code is the backend's
 *   accessor  rank=vkt_tensor_rank ...  optional functions of the exit's module that read a
 *                                       result (rank, shape, dtype, dtype_name), its counters
 *                                       (stats) and the fallback's start (started)
 *   refuse    -10                       what a refused fallback returns (FBCOUNT_MODE=error):
 *                                       an integer, or "throw" (a C++ exception, via the reader)
 *
 * name, library and at least one exit are required. A declared exit (`--exit LIB:SYMBOL`) is
 * a row of its own: library LIB*, one exit, op library (or prefix).
 */
#ifndef FBR_BACKEND_H
#define FBR_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "attrib.h"

#define FBR_BACKENDS_MAX 16 /* rows in force in one process */
#define FBR_EXITS_MAX 8     /* exits of one row */
#define FBR_PATTERNS_MAX 12 /* libraries, modules, op prefixes, packages: each, of one row */
#define FBR_PATTERN_LEN 64
#define FBR_SYMBOL_LEN 256
#define FBR_NAME_LEN 32
#define FBR_DESCRIPTOR_MAX 16384 /* bytes of one descriptor file */

/* What a call of an exit means (the exit directive's KIND): X(ID, name). */
#define FBR_EXIT_KINDS(X)                                                                          \
    X(FALLBACK, "fallback") /* an op the device could not run, run on the host */                  \
    X(HOST, "host")         /* host work on a tensor a fallback left on the host */                \
    X(TRANSFER, "transfer") /* a copy between places */                                            \
    X(GRAPH, "graph")       /* a graph: each node a fallback or host work, as the reader says */

typedef enum {
#define FBR_EXIT_KIND_ENUM(id, name) FBR_EXIT_##id,
    FBR_EXIT_KINDS(FBR_EXIT_KIND_ENUM)
#undef FBR_EXIT_KIND_ENUM
} fbr_exit_kind;

/* How the op of a call is named (the op directive): X(ID, name). */
#define FBR_OPRULES(X)                                                                             \
    X(PREFIX, "prefix")   /* the innermost frame whose name starts with a prefix */                \
    X(SCOPE, "scope")     /* the component after the scope in the innermost C++ frame */           \
    X(LIBRARY, "library") /* the innermost frame inside the exit's library */                      \
    X(READER, "reader")   /* the reader names it */

typedef enum {
#define FBR_OPRULE_ENUM(id, name) FBR_OPRULE_##id,
    FBR_OPRULES(FBR_OPRULE_ENUM)
#undef FBR_OPRULE_ENUM
} fbr_oprule;

/* How a call's arguments are read; the shim implements each (interpose/readers/). */
#define FBR_READERS(X)                                                                             \
    X(NONE, "none")                       /* count and stack only: the signature is not known */   \
    X(VKT, "vkt")                         /* (tensor *out, const void *data, size_t nbytes) */     \
    X(TORCH, "torch")                     /* (const OperatorHandle &op, Stack *stack, ...) */      \
    X(GGML_GRAPH, "ggml-graph")           /* (ggml_backend_t, struct ggml_cgraph *) */             \
    X(GGML_COPY, "ggml-copy")             /* (struct ggml_tensor *src, struct ggml_tensor *dst) */ \
    X(GGML_COPY_ASYNC, "ggml-copy-async") /* (backend, backend, tensor *src, tensor *dst) */       \
    X(GGML_SCHED, "ggml-sched")           /* (ggml_backend_sched_t, struct ggml_cgraph *) */       \
    X(GGML_SET_ASYNC, "ggml-set-async")   /* (backend, tensor *, const void *, offset, size) */

typedef enum {
#define FBR_READER_ENUM(id, name) FBR_READ_##id,
    FBR_READERS(FBR_READER_ENUM)
#undef FBR_READER_ENUM
        FBR_READ_COUNT
} fbr_reader;

/* The optional accessors a row may name (functions of the module that defines its exits). */
#define FBR_ACCESSORS(X)                                                                           \
    X(RANK, "rank")             /* int (const void *tensor) */                                     \
    X(SHAPE, "shape")           /* const int64_t *(const void *tensor) */                          \
    X(DTYPE, "dtype")           /* int (const void *tensor) */                                     \
    X(DTYPE_NAME, "dtype_name") /* const char *(int dtype) */                                      \
    X(STATS, "stats")           /* size_t (entry *, size_t cap): per-op counters */                \
    X(STARTED, "started")       /* uint64_t (void): this thread's fallback began, ns */

typedef enum {
#define FBR_ACCESSOR_ENUM(id, name) FBR_ACC_##id,
    FBR_ACCESSORS(FBR_ACCESSOR_ENUM)
#undef FBR_ACCESSOR_ENUM
        FBR_ACC_COUNT
} fbr_accessor;

typedef struct {
    char symbol[FBR_SYMBOL_LEN];
    fbr_exit_kind kind;
    fbr_reader reader;
} fbr_exit;

typedef struct {
    int n;
    char s[FBR_PATTERNS_MAX][FBR_PATTERN_LEN];
} fbr_patterns;

typedef enum { FBR_FROM_BUILTIN, FBR_FROM_FILE, FBR_FROM_DECLARED } fbr_source;

typedef struct fbr_backend {
    char name[FBR_NAME_LEN];
    fbr_source source;
    fbr_patterns library;
    int nexits;
    fbr_exit exit[FBR_EXITS_MAX];
    fbr_oprule oprule;
    fbr_patterns op; /* prefixes, or the scope's components (at, _ops) */
    fbr_patterns modules;
    fbr_patterns python;
    fbr_patterns sources;
    char accessor[FBR_ACC_COUNT][FBR_PATTERN_LEN]; /* "" where not named */
    bool refuse_throw;
    bool has_refuse;
    long refuse;
} fbr_backend;

/* ---- descriptors ---------------------------------------------------------------------- */

/* Parses one descriptor (len bytes) into out. 0, or -1 with "line N: ..." in err. */
int fbr_backend_parse(const char *text, size_t len, fbr_source source, fbr_backend *out, char *err,
                      size_t errlen);

/* The built-in rows, in their order (vkt, torch, ggml): a static table, parsed once. */
size_t fbr_backend_builtin_count(void);
const fbr_backend *fbr_backend_builtin(size_t i);
/* A built-in row's descriptor text, as compiled in (NULL past the end). */
const char *fbr_backend_builtin_text(size_t i);
/* The exit symbols of the built-in rows, in their order, NULL-ended, read from the
 * descriptors when they were compiled in: known with no row parsed and no call made (the
 * shim's load path, interpose/base/early.h). */
extern const char *const fbr_backend_builtin_exits[];

/* Whether the shim defines exit symbol with its signature (rules/typed.h), so that a reader
 * can read its calls and error mode refuse them; any other exit is reached by redirection. */
bool fbr_exit_typed(const char *symbol);

/* The directives of b the shim cannot act on: read= on an exit the shim has no typed
 * definition of (fbr_exit_typed: it is reached by redirection and counted with bytes unknown),
 * and refuse where no exit of the row has one. Returns how many, with the first described in
 * msg (cap bytes), for a warning where the descriptor is read. */
int fbr_backend_unused(const fbr_backend *b, char *msg, size_t cap);

/* The built-in rows against the shim's typed definitions, both ways: every exit a row names
 * is typed, no row has a directive the shim cannot act on (fbr_backend_unused), and every
 * typed exit is named by a row. Returns how many disagree, each described on a line of msg
 * (cap bytes; what does not fit is left out). Run when the shim is built (rules/meson.build)
 * and by tests/rules. */
int fbr_typed_check(char *msg, size_t cap);

/* A built-in row by name; NULL when there is none. */
const fbr_backend *fbr_backend_named(const char *name);

/* The row in force for backend NAME: the one its process read from a descriptor (a user's
 * file of a built-in row's name replaces that row, as the shim loads them; a dump carries the
 * descriptor of every row not built in), given as from_descriptor, else the built-in row of
 * that name; NULL when neither. The shim, fold and symbolize decide by this one rule. */
const fbr_backend *fbr_row_in_force(const char *name, const fbr_backend *from_descriptor);

/* A row for `LIB:SYMBOL[:op=PREFIX]` (an exit declared by name): name LIB's stem, library
 * LIB*, one exit of kind fallback read none, op library (or prefix PREFIX). 0, or -1 with
 * the reason in err. */
int fbr_backend_declare(const char *spec, fbr_backend *out, char *err, size_t errlen);

/* The row as a descriptor (the format above) in out (cap bytes): parsing it gives the row
 * back. Returns the length the whole text needs, like snprintf. */
int fbr_backend_format(const fbr_backend *b, char *out, size_t cap);

/* Names of the kinds and readers, for descriptors and dumps. */
const char *fbr_exit_kind_name(fbr_exit_kind k);
const char *fbr_reader_name(fbr_reader r);

/* ---- what belongs to a backend -------------------------------------------------------- */

/* Whether s matches a glob of '*' (any run of bytes) and '?' (any one byte). */
bool fbr_glob(const char *pattern, const char *s);

/* Whether the module at path is the backend's library (library patterns, on the base name). */
bool fbr_backend_library(const fbr_backend *b, const char *path);
/* Whether the module at path belongs to the backend (library or modules patterns). */
bool fbr_backend_module(const fbr_backend *b, const char *path);
/* Whether a Python source file belongs to one of the backend's packages. */
bool fbr_backend_python(const fbr_backend *b, const char *file);
/* Whether a native source file is one of the backend's (sources patterns, on the whole path). */
bool fbr_backend_source(const fbr_backend *b, const char *file);
/* Whether a native source file is the user's: known, and neither the backend's nor the
 * system's (rules/attrib.h's fbr_source_is_system). A site's function and the functions it is
 * named as inlined in are the user's. */
bool fbr_backend_user_source(const fbr_backend *b, const char *file);

/* The source files of the functions inlined at native frame i, innermost first (the function
 * the symbol table names last): at most max into files; returns how many (0 when unknown).
 * With max 1, the innermost alone (a line table's answer, cheaper than the whole chain). */
typedef int (*fbr_files_at)(void *ctx, size_t i, const char **files, int max);

/* The op a native frame names under the row's rule (prefix, scope), written into out (cap
 * bytes); false when the frame names none. The library rule is decided by the caller, which
 * knows the frame's module (fbr_attribute does). */
bool fbr_backend_op_of(const fbr_backend *b, const char *symbol, char *out, size_t cap);

/* Attributes a stack recorded by an exit of backend b (rules/attrib.h's frames, innermost
 * first; frame 0 is the exit's own definition): out->op is the op frame under the row's rule
 * (-1 without one: a reader names the op, or no frame does) and its name is written into op
 * (cap bytes, "" without one); the site is searched outward from the op frame (from the exit
 * without one), past the backend's modules and Python packages. A name the reader gave wins
 * over op's, but the site is still found from the op frame. */
/* files (may be NULL) names the functions inlined at a candidate site: a frame whose every
 * function is in the backend's sources is the backend's too, and out->site_inline is the
 * innermost function of the site's frame that is not. */
void fbr_attribute_backend(const fbr_backend *b, size_t n, fbr_native_at at, fbr_files_at files,
                           void *ctx, const fbr_pyframe *py, size_t npy, fbr_attrib *out, char *op,
                           size_t cap);

/* Attributes the stack of the code a thread's work came from (a backward's caller, the code
 * that started the thread; innermost first, every frame a caller): the site is its first frame
 * that is not the backend's, the interpreter's or the system's runtime; at an interpreter, the
 * innermost Python frame outside the backend's packages. out->op is -1. */
void fbr_attribute_caller(const fbr_backend *b, size_t n, fbr_native_at at, fbr_files_at files,
                          void *ctx, const fbr_pyframe *py, size_t npy, fbr_attrib *out);

#endif
