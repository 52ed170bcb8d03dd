/* exec.c - exec keeps the pid but runs no exit handlers, so a census recorded before an exec
 * would be lost and the new image's first dump could take the same file name. The exec
 * functions are interposed: the census is dumped first (reason "exit", "exec": true) and the
 * dump number is handed to the new image in FBCOUNT_SEQ_BASE so its dumps follow on. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

#define SEQ_VAR "FBCOUNT_SEQ_BASE="

extern char **environ;

/* Dumps if anything was recorded; returns the dump count to hand on, or 0. */
static int before_exec(void)
{
    if (!__atomic_load_n(&fbc_process_on, __ATOMIC_ACQUIRE))
        return 0;
    size_t n = fbc_shards_stacks();
    if (n)
        fbc_dump_process("exit", NULL, ",\"exec\":true");
    return __atomic_load_n(&fbc_seq, __ATOMIC_RELAXED);
}

/* envp with FBCOUNT_SEQ_BASE set to seq; NULL (use envp as is) when out of memory. */
static char **with_seq(char *const envp[], int seq, char *var, size_t cap)
{
    size_t n = 0;
    while (envp && envp[n])
        n++;
    char **e = malloc((n + 2) * sizeof *e);
    if (!e)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(envp[i], SEQ_VAR, strlen(SEQ_VAR)))
            e[k++] = envp[i];
    snprintf(var, cap, SEQ_VAR "%d", seq);
    e[k++] = var;
    e[k] = NULL;
    return e;
}

typedef int (*exec_fn)(const char *, char *const[], char *const[]);

static int run(const char *name, const char *file, char *const argv[], char *const envp[])
{
    exec_fn real;
    void *p = dlsym(RTLD_NEXT, name);
    memcpy(&real, &p, sizeof real);
    if (!real)
        return -1;
    int seq = before_exec();
    char var[64];
    char **e = seq > 0 ? with_seq(envp, seq, var, sizeof var) : NULL;
    int rc = real(file, argv, e ? e : envp);
    free(e); /* only reached when the exec failed */
    return rc;
}

FBC_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    return run("execve", path, argv, envp);
}

FBC_EXPORT int execv(const char *path, char *const argv[])
{
    return run("execve", path, argv, environ);
}

FBC_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    return run("execvpe", file, argv, envp);
}

FBC_EXPORT int execvp(const char *file, char *const argv[])
{
    return run("execvpe", file, argv, environ);
}

/* Called at start-up: continue the numbering of the image that exec-ed this one. */
void fbc_exec_inherit(void)
{
    const char *v = getenv("FBCOUNT_SEQ_BASE");
    if (!v)
        return;
    int base = atoi(v);
    if (base > 0 && base < 1000000)
        __atomic_store_n(&fbc_seq, base, __ATOMIC_RELAXED);
    unsetenv("FBCOUNT_SEQ_BASE");
}
