/* run_dir.c - see run_dir.h. */
#include "run_dir.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "contract.h"

/* Whether dir holds anything; *foreign names the first entry a run does not write. */
static int scan_dir(const char *dir, bool *empty, char *foreign, size_t len)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return -1;
    *empty = true;
    foreign[0] = '\0';
    struct dirent *e;
    while ((e = readdir(dp))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        *empty = false;
        char p[PATH_MAX + 256];
        struct stat sb;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (!foreign[0] &&
            (!fbr_is_run_file(e->d_name) || lstat(p, &sb) != 0 || !S_ISREG(sb.st_mode)))
            snprintf(foreign, len, "%s", e->d_name);
    }
    closedir(dp);
    return 0;
}

/* Empties and removes a DIR.old that holds only what runs write. */
static int remove_old(const char *old)
{
    DIR *dp = opendir(old);
    if (!dp)
        return -1;
    struct dirent *e;
    while ((e = readdir(dp))) {
        char p[PATH_MAX + 256];
        snprintf(p, sizeof p, "%s/%s", old, e->d_name);
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlink(p);
    }
    closedir(dp);
    return rmdir(old);
}

/* A fresh fbcount-<pid> (or fbcount-<pid>.<n> when that name is taken). */
static int make_default(fbx_run_dir *d)
{
    char name[64] = "";
    for (int i = 0; i < 100; i++) {
        if (fbr_run_dir_name((long)getpid(), i, name, sizeof name) && mkdir(name, 0777) == 0) {
            memcpy(d->path, name, sizeof name);
            d->created = true;
            return 0;
        }
        if (errno != EEXIST)
            break;
    }
    fbx_error("run", "%s: cannot create directory: %s", name, strerror(errno));
    return FBX_READ;
}

/* Moves DIR's dumps aside to DIR.old, replacing a DIR.old of dumps, and makes DIR anew. */
static int move_aside(fbx_run_dir *d, const char *out)
{
    struct stat sb;
    snprintf(d->moved, sizeof d->moved, "%s.old", d->path);
    if (lstat(d->moved, &sb) == 0) {
        bool oempty;
        char ofor[256];
        if (!S_ISDIR(sb.st_mode) || scan_dir(d->moved, &oempty, ofor, sizeof ofor) != 0 ||
            ofor[0] || remove_old(d->moved) != 0) {
            fbx_error("run",
                      "%s: holds more than dumps of an earlier run: remove it, or use "
                      "--append",
                      d->moved);
            d->moved[0] = '\0';
            return FBX_USAGE;
        }
    }
    if (rename(d->path, d->moved) != 0) {
        fbx_error("run", "%s: cannot move it aside to %s: %s", out, d->moved, strerror(errno));
        d->moved[0] = '\0';
        return FBX_READ;
    }
    if (mkdir(d->path, 0777) != 0) {
        fbx_error("run", "%s: cannot create directory: %s", d->path, strerror(errno));
        rename(d->moved, d->path);
        d->moved[0] = '\0';
        return FBX_READ;
    }
    return 0;
}

/* -o DIR: made when missing, taken as it is when empty or with --append, else its dumps are
 * moved aside; a file, or a directory holding more than dumps, is refused. */
