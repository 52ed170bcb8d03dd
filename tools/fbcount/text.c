/* text.c - UTF-8 aware truncation. Dump strings are valid UTF-8 (jansson checks), so a cut
 * only has to avoid landing on a continuation byte. */
#include "text.h"

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
