/* output.c - see output.h. */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

int fbo_open(fbo_file *o, const char *path, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    if (!path || !strcmp(path, "-")) {
        o->f = stdout;
        return 0;
    }
    struct stat sb;
    /* lstat: a symlink at the target is replaced by the rename, never followed. */
    if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISLNK(sb.st_mode)) {
        snprintf(err, errlen,
                 "%s: not a regular file; refusing to replace it (write to "
                 "standard output and redirect instead)",
                 path);
        return -1;
    }
    size_t len = strlen(path) + 32;
    o->path = strdup(path);
    o->tmp = malloc(len);
    if (!o->path || !o->tmp) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto fail;
    }
    for (int attempt = 0; attempt < 16; attempt++) {
        uint64_t r = 0;
        if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
            r = (uint64_t)getpid() * 2654435761u + (uint64_t)attempt;
        snprintf(o->tmp, len, "%s.tmp.%016llx", path, (unsigned long long)r);
        int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0 && errno == EEXIST)
            continue;
        if (fd < 0) {
            snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
            goto fail;
        }
        if (!(o->f = fdopen(fd, "w"))) {
            snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
            close(fd);
            unlink(o->tmp);
            goto fail;
        }
        return 0;
    }
    snprintf(err, errlen, "%s: cannot create a temporary file next to it", path);
fail:
    free(o->path);
    free(o->tmp);
    memset(o, 0, sizeof *o);
    return -1;
}

int fbo_check_stdout(char *err, size_t errlen)
{
    /* A write error is sticky in the stream, so one check at the end sees every write. */
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        snprintf(err, errlen, "standard output: write error: %s",
                 errno ? strerror(errno) : "I/O error");
        return -1;
    }
    return 0;
}

int fbo_close(fbo_file *o, bool ok, char *err, size_t errlen)
{
    if (!o->f)
        return -1;
    if (o->f == stdout) {
        o->f = NULL;
        return fbo_check_stdout(err, errlen);
    }
    const char *why = NULL;
    errno = 0;
    /* A write error is sticky in the stream, and fsync reports one the disk met late. */
    if (fflush(o->f) != 0 || ferror(o->f) || fsync(fileno(o->f)) != 0)
        why = errno ? strerror(errno) : "I/O error";
    if (fclose(o->f) != 0 && !why)
        why = strerror(errno);
    if (!why && !ok)
        why = "not written (its writer failed)";
    if (why)
        snprintf(err, errlen, "%s: write error: %s", o->path, why);
    else if (rename(o->tmp, o->path) != 0)
        snprintf(err, errlen, "%s: cannot write: %s", o->path, why = strerror(errno));
    if (why)
        unlink(o->tmp);
    free(o->path);
    free(o->tmp);
    memset(o, 0, sizeof *o);
    return why ? -1 : 0;
}
