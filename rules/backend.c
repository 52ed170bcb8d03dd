/* backend.c - see backend.h. No allocation: rows live in caller-owned or static storage, so
 * the shim can read them in a process that may never use a backend. */
#include "attrib.h"
#include "backend.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends.h" /* generated: the built-in descriptors' texts */
#include "typed.h"

/* Each list's names, in its enum's order. */
#define FBR_NAME_OF(id, name) name,
static const char *const kind_names[] = {FBR_EXIT_KINDS(FBR_NAME_OF)};
static const char *const oprule_names[] = {FBR_OPRULES(FBR_NAME_OF)};
static const char *const reader_names[] = {FBR_READERS(FBR_NAME_OF)};
static const char *const accessor_names[] = {FBR_ACCESSORS(FBR_NAME_OF)};
#undef FBR_NAME_OF

#define COUNT(a) (sizeof a / sizeof *a)

const char *fbr_exit_kind_name(fbr_exit_kind k)
{
    return (unsigned)k < COUNT(kind_names) ? kind_names[k] : "?";
}

const char *fbr_reader_name(fbr_reader r)
{
    return (unsigned)r < COUNT(reader_names) ? reader_names[r] : "?";
}

static int lookup(const char *const *names, size_t n, const char *word)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], word))
            return (int)i;
    return -1;
}

/* ---- the parser: a directive a line, each with its own reader of the line's words ------ */

#define MAX_WORDS 32

typedef struct {
    fbr_backend *b;
    char *err;
    size_t errlen;
    long line;
    unsigned seen; /* bit per directive: a single-valued directive may appear once */
} parse_ctx;

__attribute__((format(printf, 2, 3))) static int fail(parse_ctx *p, const char *fmt, ...)
{
    int n = snprintf(p->err, p->errlen, "line %ld: ", p->line);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < p->errlen)
        vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static int copy_word(parse_ctx *p, char *dst, size_t cap, const char *word, const char *what)
{
    size_t len = strlen(word);
    if (len >= cap)
        return fail(p, "%s '%.40s...' is longer than %zu bytes", what, word, cap - 1);
    memcpy(dst, word, len + 1);
    return 0;
}

static int add_patterns(parse_ctx *p, fbr_patterns *to, char **w, int n, const char *what)
{
    if (n == 0)
        return fail(p, "%s needs at least one value", what);
    for (int i = 0; i < n; i++) {
        if (to->n == FBR_PATTERNS_MAX)
            return fail(p, "more than %d %s values", FBR_PATTERNS_MAX, what);
        if (copy_word(p, to->s[to->n], FBR_PATTERN_LEN, w[i], what))
            return -1;
        to->n++;
    }
    return 0;
}

static int d_name(parse_ctx *p, char **w, int n)
{
    if (n != 1)
        return fail(p, "name takes one word");
    size_t len = strlen(w[0]);
    if (len == 0 || len >= FBR_NAME_LEN ||
        strspn(w[0], "abcdefghijklmnopqrstuvwxyz0123456789_.-") != len)
        return fail(p, "name '%.40s' is not 1..%d of a-z, 0-9, '_', '.', '-'", w[0],
                    FBR_NAME_LEN - 1);
    memcpy(p->b->name, w[0], len + 1);
    return 0;
}

static int d_library(parse_ctx *p, char **w, int n)
{
    return add_patterns(p, &p->b->library, w, n, "library");
}

static int d_modules(parse_ctx *p, char **w, int n)
{
    return add_patterns(p, &p->b->modules, w, n, "modules");
}

static int d_python(parse_ctx *p, char **w, int n)
{
    return add_patterns(p, &p->b->python, w, n, "python");
}

static int d_sources(parse_ctx *p, char **w, int n)
{
    return add_patterns(p, &p->b->sources, w, n, "sources");
}

