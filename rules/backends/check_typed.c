/* check_typed.c - run when the shim is built: the built-in descriptors against the shim's
 * typed definitions, both ways (fbr_typed_check). A descriptor whose exit the shim does not
 * type, or that asks of an exit what the shim cannot do, or a typed exit no descriptor names,
 * fails the build with the lines that say which. */
#include <stdio.h>

#include "backend.h"

int main(void)
{
    char msg[4096];
    int n = fbr_typed_check(msg, sizeof msg);
    if (n > 0) {
        fprintf(stderr, "rules: the built-in descriptors and rules/typed.h disagree (%d):\n%s", n,
                msg);
        return 1;
    }
    return 0;
}
