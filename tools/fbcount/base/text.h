/* text.h - text for terminals: cutting UTF-8 without splitting a character, and escaping
 * what a terminal would obey (a name in a dump is data, never a control sequence). */
#ifndef FBCOUNT_TEXT_H
#define FBCOUNT_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* The largest length <= max of a prefix of s that ends on a character boundary. */
size_t fbx_utf8_prefix(const char *s, size_t max);

/* Truncates buf in place to at most max bytes on a character boundary. */
void fbx_utf8_truncate(char *buf, size_t max);

/* Copies s into buf with control characters (C0, DEL, and the C1 range U+0080-U+009F)
 * written as \xHH and a backslash as \\, so no name can move the cursor, ring the bell or
 * forge a line. space_too also escapes spaces (\x20), for --raw columns. Returns buf; a
 * result that does not fit is cut on a character boundary. */
const char *fbx_escape(const char *s, char *buf, size_t len, int space_too);

/* Writes s to out escaped as by fbx_escape. */
void fbx_put_escaped(FILE *out, const char *s);

/* Columns s takes on a terminal: one per character (UTF-8 sequences count once). */
size_t fbx_text_width(const char *s);

/* The byte length of the longest prefix of s that takes at most cols columns. */
size_t fbx_prefix_cols(const char *s, size_t cols);

#endif