static int d_exit(parse_ctx *p, char **w, int n)
{
    fbr_backend *b = p->b;
    if (n < 2 || n > 3)
        return fail(p, "exit takes SYMBOL KIND [read=READER]");
    if (b->nexits == FBR_EXITS_MAX)
        return fail(p, "more than %d exits", FBR_EXITS_MAX);
    fbr_exit *e = &b->exit[b->nexits];
    if (copy_word(p, e->symbol, sizeof e->symbol, w[0], "exit symbol"))
        return -1;
    int k = lookup(kind_names, COUNT(kind_names), w[1]);
    if (k < 0)
        return fail(p, "exit kind '%.40s' is not fallback, host, transfer or graph", w[1]);
    e->kind = (fbr_exit_kind)k;
    e->reader = FBR_READ_NONE;
    if (n == 3) {
        int r =
            strncmp(w[2], "read=", 5) ? -1 : lookup(reader_names, COUNT(reader_names), w[2] + 5);
        if (r < 0)
            return fail(p,
                        "'%.40s' is not read=READER with a known reader (none, vkt, torch, "
                        "ggml-graph, ggml-copy, ggml-copy-async)",
                        w[2]);
        e->reader = (fbr_reader)r;
    }
    for (int i = 0; i < b->nexits; i++)
        if (!strcmp(b->exit[i].symbol, e->symbol))
            return fail(p, "exit %.60s is named twice", e->symbol);
    b->nexits++;
    return 0;
}

static int d_op(parse_ctx *p, char **w, int n)
{
    int r = n ? lookup(oprule_names, COUNT(oprule_names), w[0]) : -1;
    if (r < 0)
        return fail(p, "op takes prefix P..., scope A::B, library or reader");
    p->b->oprule = (fbr_oprule)r;
    p->b->op.n = 0;
    if (r == FBR_OPRULE_PREFIX)
        return add_patterns(p, &p->b->op, w + 1, n - 1, "op prefix");
    if (r == FBR_OPRULE_SCOPE) {
        if (n != 2)
            return fail(p, "op scope takes one C++ scope, e.g. at::_ops");
        /* The scope's components, for matching mangled nested names. */
        char *s = w[1];
        for (char *sep; s; s = sep ? sep + 2 : NULL) {
            sep = strstr(s, "::");
            if (sep)
                *sep = '\0';
            if (!*s)
                return fail(p, "op scope '%s' has an empty component", w[1]);
            char *one[1] = {s};
            if (add_patterns(p, &p->b->op, one, 1, "op scope"))
                return -1;
        }
        return 0;
    }
    return n == 1 ? 0 : fail(p, "op %s takes nothing more", oprule_names[r]);
}

static int d_accessor(parse_ctx *p, char **w, int n)
{
    if (n == 0)
        return fail(p, "accessor takes NAME=SYMBOL...");
    for (int i = 0; i < n; i++) {
        char *eq = strchr(w[i], '=');
        if (!eq)
            return fail(p, "accessor '%.40s' is not NAME=SYMBOL", w[i]);
        *eq = '\0';
        int a = lookup(accessor_names, COUNT(accessor_names), w[i]);
        if (a < 0)
            return fail(p,
                        "unknown accessor '%.40s' (rank, shape, dtype, dtype_name, stats, started)",
                        w[i]);
        if (copy_word(p, p->b->accessor[a], FBR_PATTERN_LEN, eq + 1, "accessor symbol"))
            return -1;
    }
    return 0;
}

static int d_refuse(parse_ctx *p, char **w, int n)
{
    if (n != 1)
        return fail(p, "refuse takes an integer or throw");
    p->b->has_refuse = true;
    if (!strcmp(w[0], "throw")) {
        p->b->refuse_throw = true;
        return 0;
    }
    char *end;
    long v = strtol(w[0], &end, 10);
    if (*end || end == w[0])
        return fail(p, "refuse '%.40s' is not an integer or throw", w[0]);
    p->b->refuse = v;
    return 0;
}

typedef struct {
    const char *word;
    int (*read)(parse_ctx *p, char **w, int n);
    bool once;
} directive;

static const directive directives[] = {
    {"name", d_name, true},          {"library", d_library, false},
    {"exit", d_exit, false},         {"op", d_op, true},
    {"modules", d_modules, false},   {"python", d_python, false},
    {"accessor", d_accessor, false}, {"refuse", d_refuse, true},
    {"sources", d_sources, false},
};

