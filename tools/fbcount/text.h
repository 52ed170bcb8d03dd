/* text.h - cutting UTF-8 text to fit a column or a buffer without splitting a character. */
#ifndef FBCOUNT_TEXT_H
#define FBCOUNT_TEXT_H

#include <stddef.h>

/* The largest length <= max of a prefix of s that ends on a character boundary. */
size_t fbx_utf8_prefix(const char *s, size_t max);

/* Truncates buf in place to at most max bytes on a character boundary. */
void fbx_utf8_truncate(char *buf, size_t max);

#endif
