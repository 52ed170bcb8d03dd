/* output.c - dump file names from the FBCOUNT_OUTPUT template and atomic writes: a
 * temporary created with O_EXCL|O_NOFOLLOW in the same directory, renamed into place.
 * Async-signal-safe: the crash handler names and writes its file with these too. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "shim.h"

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
    put(b, d, fbc_fmt_u64(d, v));
}

bool fbc_output_path(const char *tmpl, int seq, char *out, size_t cap)
{
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
        case 'p': put_num(&b, (uint64_t)fbc_proc.pid); has_p = true; break;
        case 'h': put_str(&b, fbc_proc.host); break;
        case 'e': put_str(&b, fbc_proc.name); break;
        case 'n': put_num(&b, (uint64_t)seq); has_n = true; break;
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
    }
    if (b.overflow)
        return false;
    size_t len = (size_t)(b.p - out), elen = (size_t)(e.p - extra);
    if (elen) {
        if (len + elen + 1 > cap)
            return false;
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

int fbc_output_open(const char *path, char *tmp, size_t cap)
{
    sbuf b = {tmp, cap, false};
    tmp[0] = '\0';
    put_str(&b, path);
    put_str(&b, ".tmp.");
    put_num(&b, (uint64_t)fbc_proc.pid);
    if (b.overflow) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (int attempt = 0; attempt < 2; attempt++) {
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0 || errno != EEXIST)
            return fd;
        unlink(tmp); /* a leftover of a process that died mid-dump with this pid */
    }
    return -1;
}

int fbc_output_commit(int fd, const char *tmp, const char *path, bool ok)
{
    int saved = 0;
    if (close(fd) != 0)
        ok = false;
    if (ok && rename(tmp, path) == 0)
        return 0;
    saved = errno;
    unlink(tmp);
    errno = saved;
    return -1;
}
