/* runner.h - the shim's suites run programs under the preloaded libfbcount.so in a fresh
 * directory and read the dumps they leave there with jansson. */
#ifndef SHIM_RUNNER_H
#define SHIM_RUNNER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct {
    int status;
    char out[8192], err[16384];
    char dir[64];
} result;

extern char tmpdir[64]; /* the directory a test's programs run in */

void make_dir(void);   /* a new tmpdir (a suite's .init) */
void remove_dir(void); /* removes it and the files in it (a suite's .fini) */
/* Skips the running case, its folder removed first: Criterion runs no .fini for a case that
 * skips, and the folder would be left in /tmp. */
#define RUNNER_SKIP(...)                                                                           \
    do {                                                                                           \
        remove_dir();                                                                              \
        cr_skip_test(__VA_ARGS__);                                                                 \
    } while (0)

/* Runs argv in tmpdir with env (NAME=VALUE..., NULL-terminated) on top of a clean FBCOUNT_
 * environment; the shim is preloaded unless preload is false. Waits for it (30 s at most
 * for its output) and keeps its status, stdout and stderr. */
void run(result *r, bool preload, const char *const *env, const char *const *argv);

/* The dumps in tmpdir (regular *.json files), parsed; reason NULL for any. */
int dumps(json_t **out, int cap, const char *reason);
json_t *one_dump(const char *reason); /* asserts there is exactly one */

json_int_t num(json_t *o, const char *path);              /* "total.fallbacks": an integer member */
json_t *op(json_t *d, const char *key, const char *name); /* key: "ops" or "host_ops" */
json_int_t op_count(json_t *d, const char *key, const char *name);
json_int_t site_count(json_t *d, const char *opname, const char *site);
/* An integer field of that site's entry (0 when absent). */
json_int_t site_field(json_t *d, const char *opname, const char *site, const char *field);
/* Frame i of stack st: an index into "frame_table", or inline (crash dumps). */
json_t *frame(json_t *d, json_t *st, size_t i);
int lines(const char *s, const char *needle); /* occurrences of needle in s */

#endif
