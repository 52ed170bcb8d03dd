/* ggml_api.c - see ggml_api.h. */
#include "ggml_api.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define GGML_DEFINE(ret, name, params) ret(*name) params;
GGML_FUNCS(GGML_DEFINE)
#undef GGML_DEFINE

static void *open_in(const char *dir, const char *file)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h)
        fprintf(stderr, "ggml: %s\n", dlerror());
    return h;
}

int ggml_api_load(const char *dir)
{
    if (!open_in(dir, "libggml-base.so"))
        return -1;
    /* The registry: libggml.so, or node-llama-cpp's libggml.<gpu>.<version>.so. */
    DIR *d = opendir(dir);
    struct dirent *e;
    void *reg = NULL;
    while (d && !reg && (e = readdir(d)))
        if (!strcmp(e->d_name, "libggml.so") ||
            (!strncmp(e->d_name, "libggml.", 8) && strstr(e->d_name, ".so")))
            reg = open_in(dir, e->d_name);
    if (d)
        closedir(d);
    if (!reg) {
        fprintf(stderr, "ggml: no libggml.so in %s\n", dir);
        return -1;
    }
    int missing = 0;
#define GGML_LOAD(ret, name, params)                                                            \
    {                                                                                           \
        void *p = dlsym(RTLD_DEFAULT, #name);                                                   \
        memcpy(&name, &p, sizeof p);                                                            \
        if (!p)                                                                                 \
            missing += fprintf(stderr, "ggml: %s is missing\n", #name) > 0;                     \
    }
    GGML_FUNCS(GGML_LOAD)
#undef GGML_LOAD
    return missing ? -1 : 0;
}
