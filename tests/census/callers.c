/* census-callers: loads each module named (copies of caller.c's, each its own module) and
 * calls its vkt_callme once, then prints how many calls the backend itself received and how
 * many results came back as it returned them.   usage: census-callers LIB... */
#include <dlfcn.h>
#include <stdio.h>

#include "fakevkt.h"

int main(int argc, char **argv)
{
    int good = 0;
    for (int i = 1; i < argc; i++) {
        void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
        int (*call)(size_t) = NULL;
        if (h)
            *(void **)&call = dlsym(h, "vkt_callme");
        if (!call) {
            fprintf(stderr, "census-callers: %s: %s\n", argv[i], dlerror());
            return 2;
        }
        good += call(16) == 0;
    }
    printf("calls %llu good %d\n", (unsigned long long)fake_calls(), good);
    return 0;
}
