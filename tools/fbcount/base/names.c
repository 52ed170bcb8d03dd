/* names.c - see names.h. The demangler is libstdc++'s, the one g++ and gdb's users rely
 * on; it is declared here because its header is C++ only. */
#include "names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *fbn_demangle(const char *sym)
{
    /* Only "_Z" names are C++; asking about every C name would cost a failed parse each. */
    if (!sym || strncmp(sym, "_Z", 2) != 0)
        return NULL;
    int status = 0;
    char *r = __cxa_demangle(sym, NULL, NULL, &status);
    if (status != 0) {
        free(r);
        return NULL;
    }
    return r;
}

const char *fbn_display(const char *sym, char *buf, size_t len)
{
    char *d = fbn_demangle(sym);
    snprintf(buf, len, "%s", d ? d : sym ? sym : "");
    free(d);
    return buf;
}
