/* jtext.c - validated JSON text walked by its bytes and copied out as jansson writes it.
 *
 * Only what jansson would spell differently goes through jansson: a string with an escape
 * (decoded, then escaped jansson's way), a real (its shortest round-trip digits) and -0 (an
 * integer 0). Everything else is copied in runs, blanks left out.
 */
#include "jtext.h"

#include <stdlib.h>
#include <string.h>

static bool blank(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* A scalar ends at a separator, a closing bracket or a blank. */
static bool delim(char ch)
{
    return ch == ',' || ch == ':' || ch == '}' || ch == ']' || blank(ch);
}

static const char *skip_blank(const char *p, const char *end)
{
    while (p < end && blank(*p))
        p++;
    return p;
}

/* Just past the closing quote of the string whose opening quote is at p (end bounds the
 * text it lies in); *esc is set when it holds an escape. A quote is found with memchr and
 * is the closing one when an even number of backslashes comes before it: most of a dump's
 * bytes are strings, and a loop over each of them was a tenth of the command's time. */
static const char *string_end(const char *p, const char *end, bool *esc)
{
    const char *q = p + 1;
    for (;;) {
        const char *c = memchr(q, '"', (size_t)(end - q));
        if (!c)
            return end; /* not reached on validated text */
        const char *b = c;
        while (b > q && b[-1] == '\\')
            b--;
        if ((c - b) % 2 == 0) {
            *esc = *esc || q > p + 1 || memchr(p + 1, '\\', (size_t)(c - p - 1));
            return c + 1;
        }
        q = c + 1;
    }
}

/* Whether the number token [p, q) is written by jansson as it is: an integer, not -0. */
static bool plain_number(const char *p, const char *q)
{
    if (q - p == 2 && !memcmp(p, "-0", 2))
        return false;
    for (; p < q; p++)
        if (*p == '.' || *p == 'e' || *p == 'E')
            return false;
    return true;
}

static const char *scalar_end(const char *p, const char *end)
{
    while (p < end && !delim(*p))
        p++;
    return p;
}

/* Just past the value that starts at p; *compact is cleared when jansson would write it
 * otherwise (blanks, escapes, reals or -0 in it). */
static const char *value_end(const char *p, const char *end, bool *compact)
{
    bool esc = false;
    const char *q;
    if (*p == '"') {
        q = string_end(p, end, &esc);
        *compact = *compact && !esc;
        return q;
    }
    if (*p != '{' && *p != '[') {
        q = scalar_end(p, end);
        *compact = *compact && (*p == '-' || (*p >= '0' && *p <= '9') ? plain_number(p, q) : true);
        return q;
    }
    size_t depth = 0;
    while (p < end) {
        char ch = *p;
        if (ch == '"') {
            p = string_end(p, end, &esc);
            continue;
        }
        if (ch == '-' || (ch >= '0' && ch <= '9')) {
            q = scalar_end(p, end);
            *compact = *compact && plain_number(p, q);
            p = q;
            continue;
        }
        if (ch == '{' || ch == '[')
            depth++;
        else if ((ch == '}' || ch == ']') && --depth == 0)
            break;
        else if (blank(ch))
            *compact = false;
        p++;
    }
    *compact = *compact && !esc;
    return p < end ? p + 1 : p;
}

fbj_iter fbj_open(fbj_span v)
{
    return (fbj_iter){v.p + 1, v.p + v.n - 1};
}

/* Steps over the blanks and the comma before the next entry; false at the end. */
static bool next(fbj_iter *it)
{
    it->p = skip_blank(it->p, it->end);
    if (it->p < it->end && *it->p == ',')
        it->p = skip_blank(it->p + 1, it->end);
    return it->p < it->end;
}

static fbj_span take(fbj_iter *it)
{
    const char *start = it->p;
    bool compact = true;
    it->p = value_end(start, it->end, &compact);
    return (fbj_span){start, (size_t)(it->p - start), compact};
}

bool fbj_next_member(fbj_iter *it, fbj_span *key, fbj_span *val)
{
    if (!next(it))
        return false;
    *key = take(it);
    it->p = skip_blank(it->p, it->end) + 1; /* the colon */
    it->p = skip_blank(it->p, it->end);
    *val = take(it);
    return true;
}

bool fbj_next_element(fbj_iter *it, fbj_span *val)
{
    if (!next(it))
        return false;
    *val = take(it);
    return true;
}

bool fbj_is(fbj_span s, const char *name)
{
    size_t len = strlen(name);
    if (s.n < 2 || *s.p != '"')
        return false;
    if (!memchr(s.p, '\\', s.n))
        return s.n == len + 2 && !memcmp(s.p + 1, name, len);
    json_t *v = json_loadb(s.p, s.n, JSON_DECODE_ANY, NULL);
    bool is = json_is_string(v) && json_string_length(v) == len &&
              !memcmp(json_string_value(v), name, len);
    json_decref(v);
    return is;
}

void fbj_reserve(fbj_buf *b, size_t n)
{
    if (b->failed || b->n + n <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 1 << 16;
    while (cap < b->n + n)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->failed = true;
        return;
    }
    b->p = p;
    b->cap = cap;
}

void fbj_put(fbj_buf *b, const char *s, size_t n)
{
    if (b->failed || !n)
        return;
    fbj_reserve(b, n);
    if (b->failed)
        return;
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

static int put_cb(const char *s, size_t n, void *data)
{
    fbj_buf *b = data;
    fbj_put(b, s, n);
    return b->failed ? -1 : 0;
}

void fbj_put_json(fbj_buf *b, const json_t *v)
{
    if (json_dump_callback(v, put_cb, b, JSON_COMPACT | JSON_ENCODE_ANY) != 0)
        b->failed = true;
}

bool fbj_utf8(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    while (*u) {
        if (*u < 0x80) {
            u++;
            continue;
        }
        int n = *u >= 0xc2 && *u <= 0xdf   ? 2
                : *u >= 0xe0 && *u <= 0xef ? 3
                : *u >= 0xf0 && *u <= 0xf4 ? 4
                                           : 0;
        if (!n)
            return false;
        unsigned long cp = *u & (0x7f >> n);
        for (int i = 1; i < n; i++) {
            if ((u[i] & 0xc0) != 0x80)
                return false;
            cp = cp << 6 | (u[i] & 0x3f);
        }
        if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
            (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        u += n;
    }
    return true;
}

bool fbj_put_string(fbj_buf *b, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n = 0;
    while (u[n] >= 0x20 && u[n] < 0x7f && u[n] != '"' && u[n] != '\\')
        n++;
    if (!u[n]) { /* printable ASCII: written as it is */
        fbj_put(b, "\"", 1);
        fbj_put(b, s, n);
        fbj_put(b, "\"", 1);
        return true;
    }
    json_t *v = json_string(s);
    if (!v)
        return false;
    fbj_put_json(b, v);
    json_decref(v);
    return true;
}

/* A token jansson spells its own way, through jansson. */
static void put_parsed(fbj_buf *b, const char *p, const char *end)
{
    json_t *v = json_loadb(p, (size_t)(end - p), JSON_DECODE_ANY, NULL);
    if (v)
        fbj_put_json(b, v);
    else
        fbj_put(b, p, (size_t)(end - p)); /* not reached on validated text */
    json_decref(v);
}

void fbj_put_compact(fbj_buf *b, fbj_span v)
{
    if (v.compact) { /* most values of a dump the shim wrote */
        fbj_put(b, v.p, v.n);
        return;
    }
    const char *p = v.p, *end = v.p + v.n, *run = p;
    while (p < end) {
        char ch = *p;
        const char *q;
        if (ch == '"') {
            bool esc = false;
            q = string_end(p, end, &esc);
            if (esc) {
                fbj_put(b, run, (size_t)(p - run));
                put_parsed(b, p, q);
                run = q;
            }
            p = q;
        } else if (blank(ch)) {
            fbj_put(b, run, (size_t)(p - run));
            p = run = skip_blank(p, end);
        } else if (ch == '-' || (ch >= '0' && ch <= '9')) {
            q = scalar_end(p, end);
            if (!plain_number(p, q)) {
                fbj_put(b, run, (size_t)(p - run));
                put_parsed(b, p, q);
                run = q;
            }
            p = q;
        } else {
            p++;
        }
    }
    fbj_put(b, run, (size_t)(p - run));
}

void fbj_buf_free(fbj_buf *b)
{
    free(b->p);
    *b = (fbj_buf){0};
}