static int directive_line(parse_ctx *p, char *line)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    char *w[MAX_WORDS];
    int n = 0;
    char *save = NULL; /* strtok_r: the shim parses inside the program, whose own strtok loop
                        * must not lose its place */
    for (char *s = strtok_r(line, " \t\r", &save); s; s = strtok_r(NULL, " \t\r", &save)) {
        if (n == MAX_WORDS)
            return fail(p, "more than %d words", MAX_WORDS);
        w[n++] = s;
    }
    if (n == 0)
        return 0;
    for (size_t i = 0; i < COUNT(directives); i++) {
        if (strcmp(w[0], directives[i].word))
            continue;
        if (directives[i].once && (p->seen & (1u << i)))
            return fail(p, "%s is given twice", w[0]);
        p->seen |= 1u << i;
        return directives[i].read(p, w + 1, n - 1);
    }
    return fail(p,
                "unknown directive '%.40s' (name, library, exit, op, modules, python, sources, "
                "accessor, refuse)",
                w[0]);
}

int fbr_backend_parse(const char *text, size_t len, fbr_source source, fbr_backend *out, char *err,
                      size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->source = source;
    out->oprule = FBR_OPRULE_LIBRARY;
    parse_ctx p = {out, err, errlen, 0, 0};
    if (len > FBR_DESCRIPTOR_MAX)
        return fail(&p, "the descriptor is larger than %d bytes", FBR_DESCRIPTOR_MAX);
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
        char line[1024];
        p.line++;
        if (n >= sizeof line)
            return fail(&p, "longer than %zu bytes", sizeof line - 1);
        memcpy(line, text + at, n);
        line[n] = '\0';
        if (memchr(line, '\0', n))
            return fail(&p, "holds a NUL byte");
        if (directive_line(&p, line))
            return -1;
        at += n + 1;
    }
    p.line = 0;
    if (!out->name[0])
        return snprintf(err, errlen, "no name"), -1;
    if (!out->library.n)
        return snprintf(err, errlen, "no library"), -1;
    if (!out->nexits)
        return snprintf(err, errlen, "no exit"), -1;
    if (out->oprule == FBR_OPRULE_PREFIX && !out->op.n)
        return snprintf(err, errlen, "op prefix without a prefix"), -1;
    return 0;
}

/* ---- the built-in rows ---------------------------------------------------------------- */

static fbr_backend builtin[COUNT(fbr_builtin_descriptors)];
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

static void parse_builtin(void)
{
    for (size_t i = 0; i < COUNT(builtin); i++) {
        char err[256];
        const char *t = fbr_builtin_descriptors[i];
        /* Checked at build time (tests/rules): a built-in row that does not parse is a bug. */
        if (fbr_backend_parse(t, strlen(t), FBR_FROM_BUILTIN, &builtin[i], err, sizeof err))
            builtin[i].name[0] = '\0';
    }
}

size_t fbr_backend_builtin_count(void)
{
    return COUNT(builtin);
}

const fbr_backend *fbr_backend_builtin(size_t i)
{
    pthread_once(&builtin_once, parse_builtin);
    return i < COUNT(builtin) && builtin[i].name[0] ? &builtin[i] : NULL;
}

const char *fbr_backend_builtin_text(size_t i)
{
    return i < COUNT(builtin) ? fbr_builtin_descriptors[i] : NULL;
}

const fbr_backend *fbr_backend_named(const char *name)
{
    for (size_t i = 0; name && i < COUNT(builtin); i++) {
        const fbr_backend *b = fbr_backend_builtin(i);
        if (b && !strcmp(b->name, name))
            return b;
    }
    return NULL;
}

bool fbr_exit_typed(const char *symbol)
{
#define FBR_TYPED_IS(id, fn, sym, role)                                                            \
    if (role == FBR_TYPED_EXIT && !strcmp(symbol, sym))                                            \
        return true;
    FBR_TYPED(FBR_TYPED_IS)
#undef FBR_TYPED_IS
    return false;
}

