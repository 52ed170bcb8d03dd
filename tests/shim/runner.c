/* runner.c - running a program under the preloaded shim and reading its dumps back, for the
 * shim's suites (runner.h). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner.h"

extern char **environ;

char tmpdir[64];

void make_dir(void)
{
    strcpy(tmpdir, "/tmp/fbcount-shim-XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
}

void remove_dir(void)
{
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
        if (e->d_name[0] != '.')
            unlink(p);
    }
    if (d)
        closedir(d);
    rmdir(tmpdir);
}

static size_t drain(int fd, char *buf, size_t len, size_t cap)
{
    ssize_t n = read(fd, buf + len, cap - 1 - len);
    return n > 0 ? len + (size_t)n : len;
}

/* Runs argv in tmpdir with env (NAME=VALUE..., NULL-terminated) on top of a clean FBCOUNT_
 * environment; the shim is preloaded unless preload is false. */
void run(result *r, bool preload, const char *const *env, const char *const *argv)
{
    int po[2], pe[2];
    cr_assert_eq(pipe(po), 0);
    cr_assert_eq(pipe(pe), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        for (char **e = environ; *e;) {
            if (!strncmp(*e, "FBCOUNT", 7) || !strncmp(*e, "LD_PRELOAD=", 11)) {
                char name[128];
                snprintf(name, sizeof name, "%.*s", (int)strcspn(*e, "="), *e);
                unsetenv(name);
            } else {
                e++;
            }
        }
        if (preload)
            setenv("LD_PRELOAD", SHIM_LIB, 1);
        for (; env && *env; env++)
            putenv((char *)*env);
        if (chdir(tmpdir) != 0)
            _exit(126);
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]);
        close(pe[0]);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    size_t no = 0, ne = 0;
    struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
    int open_fds = 2;
    while (open_fds > 0 && poll(fds, 2, 30000) > 0) {
        for (int i = 0; i < 2; i++) {
            if (!(fds[i].revents & (POLLIN | POLLHUP)))
                continue;
            size_t before = i ? ne : no;
            size_t after = i ? (ne = drain(pe[0], r->err, ne, sizeof r->err))
                             : (no = drain(po[0], r->out, no, sizeof r->out));
            if (after == before) {
                fds[i].fd = -1;
                open_fds--;
            }
        }
    }
    r->out[no] = r->err[ne] = '\0';
    close(po[0]);
    close(pe[0]);
    waitpid(pid, &r->status, 0);
}

/* The dumps in tmpdir, parsed; reason NULL for any. */
int dumps(json_t **out, int cap, const char *reason)
{
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)) && n < cap) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 5, ".json"))
            continue;
        char p[512];
        snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
        struct stat st;
        if (lstat(p, &st) != 0 || !S_ISREG(st.st_mode))
            continue; /* a link a test planted */
        json_error_t err;
        json_t *j = json_load_file(p, 0, &err);
        cr_assert_not_null(j, "%s: %s", p, err.text);
        if (!reason || !strcmp(json_string_value(json_object_get(j, "reason")), reason))
            out[n++] = j;
        else
            json_decref(j);
    }
    if (d)
        closedir(d);
    return n;
}

json_t *one_dump(const char *reason)
{
    json_t *d[8];
    int n = dumps(d, 8, reason);
    cr_assert_eq(n, 1, "expected one %s dump in %s, found %d", reason ? reason : "", tmpdir, n);
    return d[0];
}

json_int_t num(json_t *o, const char *path)
{
    char key[64];
    const char *dot = strchr(path, '.');
    if (dot) {
        snprintf(key, sizeof key, "%.*s", (int)(dot - path), path);
        return num(json_object_get(o, key), dot + 1);
    }
    json_t *v = json_object_get(o, path);
    cr_assert(json_is_integer(v), "%s is not an integer", path);
    return json_integer_value(v);
}

json_t *op(json_t *d, const char *key, const char *name)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(d, key), i,
                       e) if (!strcmp(json_string_value(json_object_get(e, "op")), name)) return e;
    return NULL;
}

json_int_t op_count(json_t *d, const char *key, const char *name)
{
    json_t *e = op(d, key, name);
    return e ? json_integer_value(json_object_get(e, "count")) : 0;
}

json_int_t site_field(json_t *d, const char *opname, const char *site, const char *field)
{
    json_t *e = op(d, "ops", opname), *s;
    size_t i;
    json_array_foreach(e ? json_object_get(e, "sites") : NULL, i,
                       s) if (!strcmp(json_string_value(json_object_get(s, "site")),
                                      site)) return json_integer_value(json_object_get(s, field));
    return 0;
}

json_int_t site_count(json_t *d, const char *opname, const char *site)
{
    return site_field(d, opname, site, "count");
}

/* Frame i of stack st: dumps name frames by index into "frame_table" (crash dumps, written
 * from a signal handler, inline them). */
json_t *frame(json_t *d, json_t *st, size_t i)
{
    json_t *f = json_array_get(json_object_get(st, "frames"), i);
    if (json_is_integer(f))
        return json_array_get(json_object_get(d, "frame_table"), (size_t)json_integer_value(f));
    return f;
}

int lines(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p++)
        n++;
    return n;
}
