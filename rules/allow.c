/* allow.c - the allow-file grammar of allow.h, parsed into a uthash table. */
#include "allow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "readfile.h"

typedef struct {
    char *op, *reason;
    long line;
    UT_hash_handle hh;
} entry;

struct fbr_allow {
    entry *map; /* in the file's order (uthash keeps insertion order) */
    const fbr_names *prefixes;
};

fbr_allow *fbr_allow_empty(void)
{
    return calloc(1, sizeof(fbr_allow));
}

static bool blank(char c)
{
    return c == ' ' || c == '\t';
}

/* A control character: every byte below 0x20 but the tab, and DEL. */
static bool control(unsigned char c)
{
    return (c < 0x20 && c != '\t') || c == 0x7f;
}

static int add(fbr_allow *a, const char *op, size_t oplen, const char *reason, size_t rlen,
               long line)
{
    entry *e;
    HASH_FIND(hh, a->map, op, oplen, e);
    if (e)
        return 0;
    e = calloc(1, sizeof *e);
    if (!e || !(e->op = strndup(op, oplen)) || !(e->reason = strndup(reason, rlen))) {
        if (e)
            free(e->op);
        free(e);
        return -1;
    }
    e->line = line;
    HASH_ADD_KEYPTR(hh, a->map, e->op, oplen, e);
    return 0;
}

/* One line (without its "\n" or "\r\n"); 0, or -1 with the problem in err. */
static int parse_line(fbr_allow *a, const char *s, size_t n, long no, fbr_allow_warn warn,
                      void *ctx, char *err, size_t errlen)
{
    if (n > FBR_ALLOW_MAX_LINE) {
        snprintf(err, errlen, "line %ld: longer than %d bytes", no, FBR_ALLOW_MAX_LINE);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (control((unsigned char)s[i])) {
            snprintf(err, errlen, "line %ld: control character 0x%02x", no, (unsigned char)s[i]);
            return -1;
        }
    size_t i = 0;
    while (i < n && blank(s[i]))
        i++;
    if (i == n || s[i] == '#')
        return 0;
    size_t op = i;
    while (i < n && !blank(s[i]) && s[i] != '#')
        i++;
    size_t oplen = i - op;
    while (i < n && blank(s[i]))
        i++;
    if (i < n && s[i] != '#') {
        size_t end = i;
        while (end < n && s[end] != '#')
            end++;
        while (end > op && blank(s[end - 1]))
            end--;
        snprintf(err, errlen, "line %ld: expected one op name before '#', got \"%.*s\"", no,
                 (int)(end - op > 80 ? 80 : end - op), s + op);
        return -1;
    }
    if (oplen > 255) {
        snprintf(err, errlen, "line %ld: op name longer than 255 bytes", no);
        return -1;
    }
    const char *reason = "";
    size_t rlen = 0;
    if (i < n) {
        reason = s + i + 1;
        rlen = n - i - 1;
        while (rlen && blank(*reason))
            reason++, rlen--;
        while (rlen && blank(reason[rlen - 1]))
            rlen--;
    }
    if (rlen == 0 && warn) {
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)oplen, s + op);
        warn(ctx, no, name);
    }
    if (add(a, s + op, oplen, reason, rlen, no) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

fbr_allow *fbr_allow_parse(const char *text, size_t len, fbr_allow_warn warn, void *ctx, char *err,
                           size_t errlen)
{
    if (errlen)
        err[0] = '\0';
    fbr_allow *a = fbr_allow_empty();
    if (!a) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    long no = 0;
    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len, n = end - pos;
        no++;
        if (memchr(text + pos, '\0', n)) {
            snprintf(err, errlen, "line %ld: NUL byte (not a text file)", no);
            fbr_allow_free(a);
            return NULL;
        }
        if (n && text[pos + n - 1] == '\r')
            n--;
        if (parse_line(a, text + pos, n, no, warn, ctx, err, errlen) != 0) {
            fbr_allow_free(a);
            return NULL;
        }
        pos = end + 1;
    }
    return a;
}

fbr_allow *fbr_allow_load(const char *path, fbr_allow_warn warn, void *ctx, char *err,
                          size_t errlen, bool *unreadable)
{
    size_t len = 0;
    *unreadable = false;
    char *text = fbr_read_file(path, FBR_ALLOW_MAX_BYTES, &len);
    if (!text) {
        char why[128];
        snprintf(err, errlen, "%s: %s", path,
                 fbr_read_error(errno, FBR_ALLOW_MAX_BYTES, why, sizeof why));
        *unreadable = true;
        return NULL;
    }
    char msg[512];
    fbr_allow *a = fbr_allow_parse(text, len, warn, ctx, msg, sizeof msg);
    free(text);
    if (!a)
        snprintf(err, errlen, "%s: %s", path, msg);
    return a;
}

void fbr_allow_set_prefixes(fbr_allow *a, const fbr_names *prefixes)
{
    if (a)
        a->prefixes = prefixes;
}

static const fbr_names *prefixes_of(const fbr_allow *a)
{
    return a->prefixes ? a->prefixes : &fbr_default_prefixes;
}

/* The entry naming op (rules/opname.h): op as written, its short name, or op with each
 * prefix put before it. */
static entry *find(const fbr_allow *a, const char *op)
{
    entry *e = NULL;
    if (!a || !op)
        return NULL;
    HASH_FIND_STR(a->map, op, e);
    const fbr_names *p = prefixes_of(a);
    const char *s = fbr_op_short(op, p);
    if (!e && s != op)
        HASH_FIND_STR(a->map, s, e);
    for (int i = 0; !e && s == op && i < p->n; i++) {
        char longer[600];
        if ((size_t)snprintf(longer, sizeof longer, "%s%s", p->name[i], op) < sizeof longer &&
            !strcmp(fbr_op_short(longer, p), op))
            HASH_FIND_STR(a->map, longer, e);
    }
    return e;
}

bool fbr_allow_has(const fbr_allow *a, const char *op)
{
    return find(a, op) != NULL;
}

const char *fbr_allow_reason(const fbr_allow *a, const char *op)
{
    entry *e = find(a, op);
    return e ? e->reason : "";
}

size_t fbr_allow_unknown(const fbr_allow *a, const char *const *known, size_t n,
                         fbr_allow_unknown_fn fn, void *ctx)
{
    size_t count = 0;
    for (const entry *e = a ? a->map : NULL; e; e = e->hh.next) {
        if (fbr_op_known(e->op, known, n, prefixes_of(a)))
            continue;
        const char *close[3];
        size_t nc = fbr_op_closest(e->op, known, n, prefixes_of(a), close, 3);
        if (fn)
            fn(ctx, e->line, e->op, close, nc);
        count++;
    }
    return count;
}

size_t fbr_allow_count(const fbr_allow *a)
{
    return a ? HASH_COUNT(a->map) : 0;
}

void fbr_allow_free(fbr_allow *a)
{
    if (!a)
        return;
    entry *e, *tmp;
    HASH_ITER(hh, a->map, e, tmp)
    {
        HASH_DEL(a->map, e);
        free(e->op);
        free(e->reason);
        free(e);
    }
    free(a);
}
