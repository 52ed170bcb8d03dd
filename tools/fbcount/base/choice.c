/* choice.c - see choice.h. */
#include "choice.h"

#include <stdio.h>
#include <string.h>

#include "text.h"

const char *fbx_choices(const fbx_choice *list, size_t n, const char *sep, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? sep : "", list[i].name);
    return buf;
}

int fbx_choose(const char *cmd, const char *opt, const char *val, const fbx_choice *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(val, list[i].name))
            return list[i].value;
    char names[512], e[256];
    fprintf(stderr, "fbcount: %s: %s: unknown value '%s' (one of %s)\n", cmd, opt,
            fbx_escape(val, e, sizeof e, 0), fbx_choices(list, n, ", ", names, sizeof names));
    return -1;
}

const char *fbx_choice_name(const fbx_choice *list, size_t n, int value)
{
    for (size_t i = 0; i < n; i++)
        if (list[i].value == value)
            return list[i].name;
    return NULL;
}
