/* process.c - pid, host, program name and argv, read once (and again in a fork child) so that
 * the crash handler can write them without calling anything unsafe. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

fbc_process fbc_proc;

void fbc_process_load(void)
{
    fbc_proc.pid = (int)getpid();
    fbc_proc.ppid = (int)getppid();
    if (gethostname(fbc_proc.host, sizeof fbc_proc.host - 1) != 0)
        strcpy(fbc_proc.host, "unknown");
    ssize_t n = readlink("/proc/self/exe", fbc_proc.exe, sizeof fbc_proc.exe - 1);
    fbc_proc.exe[n > 0 ? n : 0] = '\0';
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    fbc_proc.argv_len = 0;
    if (fd >= 0) {
        ssize_t r;
        while (fbc_proc.argv_len < sizeof fbc_proc.argv - 1 &&
               ((r = read(fd, fbc_proc.argv + fbc_proc.argv_len,
                          sizeof fbc_proc.argv - 1 - fbc_proc.argv_len)) > 0 || (r < 0 && errno == EINTR)))
            if (r > 0)
                fbc_proc.argv_len += (size_t)r;
        close(fd);
    }
    fbc_proc.argv[fbc_proc.argv_len] = '\0';
    /* %e: the program as it was invoked (argv[0]'s last part), else the executable's name. */
    const char *name = fbc_proc.argv_len ? fbc_proc.argv : fbc_proc.exe;
    const char *slash = strrchr(name, '/');
    name = slash ? slash + 1 : name;
    if (!*name)
        name = "unknown";
    size_t len = strlen(name) < sizeof fbc_proc.name - 1 ? strlen(name) : sizeof fbc_proc.name - 1;
    memcpy(fbc_proc.name, name, len);
    fbc_proc.name[len] = '\0';
    /* A name goes into a file name: keep it to one path component. */
    for (char *p = fbc_proc.name; *p; p++)
        if (*p == '/' || (unsigned char)*p < 0x20)
            *p = '_';
}
