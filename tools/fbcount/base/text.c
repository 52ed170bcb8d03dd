/* text.c - UTF-8 aware truncation and escaping. Dump strings are valid UTF-8 (jansson
 * checks), so a cut only has to avoid landing on a continuation byte. */
#include "text.h"

#include <stdbool.h>
#include <string.h>

size_t fbx_utf8_prefix(const char *s, size_t max)
{
    size_t len = strlen(s);
    if (len <= max)
        return len;
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
        max--;
    return max;
}

void fbx_utf8_truncate(char *buf, size_t max)
{
    buf[fbx_utf8_prefix(buf, max)] = '\0';
}

const char *fbx_escape(const char *s, char *buf, size_t len, int space_too)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    if (!len)
        return buf;
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        char tmp[8];
        size_t n = 0;
        bool c1 = p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F;
        if (*p < 0x20 || *p == 0x7F || (space_too && *p == ' ')) {
            tmp[n++] = '\\', tmp[n++] = 'x', tmp[n++] = hex[*p >> 4], tmp[n++] = hex[*p & 15];
        } else if (c1) {
            /* The whole sequence escaped, so the cut below never splits it. */
            tmp[n++] = '\\', tmp[n++] = 'x', tmp[n++] = 'c', tmp[n++] = '2';
            tmp[n++] = '\\', tmp[n++] = 'x', tmp[n++] = hex[p[1] >> 4], tmp[n++] = hex[p[1] & 15];
            p++;
        } else if (*p == '\\') {
            tmp[n++] = '\\', tmp[n++] = '\\';
        } else {
            tmp[n++] = (char)*p;
        }
        if (o + n >= len)
            break;
        memcpy(buf + o, tmp, n);
        o += n;
    }
    buf[o] = '\0';
    /* A cut inside a multibyte character leaves a partial sequence at the end. */
    size_t keep = o;
    while (keep > 0 && ((unsigned char)buf[keep - 1] & 0xC0) == 0x80)
        keep--;
    if (keep > 0 && ((unsigned char)buf[keep - 1] & 0xC0) == 0xC0) {
        unsigned char lead = (unsigned char)buf[keep - 1];
        size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
        if (o - (keep - 1) < need)
            buf[keep - 1] = '\0';
    }
    return buf;
}

void fbx_put_escaped(FILE *out, const char *s)
{
    char buf[4096 * 4 + 1];
    fputs(fbx_escape(s, buf, sizeof buf, 0), out);
}

size_t fbx_text_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

size_t fbx_prefix_cols(const char *s, size_t cols)
{
    size_t i = 0, w = 0;
    while (s[i]) {
        size_t j = i + 1;
        while (s[j] && ((unsigned char)s[j] & 0xC0) == 0x80)
            j++;
        if (w + 1 > cols)
            break;
        w++;
        i = j;
    }
    return i;
}