int fbr_backend_unused(const fbr_backend *b, char *msg, size_t cap)
{
    int n = 0;
    bool any_typed = false;
    if (cap)
        msg[0] = '\0';
    for (int i = 0; i < b->nexits; i++) {
        const fbr_exit *e = &b->exit[i];
        bool typed = fbr_exit_typed(e->symbol);
        any_typed |= typed;
        if (!typed && e->reader != FBR_READ_NONE && n++ == 0)
            snprintf(msg, cap,
                     "exit %s: read=%s is not used: the shim has no typed definition "
                     "of %s, so its calls are counted with bytes unknown",
                     e->symbol, fbr_reader_name(e->reader), e->symbol);
    }
    if ((b->has_refuse || b->refuse_throw) && !any_typed && n++ == 0)
        snprintf(msg, cap,
                 "refuse is not used: no exit of the row has a typed definition in "
                 "the shim, so error mode lets its calls run");
    return n;
}

/* Appends one line to msg (cap bytes) while it fits. */
static void say(char *msg, size_t cap, const char *fmt, ...)
{
    size_t used = strnlen(msg, cap);
    if (used + 1 >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg + used, cap - used, fmt, ap);
    va_end(ap);
    if (n >= 0 && used + (size_t)n + 1 < cap)
        strcat(msg, "\n");
}

/* Whether a built-in row names symbol as an exit. */
static bool named_by_a_row(const char *symbol)
{
    for (size_t i = 0; i < fbr_backend_builtin_count(); i++)
        for (int e = 0; e < fbr_backend_builtin(i)->nexits; e++)
            if (!strcmp(fbr_backend_builtin(i)->exit[e].symbol, symbol))
                return true;
    return false;
}

