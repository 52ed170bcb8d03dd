/* execwrap.c - exec keeps the pid but runs no exit handlers, so the census recorded before an
 * exec would be lost: every exec function writes the final dump first (reason "exit", with
 * "exec": true), execveat and fexecve included. The new image is a census of its own (a new
 * census id), so nothing is handed to it: a program the shim cannot load into (a static
 * binary) inherits no variable of the shim's. A child that shares
 * its parent's memory (vfork) must not touch the parent's census: it writes nothing. glibc's
 * _Fork runs no fork handlers: its child is given a census of its own here. */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fields.h"
#include "hooks.h"

extern char **environ;
pid_t _Fork(void);

static void *next(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

/* Only a process whose census this is writes it: a vfork child (and a child of a fork made
 * before the parent first used the shim, which has recorded nothing) has its parent's pid. */
static void before_exec(void)
{
    if ((int)getpid() == fbc_proc.pid)
        fbc_final_dump("," FBR_KEY(FBR_EXEC) "true");
}

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);

static int call3(const char *name, const char *file, char *const argv[], char *const envp[])
{
    execve_fn real;
    void *p = next(name);
    memcpy(&real, &p, sizeof real);
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    before_exec();
    return real(file, argv, envp);
}

FBC_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    return call3("execve", path, argv, envp);
}

FBC_EXPORT int execv(const char *path, char *const argv[])
{
    return call3("execve", path, argv, environ);
}

FBC_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    return call3("execvpe", file, argv, envp);
}

FBC_EXPORT int execvp(const char *file, char *const argv[])
{
    return call3("execvpe", file, argv, environ);
}

FBC_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    fexecve_fn real;
    void *p = next("fexecve");
    memcpy(&real, &p, sizeof real);
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    before_exec();
    return real(fd, argv, envp);
}

FBC_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
                        int flags)
{
    execveat_fn real;
    void *p = next("execveat");
    memcpy(&real, &p, sizeof real);
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    before_exec();
    return real(dirfd, path, argv, envp, flags);
}

/* execl, execlp, execle: the list gathered into an argv (and for execle, the environment that
 * follows the NULL), then the vector form. */
static char **gather(const char *arg0, va_list ap, char ***envp)
{
    size_t n = 1, cap = 16;
    char **argv = malloc(cap * sizeof *argv);
    if (!argv)
        return NULL;
    argv[0] = (char *)arg0;
    for (;;) {
        char *a = va_arg(ap, char *);
        if (n + 1 >= cap) {
            char **g = realloc(argv, (cap *= 2) * sizeof *argv);
            if (!g) {
                free(argv);
                return NULL;
            }
            argv = g;
        }
        argv[n++] = a;
        if (!a)
            break;
    }
    if (envp)
        *envp = va_arg(ap, char **);
    return argv;
}

static int list_form(const char *name, const char *file, const char *arg0, va_list ap, bool env)
{
    char **envp = environ;
    char **argv = gather(arg0, ap, env ? &envp : NULL);
    if (!argv) {
        errno = ENOMEM;
        return -1;
    }
    int rc = call3(name, file, argv, envp);
    int saved = errno;
    free(argv);
    errno = saved;
    return rc;
}

FBC_EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int rc = list_form("execve", path, arg, ap, false);
    va_end(ap);
    return rc;
}

FBC_EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int rc = list_form("execvpe", file, arg, ap, false);
    va_end(ap);
    return rc;
}

FBC_EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int rc = list_form("execve", path, arg, ap, true);
    va_end(ap);
    return rc;
}

typedef pid_t (*fork_fn)(void);

FBC_EXPORT pid_t _Fork(void)
{
    fork_fn real;
    void *p = next("_Fork");
    memcpy(&real, &p, sizeof real);
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    pid_t pid = real();
    if (pid == 0)
        fbc_fork_child_bare();
    return pid;
}
