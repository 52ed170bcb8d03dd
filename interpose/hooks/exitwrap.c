/* exitwrap.c - a process that ends without exit(): _exit and _Exit (Python's os._exit, with
 * which multiprocessing ends every worker; a forked server's child) run no exit handler and no
 * destructor, so its census would be lost. Before the real function, the raw census is
 * written (reason "exit"; the command names it as it reads it): async-signal-safe, as they
 * are, since a program's signal handler may call them. */
#include <string.h>
#include <sys/syscall.h>

#include "early.h"
#include "hooks.h"

typedef void (*end_fn)(int);

/* The definitions after the shim's, found at its first use (never where _exit is called: a
 * signal handler may be there); before that, the system call glibc's _exit makes. */
static void *real_end[2];

void fbc_exits_resolve_end(void)
{
    __atomic_store_n(&real_end[0], fbc_next_definition("_exit"), __ATOMIC_RELEASE);
    __atomic_store_n(&real_end[1], fbc_next_definition("_Exit"), __ATOMIC_RELEASE);
}

__attribute__((noreturn)) static void end(int which, int status)
{
    /* Only this census's process: not a vfork child, which shares its parent's memory (nor a
     * child of a fork no handler of the shim's saw: it recorded nothing). */
    if (fbc_sys_getpid() == fbc_proc.pid)
        fbc_final_raw();
    end_fn real;
    void *p = __atomic_load_n(&real_end[which], __ATOMIC_ACQUIRE);
    memcpy(&real, &p, sizeof real);
    if (real)
        real(status);
    for (;;)
        fbc_sys3(SYS_exit_group, status, 0, 0);
}

FBC_EXPORT void _exit(int status)
{
    end(0, status);
}

FBC_EXPORT void _Exit(int status)
{
    end(1, status);
}