static int take_named(fbx_run_dir *d, const char *out, bool append)
{
    snprintf(d->path, sizeof d->path, "%s", out);
    for (size_t l = strlen(d->path); l > 1 && d->path[l - 1] == '/'; l--)
        d->path[l - 1] = '\0';
    struct stat sb;
    if (stat(d->path, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
        fbx_error("run", "-o %s: exists and is not a directory", out);
        return FBX_USAGE;
    }
    if (mkdir(d->path, 0777) == 0) {
        d->created = true;
        return 0;
    }
    if (errno != EEXIST) {
        fbx_error("run", "%s: cannot create directory: %s", d->path, strerror(errno));
        return FBX_READ;
    }
    bool empty;
    char foreign[256];
    if (scan_dir(d->path, &empty, foreign, sizeof foreign) != 0) {
        fbx_error("run", "%s: cannot read directory: %s", d->path, strerror(errno));
        return FBX_READ;
    }
    if (empty || append)
        return 0;
    if (foreign[0]) {
        fbx_error("run",
                  "-o %s: holds '%s', which is not a dump: name a new directory, or "
                  "add to this one with --append",
                  out, foreign);
        return FBX_USAGE;
    }
    return move_aside(d, out);
}

int fbx_run_dir_make(fbx_run_dir *d, const char *output, bool append)
{
    memset(d, 0, sizeof *d);
    int code = output ? take_named(d, output, append) : make_default(d);
    if (code)
        return code;
    if (!realpath(d->path, d->abs)) {
        fbx_error("run", "%s: %s", d->path, strerror(errno));
        fbx_run_dir_undo(d);
        return FBX_READ;
    }
    if (d->moved[0])
        fprintf(stderr, "fbcount: run: moved the previous dumps in %s to %s\n", d->path, d->moved);
    fbr_run_log(d->abs, (long)getpid(), d->log, sizeof d->log);
    return 0;
}

bool fbx_run_dir_has_dump(const fbx_run_dir *d)
{
    return fbx_holds_dump(d->abs[0] ? d->abs : d->path);
}

bool fbx_run_dir_undo(fbx_run_dir *d)
{
    if (d->log[0])
        unlink(d->log);
    if (!d->created && !d->moved[0])
        return false;
    /* Only what a run writes: the shim's temporaries of a dump that never landed. */
    bool empty;
    char foreign[256];
    if (scan_dir(d->path, &empty, foreign, sizeof foreign) != 0 || foreign[0] ||
        remove_old(d->path) != 0)
        return false;
    if (d->moved[0] && rename(d->moved, d->path) == 0) {
        d->moved[0] = '\0';
        return false; /* the earlier dumps are back where they were */
    }
    return true;
}

void fbx_run_dir_sweep(const fbx_run_dir *d)
{
    DIR *dp = opendir(d->path);
    struct dirent *e;
    while (dp && (e = readdir(dp))) {
        char p[PATH_MAX + 256];
        struct stat sb;
        snprintf(p, sizeof p, "%s/%s", d->path, e->d_name);
        if (fbr_is_dump_temporary(e->d_name) && lstat(p, &sb) == 0 && S_ISREG(sb.st_mode))
            unlink(p);
    }
    if (dp)
        closedir(dp);
}

/* A folder fbcount run made, and whether it holds a dump. */
typedef struct {
    char name[256];
    struct timespec mtime;
    bool dumps;
} run_dir;

static int cmp_run_dir(const run_dir *a, const run_dir *b)
{
    if (a->mtime.tv_sec != b->mtime.tv_sec)
        return a->mtime.tv_sec < b->mtime.tv_sec ? -1 : 1;
    if (a->mtime.tv_nsec != b->mtime.tv_nsec)
        return a->mtime.tv_nsec < b->mtime.tv_nsec ? -1 : 1;
    return strcmp(a->name, b->name);
}

bool fbx_holds_dump(const char *dir)
{
    DIR *dp = opendir(dir);
    struct dirent *e;
    bool any = false;
    while (dp && !any && (e = readdir(dp))) {
        any = fbr_is_dump_name(e->d_name);
    }
    if (dp)
        closedir(dp);
    return any;
}

static int cmp_run_dirs(const void *a, const void *b)
{
    return cmp_run_dir(a, b);
}

size_t fbx_newest_runs(const char *cmd, size_t k, char names[][FBX_PATH])
{
    run_dir *all = NULL;
    size_t n = 0;
    DIR *dp = opendir(".");
    struct dirent *e;
    while (dp && (e = readdir(dp))) {
        struct stat sb;
        run_dir *more;
        if (!fbr_is_run_dir(e->d_name) || strlen(e->d_name) >= sizeof all->name ||
            lstat(e->d_name, &sb) || !S_ISDIR(sb.st_mode) ||
            !(more = realloc(all, (n + 1) * sizeof *all)))
            continue;
        all = more;
        snprintf(all[n].name, sizeof all[n].name, "%s", e->d_name);
        all[n].mtime = sb.st_mtim;
        all[n].dumps = fbx_holds_dump(all[n].name);
        n++;
    }
    if (dp)
        closedir(dp);
    if (n)
        qsort(all, n, sizeof *all, cmp_run_dirs);
    /* The k newest that hold a dump; a newer run whose program used no backend left an empty
     * folder (older versions of run kept them): say why it is not the one read. */
    size_t found = 0;
    for (size_t i = n; i-- > 0 && found < k;) {
        if (all[i].dumps)
            snprintf(names[k - 1 - found++], FBX_PATH, "%s", all[i].name);
        else
            fprintf(stderr,
                    "fbcount: %s: skipping %s: no dump in it (no process of that run "
                    "used a backend)\n",
                    cmd, all[i].name);
    }
    if (found && found < k) /* oldest first, from names[0] */
        memmove(names, names + (k - found), found * sizeof *names);
    free(all);
    return found;
}

int fbx_default_dir(const char *cmd, char *buf, size_t len)
{
    char names[1][FBX_PATH];
    if (fbx_newest_runs(cmd, 1, names) == 0) {
        fbx_error(cmd, "no dump given and no fbcount-* folder with a dump in the working "
                       "directory (try --help)");
        return -1;
    }
    snprintf(buf, len, "%s", names[0]);
    fprintf(stderr, "fbcount: %s: reading %s (the newest fbcount-* folder here)\n", cmd, buf);
    return 0;
}
