/* writer.c - JSON and text into a caller's buffer, flushed with write(2). No malloc, no
 * stdio, no locale: the crash handler writes its dump with it, and so does every other dump
 * (one writer, and ten thousand stacks take milliseconds instead of a JSON tree). */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base.h"

void fbc_w_init(fbc_writer *w, int fd, char *buf, size_t cap)
{
    w->fd = fd;
    w->buf = buf;
    w->cap = cap;
    w->len = 0;
    w->failed = false;
    w->written = 0;
    w->sink = NULL;
    w->ctx = NULL;
}

void fbc_w_init_sink(fbc_writer *w, char *buf, size_t cap,
                     bool (*sink)(void *ctx, const char *p, size_t n), void *ctx)
{
    fbc_w_init(w, -1, buf, cap);
    w->sink = sink;
    w->ctx = ctx;
}

void fbc_w_flush(fbc_writer *w)
{
    if (w->sink) {
        if (w->len && !w->failed && !w->sink(w->ctx, w->buf, w->len))
            w->failed = true;
        w->written += w->len;
        w->len = 0;
        return;
    }
    size_t off = 0;
    while (off < w->len && !w->failed) {
        ssize_t n = write(w->fd, w->buf + off, w->len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            w->failed = true;
        } else {
            off += (size_t)n;
            w->written += (uint64_t)n;
        }
    }
    w->len = 0;
}

void fbc_w_raw(fbc_writer *w, const char *s, size_t n)
{
    while (n) {
        if (w->len == w->cap)
            fbc_w_flush(w);
        size_t k = w->cap - w->len < n ? w->cap - w->len : n;
        memcpy(w->buf + w->len, s, k); /* a pure function: safe in a signal handler in practice */
        w->len += k;
        s += k;
        n -= k;
    }
}

void fbc_w_str(fbc_writer *w, const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    fbc_w_raw(w, s, n);
}

/* Length of the valid UTF-8 sequence at s, 0 if it is not one. */
static size_t utf8_len(const unsigned char *s)
{
    if (s[0] < 0x80)
        return 1;
    size_t n = s[0] >= 0xf0 && s[0] <= 0xf4  ? 4
               : s[0] >= 0xe0                ? 3
               : s[0] >= 0xc2 && s[0] < 0xe0 ? 2
                                             : 0;
    if (n == 0 || (n == 3 && s[0] >= 0xf0))
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

static const char hex[] = "0123456789abcdef";

void fbc_w_json(fbc_writer *w, const char *s)
{
    fbc_w_raw(w, "\"", 1);
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t plain = 0; /* the common case: a run that needs no escaping */
        while (p[plain] >= 0x20 && p[plain] < 0x80 && p[plain] != '"' && p[plain] != '\\')
            plain++;
        if (plain) {
            fbc_w_raw(w, (const char *)p, plain);
            p += plain;
            continue;
        }
        if (*p == '"' || *p == '\\') {
            char esc[2] = {'\\', (char)*p};
            fbc_w_raw(w, esc, 2);
            p++;
        } else if (*p < 0x20) {
            char esc[6] = {'\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15]};
            fbc_w_raw(w, esc, 6);
            p++;
        } else {
            size_t n = utf8_len(p);
            if (n == 0) {
                fbc_w_raw(w, "\\ufffd", 6); /* a reader rejects invalid UTF-8 */
                p++;
            } else {
                fbc_w_raw(w, (const char *)p, n);
                p += n;
            }
        }
    }
    fbc_w_raw(w, "\"", 1);
}

void fbc_w_u64(fbc_writer *w, uint64_t v)
{
    char b[20];
    fbc_w_raw(w, b, fbr_fmt_u64(b, v));
}

void fbc_w_num(fbc_writer *w, const char *key, uint64_t v)
{
    fbc_w_str(w, key);
    fbc_w_u64(w, v);
}

void fbc_w_i64(fbc_writer *w, int64_t v)
{
    if (v < 0) {
        fbc_w_raw(w, "-", 1);
        fbc_w_u64(w, (uint64_t)0 - (uint64_t)v);
    } else {
        fbc_w_u64(w, (uint64_t)v);
    }
}

void fbc_w_hex(fbc_writer *w, uint64_t v)
{
    char b[20];
    int n = 0;
    do {
        b[n++] = hex[v & 15];
        v >>= 4;
    } while (v);
    char out[22] = {'"', '0', 'x'};
    for (int i = 0; i < n; i++)
        out[3 + i] = b[n - 1 - i];
    out[3 + n] = '"';
    fbc_w_raw(w, out, (size_t)n + 4);
}

/* Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm): gmtime_r is not
 * async-signal-safe. */
void fbc_fmt_time(char out[21], uint64_t unix_s)
{
    int64_t t = (int64_t)unix_s, days = t / 86400, sec = t % 86400;
    int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097, yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t y = yoe + era * 400, doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153, d = doy - (153 * mp + 2) / 5 + 1;
    int64_t m = mp < 10 ? mp + 3 : mp - 9;
    y += m <= 2;
    int64_t v[6] = {y, m, d, sec / 3600, sec / 60 % 60, sec % 60};
    static const char sep[] = "--T::Z";
    char *p = out;
    for (int i = 0; i < 6; i++) {
        int width = i == 0 ? 4 : 2;
        for (int k = width - 1; k >= 0; k--) {
            p[k] = (char)('0' + v[i] % 10);
            v[i] /= 10;
        }
        p += width;
        *p++ = sep[i];
    }
    *p = '\0';
}
