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

void *ggml_api_open(const char *dir, const char *plain, const char *prefix)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    void *h = NULL;
    while (d && !h && (e = readdir(d)))
        if (!strcmp(e->d_name, plain) ||
            (prefix && !strncmp(e->d_name, prefix, strlen(prefix)) && strstr(e->d_name, ".so")))
            h = open_in(dir, e->d_name);
    if (d)
        closedir(d);
    if (!h)
        fprintf(stderr, "ggml: no %s in %s\n", plain, dir);
    return h;
}

int ggml_api_bind(const char *const *names, void *const *slots, size_t n)
{
    int missing = 0;
    for (size_t i = 0; i < n; i++) {
        void *p = dlsym(RTLD_DEFAULT, names[i]);
        memcpy(slots[i], &p, sizeof p);
        if (!p)
            missing += fprintf(stderr, "ggml: %s is missing\n", names[i]) > 0;
    }
    return missing ? -1 : 0;
}

int ggml_api_load(const char *dir)
{
    /* The registry: libggml.so, or node-llama-cpp's libggml.<gpu>.<version>.so. */
    if (!ggml_api_open(dir, "libggml-base.so", NULL) ||
        !ggml_api_open(dir, "libggml.so", "libggml."))
        return -1;
#define GGML_NAME(ret, name, params) #name,
#define GGML_SLOT(ret, name, params) (void *)&name,
    static const char *const names[] = {GGML_FUNCS(GGML_NAME)};
    void *const slots[] = {GGML_FUNCS(GGML_SLOT)};
#undef GGML_NAME
#undef GGML_SLOT
    return ggml_api_bind(names, slots, sizeof names / sizeof *names);
}
