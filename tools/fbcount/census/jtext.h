/* jtext.h - JSON text that a reader has validated already, read and rewritten as text.
 *
 * `fbcount symbolize` changes a few members of each stack of a dump of hundreds of
 * thousands; holding the dump as jansson values to write it back was most of its time. Here
 * a validated value is walked by its bytes (members, elements, their spans) and copied out
 * in the compact form jansson's JSON_COMPACT writes, byte for byte: blanks dropped, and the
 * few tokens jansson spells otherwise than they may be written (strings with escapes, reals,
 * -0) round-tripped through jansson itself. The text must be valid JSON (fbd_load_buffer
 * has said so): these functions do not check it.
 */
#ifndef FBCOUNT_JTEXT_H
#define FBCOUNT_JTEXT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* A value's bytes within the text: from its first byte to just past its last, and whether
 * they are what jansson's compact form of it would be (set by the iterators). */
typedef struct {
    const char *p;
    size_t n;
    bool compact;
} fbj_span;

/* The members of an object or the elements of an array, in the order written. */
typedef struct {
    const char *p, *end;
} fbj_iter;

/* An iterator over the object or array v (a span that starts with '{' or '['). */
fbj_iter fbj_open(fbj_span v);

/* The next member of an object (its key's span, quotes included, and its value's); false
 * after the last. */
bool fbj_next_member(fbj_iter *it, fbj_span *key, fbj_span *val);

/* The next element of an array; false after the last. */
bool fbj_next_element(fbj_iter *it, fbj_span *val);

/* Whether the string at s (quotes included) says name, escapes decoded. */
bool fbj_is(fbj_span s, const char *name);

/* An output buffer that grows; failed is set once memory runs out, and later puts do
 * nothing. */
typedef struct {
    char *p;
    size_t n, cap;
    bool failed;
} fbj_buf;

void fbj_put(fbj_buf *b, const char *s, size_t n);

/* Room for n more bytes, so that a buffer of a known size is not copied as it grows. */
void fbj_reserve(fbj_buf *b, size_t n);

/* v as jansson writes it with JSON_COMPACT (any value, scalars too). */
void fbj_put_json(fbj_buf *b, const json_t *v);

/* Whether s is UTF-8 as jansson takes it (no overlong forms, surrogates or code points
 * beyond U+10FFFF). */
bool fbj_utf8(const char *s);

/* s as a JSON string, as jansson writes it; false (and nothing written) when s is not
 * valid UTF-8, which jansson refuses to hold. */
bool fbj_put_string(fbj_buf *b, const char *s);

/* The value at v in jansson's compact form: what json_loadb then json_dumps(JSON_COMPACT)
 * would write, without building the values. */
void fbj_put_compact(fbj_buf *b, fbj_span v);

void fbj_buf_free(fbj_buf *b);

#endif