int fbr_typed_check(char *msg, size_t cap)
{
    int n = 0;
    char why[512];
    if (cap)
        msg[0] = '\0';
    for (size_t i = 0; i < fbr_backend_builtin_count(); i++) {
        const fbr_backend *b = fbr_backend_builtin(i);
        for (int e = 0; b && e < b->nexits; e++)
            if (!fbr_exit_typed(b->exit[e].symbol) && ++n)
                say(msg, cap,
                    "%s.backend: exit %s has no typed definition in "
                    "interpose/hooks/exits.c (rules/typed.h)",
                    b->name, b->exit[e].symbol);
        if (b && fbr_backend_unused(b, why, sizeof why) > 0 && ++n)
            say(msg, cap, "%s.backend: %s", b->name, why);
    }
#define FBR_TYPED_NAMED(id, fn, sym, role)                                                         \
    if (role == FBR_TYPED_EXIT && !named_by_a_row(sym) && ++n)                                     \
        say(msg, cap, "exits.c types %s (rules/typed.h), which no descriptor names", #fn);
    FBR_TYPED(FBR_TYPED_NAMED)
#undef FBR_TYPED_NAMED
    return n;
}

const fbr_backend *fbr_row_in_force(const char *name, const fbr_backend *from_descriptor)
{
    return from_descriptor ? from_descriptor : fbr_backend_named(name);
}

int fbr_backend_declare(const char *spec, fbr_backend *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    char buf[FBR_SYMBOL_LEN + 2 * FBR_PATTERN_LEN + 8];
    if (!spec || strlen(spec) >= sizeof buf)
        return snprintf(err, errlen, "not LIB:SYMBOL[:op=PREFIX]"), -1;
    strcpy(buf, spec);
    char shown[84]; /* the spec as a message quotes it: a control byte shown as '?' */
    size_t sn = 0;
    for (; spec[sn] && sn + 1 < sizeof shown; sn++)
        shown[sn] = (unsigned char)spec[sn] < ' ' || spec[sn] == 0x7f ? '?' : spec[sn];
    shown[sn] = '\0';
    /* Its parts become words of a descriptor (a dump carries it): no blank, no control byte,
     * no '#', or the row would not read back as itself. */
    for (const unsigned char *c = (const unsigned char *)buf; *c; c++)
        if (*c <= ' ' || *c == 0x7f || *c == '#')
            return snprintf(err, errlen, "'%s': a blank, '#' or control character in it", shown),
                   -1;
    char *lib = buf, *sym = strchr(buf, ':');
    if (!sym || sym == lib || !sym[1])
        return snprintf(err, errlen, "'%s' is not LIB:SYMBOL[:op=PREFIX]", shown), -1;
    *sym++ = '\0';
    /* A C++ symbol holds no ':' when mangled; ":op=" starts the option. */
    char *opt = strstr(sym, ":op=");
    if (opt)
        *opt = '\0';
    if (strchr(sym, ':') || !*sym)
        return snprintf(err, errlen, "'%s': SYMBOL must be the (mangled) name, without ':'", shown),
               -1;
    if (strlen(sym) >= FBR_SYMBOL_LEN || strlen(lib) + 2 > FBR_PATTERN_LEN)
        return snprintf(err, errlen, "'%s': a name is too long", shown), -1;
    out->source = FBR_FROM_DECLARED;
    /* The row is named after the library's stem: libfoo.so.1 -> foo. */
    const char *file = fbr_base_name(lib), *base = file;
    if (!strncmp(base, "lib", 3) && base[3])
        base += 3;
    size_t stem = strcspn(base, ".");
    size_t k = 0;
    for (size_t i = 0; i < stem && k + 1 < FBR_NAME_LEN; i++) {
        char c = base[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
            c = '_';
        out->name[k++] = c;
    }
    if (!k)
        return snprintf(err, errlen, "'%s': LIB names no library", shown), -1;
    snprintf(out->library.s[0], FBR_PATTERN_LEN, "%s*", file);
    out->library.n = 1;
    snprintf(out->exit[0].symbol, FBR_SYMBOL_LEN, "%s", sym);
    out->exit[0].kind = FBR_EXIT_FALLBACK;
    out->exit[0].reader = FBR_READ_NONE;
    out->nexits = 1;
    out->oprule = FBR_OPRULE_LIBRARY;
    if (opt) {
        opt += 4;
        if (!*opt || strlen(opt) >= FBR_PATTERN_LEN)
            return snprintf(err, errlen, "'%s': op= needs a prefix", shown), -1;
        out->oprule = FBR_OPRULE_PREFIX;
        snprintf(out->op.s[0], FBR_PATTERN_LEN, "%s", opt);
        out->op.n = 1;
    }
    return 0;
}

/* ---- membership ----------------------------------------------------------------------- */

/* A glob of '*' (any run of bytes) and '?' (one byte), matched byte by byte: fnmatch(3)
 * converts to wide characters under a UTF-8 locale, an allocation per frame of every stack. */
bool fbr_glob(const char *pattern, const char *s)
{
    const char *star = NULL, *resume = NULL;
    while (*s) {
        if (*pattern == '*') {
            star = pattern++;
            resume = s;
        } else if (*pattern == '?' || *pattern == *s) {
            pattern++;
            s++;
        } else if (star) {
            pattern = star + 1;
            s = ++resume;
        } else {
            return false;
        }
    }
    while (*pattern == '*')
        pattern++;
    return !*pattern;
}

static bool matches(const fbr_patterns *p, const char *path)
{
    if (!path)
        return false;
    const char *b = fbr_base_name(path);
    for (int i = 0; i < p->n; i++)
        if (fbr_glob(p->s[i], b))
            return true;
    return false;
}

bool fbr_backend_library(const fbr_backend *b, const char *path)
{
    return matches(&b->library, path);
}

bool fbr_backend_module(const fbr_backend *b, const char *path)
{
    return matches(&b->library, path) || matches(&b->modules, path);
}

bool fbr_backend_source(const fbr_backend *b, const char *file)
{
    for (int i = 0; file && i < b->sources.n; i++)
        if (fbr_glob(b->sources.s[i], file))
            return true;
    return false;
}

bool fbr_backend_user_source(const fbr_backend *b, const char *file)
{
    return file && !fbr_backend_source(b, file) && !fbr_source_is_system(file);
}

bool fbr_backend_python(const fbr_backend *b, const char *file)
{
    fbr_names pk = {.n = b->python.n};
    for (int i = 0; i < b->python.n; i++)
        pk.name[i] = b->python.s[i];
    return fbr_py_in_package(file, &pk);
}

/* ---- op names ------------------------------------------------------------------------- */

/* The components of a mangled nested name (_ZN[K]2at4_ops8gelu_out4callE...), up to max;
 * each as (start, length) into symbol. Returns how many were read. */
static int nested(const char *symbol, const char *start[], size_t len[], int max)
{
    if (strncmp(symbol, "_ZN", 3))
        return 0;
    const char *s = symbol + 3;
    while (*s == 'K' || *s == 'V' || *s == 'r' || *s == 'R' || *s == 'O')
        s++;
    int n = 0;
    while (n < max && *s >= '1' && *s <= '9') {
        size_t l = 0;
        while (*s >= '0' && *s <= '9' && l < 4096)
            l = l * 10 + (size_t)(*s++ - '0');
        if (strnlen(s, l) < l)
            break;
        start[n] = s;
        len[n++] = l;
        s += l;
    }
    return n;
}

bool fbr_backend_op_of(const fbr_backend *b, const char *symbol, char *out, size_t cap)
{
    if (!symbol || !cap)
        return false;
    if (b->oprule == FBR_OPRULE_PREFIX) {
        for (int i = 0; i < b->op.n; i++)
            if (!strncmp(symbol, b->op.s[i], strlen(b->op.s[i]))) {
                snprintf(out, cap, "%s", symbol);
                return true;
            }
        return false;
    }
    if (b->oprule != FBR_OPRULE_SCOPE)
        return false;
    const char *st[FBR_PATTERNS_MAX + 2];
    size_t ln[FBR_PATTERNS_MAX + 2];
    int n = nested(symbol, st, ln, b->op.n + 2);
    /* The scope's components, then the op's, then the function inside it (call, redispatch). */
    if (n < b->op.n + 2)
        return false;
    for (int i = 0; i < b->op.n; i++)
        if (ln[i] != strlen(b->op.s[i]) || strncmp(st[i], b->op.s[i], ln[i]))
            return false;
    snprintf(out, cap, "%.*s", (int)ln[b->op.n], st[b->op.n]);
    return true;
}

/* ---- attribution ---------------------------------------------------------------------- */

static long op_frame(const fbr_backend *b, size_t n, fbr_native_at at, void *ctx, char *op,
                     size_t cap)
{
    for (size_t i = 0; i < n; i++) {
        const fbr_native *f = at(ctx, i);
        if (b->oprule == FBR_OPRULE_LIBRARY) {
            /* Frame 0 is the exit itself: the op is the innermost frame inside its library
             * that called it, else the exit. */
            if (i > 0 && fbr_backend_library(b, f->path) && f->symbol) {
                snprintf(op, cap, "%s", f->symbol);
                return (long)i;
            }
            continue;
        }
        if (fbr_backend_op_of(b, f->symbol, op, cap))
            return (long)i;
    }
    if (b->oprule == FBR_OPRULE_LIBRARY && n && at(ctx, 0)->symbol) {
        snprintf(op, cap, "%s", at(ctx, 0)->symbol);
        return 0;
    }
    return -1;
}

/* The innermost function inlined at frame i that is not the backend's; -1 when all are. */
static int user_inline(const fbr_backend *b, fbr_files_at files, void *ctx, size_t i)
{
    const char *f[16];
    /* The innermost function's file alone first (a line table's lookup): only where it is
     * the backend's is the whole inline chain read (its debug information's scopes). */
    if (!files || !b->sources.n || (files(ctx, i, f, 1) == 1 && !fbr_backend_source(b, f[0])))
        return 0;
    int n = files(ctx, i, f, 16);
    for (int k = 0; k < n; k++)
        if (!fbr_backend_source(b, f[k]))
            return k;
    return n ? -1 : 0;
}

void fbr_attribute_backend(const fbr_backend *b, size_t n, fbr_native_at at, fbr_files_at files,
                           void *ctx, const fbr_pyframe *py, size_t npy, fbr_attrib *out, char *op,
                           size_t cap)
{
    out->op = out->site = out->py_site = -1;
    out->site_inline = 0;
    if (cap)
        op[0] = '\0';
    if (n == 0)
        return;
    out->op = op_frame(b, n, at, ctx, op, cap);
    size_t from = out->op >= 0 ? (size_t)out->op : 0;
    long op_mod = at(ctx, from)->module, exit_mod = at(ctx, 0)->module;
    for (size_t j = from + 1; j < n; j++) {
        const fbr_native *f = at(ctx, j);
        if (f->module == op_mod || f->module == exit_mod || fbr_backend_module(b, f->path))
            continue;
        int k = user_inline(b, files, ctx, j);
        if (k < 0)
            continue; /* the backend's header code, compiled into the caller's module */
        out->site = (long)j;
        out->site_inline = k;
        if (fbr_module_is_interpreter(f->path))
            for (size_t k = 0; k < npy; k++)
                if (!fbr_backend_python(b, py[k].file)) {
                    out->py_site = (long)k;
                    break;
                }
        return;
    }
}

/* The innermost function inlined at frame i whose source is neither the backend's nor the
 * system's (a standard header's template, std::thread's constructor), -1 where every one is;
 * 0 where the files are not known. */
static int caller_inline(const fbr_backend *b, fbr_files_at files, void *ctx, size_t i)
{
    const char *f[16];
    int n = files ? files(ctx, i, f, 16) : 0;
    for (int k = 0; k < n; k++)
        if (fbr_backend_user_source(b, f[k]))
            return k;
    return n ? -1 : 0;
}

void fbr_attribute_caller(const fbr_backend *b, size_t n, fbr_native_at at, fbr_files_at files,
                          void *ctx, const fbr_pyframe *py, size_t npy, fbr_attrib *out)
{
    out->op = out->site = out->py_site = -1;
    out->site_inline = 0;
    for (size_t j = 0; j < n; j++) {
        const fbr_native *f = at(ctx, j);
        bool interp = fbr_module_is_interpreter(f->path);
        if (interp) {
            for (size_t k = 0; k < npy; k++)
                if (!fbr_backend_python(b, py[k].file)) {
                    out->site = (long)j;
                    out->py_site = (long)k;
                    return;
                }
            continue; /* the backend's own Python (torch/autograd) called the backward */
        }
        if (f->module < 0 || fbr_backend_module(b, f->path) || fbr_module_is_system(f->path) ||
            fbr_function_is_runtime(f->symbol))
            continue;
        int k = caller_inline(b, files, ctx, j);
        if (k < 0)
            continue;
        out->site = (long)j;
        out->site_inline = k;
        return;
    }
    /* No native frame reached the interpreter (a stack cut short): Python's own, if any. */
    for (size_t k = 0; k < npy; k++)
        if (!fbr_backend_python(b, py[k].file)) {
            out->py_site = (long)k;
            return;
        }
}

/* ---- a row as text ------------------------------------------------------------------- */

typedef struct {
    char *out;
    size_t cap, len;
} text;

__attribute__((format(printf, 2, 3))) static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->len < t->cap ? t->out + t->len : NULL,
                      t->len < t->cap ? t->cap - t->len : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->len += (size_t)n;
}

static void put_list(text *t, const char *directive, const fbr_patterns *p)
{
    if (!p->n)
        return;
    put(t, "%s", directive);
    for (int i = 0; i < p->n; i++)
        put(t, " %s", p->s[i]);
    put(t, "\n");
}

int fbr_backend_format(const fbr_backend *b, char *out, size_t cap)
{
    text t = {out, cap, 0};
    if (cap)
        out[0] = '\0';
    put(&t, "name %s\n", b->name);
    put_list(&t, "library", &b->library);
    for (int i = 0; i < b->nexits; i++)
        put(&t, "exit %s %s read=%s\n", b->exit[i].symbol, fbr_exit_kind_name(b->exit[i].kind),
            fbr_reader_name(b->exit[i].reader));
    if (b->oprule == FBR_OPRULE_SCOPE) {
        put(&t, "op scope ");
        for (int i = 0; i < b->op.n; i++)
            put(&t, "%s%s", i ? "::" : "", b->op.s[i]);
        put(&t, "\n");
    } else {
        put(&t, "op %s", oprule_names[b->oprule]);
        for (int i = 0; b->oprule == FBR_OPRULE_PREFIX && i < b->op.n; i++)
            put(&t, " %s", b->op.s[i]);
        put(&t, "\n");
    }
    put_list(&t, "modules", &b->modules);
    put_list(&t, "python", &b->python);
    put_list(&t, "sources", &b->sources);
    for (int a = 0; a < FBR_ACC_COUNT; a++)
        if (b->accessor[a][0])
            put(&t, "accessor %s=%s\n", accessor_names[a], b->accessor[a]);
    if (b->refuse_throw)
        put(&t, "refuse throw\n");
    else if (b->has_refuse)
        put(&t, "refuse %ld\n", b->refuse);
    return (int)t.len;
}
