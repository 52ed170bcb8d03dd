/* census.c - the in-process API (fbcount.h): scopes that record one thread, queries on what
 * they saw, the assertion helper, and dumps on demand. */
#include <stdlib.h>
#include <string.h>

#include "fbcount.h"
#include "report.h"

struct fbcount_census {
    fbc_table table;            /* touched only by the owning thread while open */
    struct fbcount_census *up;  /* the enclosing scope */
    fbc_report *report;         /* built at the first query by op */
    uint64_t total[2], bytes[2];
};

static fbcount_fail_hook fail_hook;

void fbc_census_add(struct fbcount_census *c, const fbc_event *ev)
{
    for (; c; c = c->up) {
        bool fresh;
        fbc_table_add(&c->table, ev, &fresh);
        c->total[ev->kind]++;
        c->bytes[ev->kind] += ev->nbytes;
    }
}

FBC_EXPORT void fbcount_scope_begin(void)
{
    fbc_init();
    fbcount_census *c = calloc(1, sizeof *c);
    if (!c)
        return; /* out of memory: nothing is recorded for this scope */
    c->up = fbc_t.scope;
    fbc_t.scope = c;
    fbc_t.state = FBC_T_ON;
}

FBC_EXPORT fbcount_census *fbcount_scope_end(void)
{
    fbcount_census *c = fbc_t.scope;
    if (!c)
        return NULL;
    fbc_t.scope = c->up;
    c->up = NULL;
    fbc_t.state = FBC_T_UNSET; /* decided again at the next event */
    return c;
}

FBC_EXPORT fbcount_census *fbcount_count(void (*fn)(void *), void *arg)
{
    fbcount_scope_begin();
    fn(arg);
    return fbcount_scope_end();
}

static fbc_report *report(fbcount_census *c)
{
    if (!c->report)
        c->report = fbc_report_build(&c->table);
    return c->report;
}

FBC_EXPORT uint64_t fbcount_census_total(const fbcount_census *c)
{
    return c ? c->total[FBC_FALLBACK] : 0;
}

FBC_EXPORT uint64_t fbcount_census_bytes(const fbcount_census *c)
{
    return c ? c->bytes[FBC_FALLBACK] : 0;
}

FBC_EXPORT uint64_t fbcount_census_host_total(const fbcount_census *c)
{
    return c ? c->total[FBC_HOST] : 0;
}

FBC_EXPORT uint64_t fbcount_census_op_count(fbcount_census *c, const char *op)
{
    fbc_report *r = c && op ? report(c) : NULL;
    return r ? fbc_report_op(r, FBC_FALLBACK, op, false) : 0;
}

FBC_EXPORT uint64_t fbcount_census_op_bytes(fbcount_census *c, const char *op)
{
    fbc_report *r = c && op ? report(c) : NULL;
    return r ? fbc_report_op(r, FBC_FALLBACK, op, true) : 0;
}

FBC_EXPORT uint64_t fbcount_census_host_op_count(fbcount_census *c, const char *op)
{
    fbc_report *r = c && op ? report(c) : NULL;
    return r ? fbc_report_op(r, FBC_HOST, op, false) : 0;
}

FBC_EXPORT int fbcount_census_format(fbcount_census *c, FILE *out)
{
    if (!c || !out)
        return -1;
    fbc_report *r = report(c);
    if (!r)
        return -1;
    char b[32];
    fbc_fmt_bytes(c->bytes[FBC_FALLBACK], b, sizeof b);
    int n = fprintf(out, "%llu fallback%s (%s left the GPU), %llu host-resident op%s\n",
                    (unsigned long long)c->total[FBC_FALLBACK], c->total[FBC_FALLBACK] == 1 ? "" : "s",
                    b, (unsigned long long)c->total[FBC_HOST], c->total[FBC_HOST] == 1 ? "" : "s");
    fbc_report_text(r, out, "", 0);
    return n < 0 || ferror(out) ? -1 : 0;
}

FBC_EXPORT int fbcount_census_format_buf(fbcount_census *c, char *buf, size_t cap)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return -1;
    int rc = fbcount_census_format(c, f);
    fclose(f);
    if (rc == 0 && buf && cap)
        snprintf(buf, cap, "%s", text);
    free(text);
    return rc == 0 ? (int)len : -1;
}

FBC_EXPORT void fbcount_census_free(fbcount_census *c)
{
    if (!c)
        return;
    fbc_report_free(c->report);
    fbc_table_clear(&c->table);
    free(c);
}

FBC_EXPORT int fbcount_dump(const char *path)
{
    fbc_init();
    return fbc_dump_process("api", path, NULL);
}

FBC_EXPORT void fbcount_set_fail_hook(fbcount_fail_hook hook)
{
    __atomic_store_n(&fail_hook, hook, __ATOMIC_RELEASE);
}

FBC_EXPORT bool fbcount_expect_none(fbcount_census *c, const char *what, const char *file, int line)
{
    if (!c || fbcount_census_total(c) == 0)
        return true;
    fbcount_fail_hook hook = __atomic_load_n(&fail_hook, __ATOMIC_ACQUIRE);
    if (hook)
        return hook(what, file, line, c);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return false;
    fprintf(f, "%s:%d: FBCOUNT_ASSERT_NONE(%s) failed: ", file, line, what);
    fbcount_census_format(c, f);
    fclose(f);
    fwrite(text, 1, len, stderr);
    free(text);
    return false;
}
