/* output.c - dump file names from the FBCOUNT_OUTPUT template and atomic writes: a
 * temporary created with O_EXCL|O_NOFOLLOW in the same directory, renamed into place. A dump
 * only ever lands where nothing is, or on an earlier state of its own census: never on a
 * device, a directory, a symlink or another process's file (renameat2's RENAME_NOREPLACE).
 * Async-signal-safe: the crash handler names and writes its file with these too. */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base.h"

int fbc_seq;
char fbc_output_tmpl[1024];

typedef struct {
    char *p;
    size_t left;
    bool overflow;
} sbuf;

static void put(sbuf *b, const char *s, size_t n)
{
    if (n >= b->left) {
        b->overflow = true;
        return;
    }
    for (size_t i = 0; i < n; i++)
        b->p[i] = s[i];
    b->p += n;
    b->left -= n;
    *b->p = '\0';
}

static void put_str(sbuf *b, const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    put(b, s, n);
}

static void put_num(sbuf *b, uint64_t v)
{
    char d[20];
    put(b, d, fbr_fmt_u64(d, v));
}

/* seq 0 names the checkpoint file ("checkpoint" for %n). */
static bool expand(const char *tmpl, int seq, char *out, size_t cap, bool *toolong)
{
    if (toolong)
        *toolong = false;
    if (!tmpl[0] || cap < 2)
        return false;
    sbuf b = {out, cap, false};
    out[0] = '\0';
    bool has_n = false, has_p = false;
    for (const char *t = tmpl; *t; t++) {
        if (*t != '%' || !t[1]) {
            put(&b, t, 1);
            continue;
        }
        switch (*++t) {
        case 'p':
            put_num(&b, (uint64_t)fbc_proc.pid);
            has_p = true;
            break;
        case 'h': put_str(&b, fbc_proc.host); break;
        case 'e': put_str(&b, fbc_process_name()); break;
        case 'n':
            if (seq > 0)
                put_num(&b, (uint64_t)seq);
            else
                put_str(&b, "checkpoint");
            has_n = true;
            break;
        case 'r':
            if (fbc_proc.rank >= 0)
                put_num(&b, (uint64_t)fbc_proc.rank);
            else
                put(&b, "-", 1);
            break;
        case 'i': put(&b, fbc_proc.id, 8); break;
        default: put(&b, t, 1); break;
        }
    }
    /* No dump overwrites another: the number (and a fork child's pid) go before the
     * extension when the template does not place them. */
    char extra[48];
    sbuf e = {extra, sizeof extra, false};
    extra[0] = '\0';
    if (fbc_proc.forked && !has_p) {
        put(&e, ".", 1);
        put_num(&e, (uint64_t)fbc_proc.pid);
    }
    if (!has_n && seq > 1) {
        put(&e, ".", 1);
        put_num(&e, (uint64_t)seq);
    } else if (!has_n && seq == 0) {
        put_str(&e, ".checkpoint");
    }
    size_t len = (size_t)(b.p - out), elen = (size_t)(e.p - extra);
    if (b.overflow || len + elen + 1 > cap) {
        if (toolong)
            *toolong = true;
        return false;
    }
    if (elen) {
        size_t base = 0, dot = len;
        for (size_t i = 0; i < len; i++)
            if (out[i] == '/')
                base = i + 1;
        for (size_t i = len; i-- > base + 1;)
            if (out[i] == '.') {
                dot = i;
                break;
            }
        for (size_t i = len + 1; i-- > dot;)
            out[i + elen] = out[i];
        for (size_t i = 0; i < elen; i++)
            out[dot + i] = extra[i];
    }
    return true;
}

bool fbc_output_read(void)
{
    return fbc_output_tmpl[0] || fbc_cfg.metrics[0] || !fbc_cfg.quiet;
}

bool fbc_output_path(const char *tmpl, int seq, char *out, size_t cap, bool *toolong)
{
    return expand(tmpl, seq > 0 ? seq : 1, out, cap, toolong);
}

bool fbc_output_checkpoint_path(const char *tmpl, char *out, size_t cap)
{
    return expand(tmpl, 0, out, cap, NULL);
}

/* The temporary file being written (one at a time under the dump lock; a crash dump's may
 * take its place), removed by a process that dies before it is renamed into place. */
static char inflight[2200];

void fbc_output_abandon(void)
{
    if (__atomic_load_n(&inflight[0], __ATOMIC_ACQUIRE))
        unlink(inflight);
}

int fbc_output_open(const char *path, char *tmp, size_t cap)
{
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        errno = EEXIST; /* /dev/null, a directory, a symlink: never renamed over */
        return -1;
    }
    sbuf b = {tmp, cap, false};
    tmp[0] = '\0';
    put_str(&b, path);
    put_str(&b, FBR_TEMPORARY);
    put(&b, fbc_proc.id, 8); /* pids repeat across pid namespaces; census ids do not */
    if (b.overflow) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (int attempt = 0; attempt < 2; attempt++) {
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0) {
            size_t n = 0;
            for (; tmp[n] && n + 1 < sizeof inflight; n++)
                inflight[n] = tmp[n];
            inflight[n] = '\0';
            return fbc_fd_lift(fd);
        }
        if (errno != EEXIST)
            return -1;
        unlink(tmp); /* a leftover of this census's own dump cut short by a crash */
    }
    return -1;
}

int fbc_output_commit(int fd, const char *tmp, const char *path, bool ok, bool replace)
{
    int saved = 0;
    __atomic_store_n(&inflight[0], '\0', __ATOMIC_RELEASE);
    if (close(fd) != 0)
        ok = false;
    if (ok && replace && rename(tmp, path) == 0)
        return 0;
    /* glibc 2.36 has renameat2, but through the system call it is the same on every libc. */
    if (ok && !replace) {
        if (syscall(SYS_renameat2, AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
            return 0;
        /* A file system without the flag: link(2) refuses an existing name just as well. */
        if ((errno == EINVAL || errno == ENOSYS) && link(tmp, path) == 0) {
            unlink(tmp);
            return 0;
        }
    }
    saved = errno;
    unlink(tmp);
    errno = saved;
    return -1;
}
