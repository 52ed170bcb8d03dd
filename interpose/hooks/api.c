/* api.c - the in-process API (fbcount.h): scopes that record one thread or the whole process,
 * queries on what they saw, the assertion helper, and dumps on demand. Reports are built on a
 * thread with a full stack (fbc_run_big): the caller's may be small. Names and sizes for front
 * ends are the rules' own (rules/opname.h, units.h). */
#include <stdlib.h>
#include <string.h>

#include "fbcount.h"
#include "fields.h"
#include "hooks.h"
#include "opname.h"
#include "units.h"

struct fbcount_census {
    fbc_scope *scope;
    fbc_report *report; /* built at the first query by op */
};

static fbcount_fail_hook fail_hook;

static fbcount_census *wrap(fbc_scope *s)
{
    if (!s)
        return NULL;
    fbcount_census *c = calloc(1, sizeof *c);
    if (!c) {
        fbc_scope_free(s);
        return NULL;
    }
    c->scope = s;
    return c;
}

FBC_EXPORT void fbcount_scope_begin(void)
{
    fbc_init();
    fbc_exits_redirect(); /* backends loaded since the shim: their calls are bound already */
    if (!fbc_scope_push())
        return; /* out of memory: nothing is recorded for this scope */
    fbc_t.state = FBC_T_ON;
}

FBC_EXPORT fbcount_census *fbcount_scope_end(void)
{
    fbc_scope *s = fbc_scope_pop();
    if (!s)
        return NULL;
    fbc_t.state = FBC_T_UNSET; /* decided again at the next event */
    return wrap(s);
}

FBC_EXPORT int fbcount_scope_begin_all(void)
{
    fbc_init();
    fbc_exits_redirect();
    if (!fbc_scope_open_all())
        return -1;
    fbc_wrap_slow(true); /* threads that do not record must still see the event */
    return 0;
}

FBC_EXPORT fbcount_census *fbcount_scope_end_all(void)
{
    fbc_scope *s = fbc_scope_close_all();
    if (s)
        fbc_wrap_slow(false);
    return wrap(s);
}

FBC_EXPORT fbcount_census *fbcount_count(void (*fn)(void *), void *arg)
{
    fbcount_scope_begin();
    fn(arg);
    return fbcount_scope_end();
}

static void build(void *arg)
{
    fbcount_census *c = arg;
    c->report = fbc_report_build(&c->scope->table);
}

static fbc_report *report(fbcount_census *c)
{
    if (!c->report)
        fbc_run_big(build, c);
    return c->report;
}

FBC_EXPORT uint64_t fbcount_census_total(const fbcount_census *c)
{
    return c ? c->scope->total[FBC_FALLBACK] : 0;
}

FBC_EXPORT uint64_t fbcount_census_bytes(const fbcount_census *c)
{
    return c ? c->scope->bytes[FBC_FALLBACK] : 0;
}

FBC_EXPORT uint64_t fbcount_census_ns(const fbcount_census *c)
{
    return c ? c->scope->ns[FBC_FALLBACK] : 0;
}

FBC_EXPORT uint64_t fbcount_census_host_total(const fbcount_census *c)
{
    return c ? c->scope->total[FBC_HOST] : 0;
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
    fbr_bytes(c->scope->bytes[FBC_FALLBACK], b, sizeof b);
    const uint64_t *t = c->scope->total;
    int n = fprintf(out, "%llu fallback%s (%s left the GPU), %llu host-resident op%s\n",
                    (unsigned long long)t[FBC_FALLBACK], t[FBC_FALLBACK] == 1 ? "" : "s", b,
                    (unsigned long long)t[FBC_HOST], t[FBC_HOST] == 1 ? "" : "s");
    fbc_report_text(r, out, "", 0);
    return n < 0 || ferror(out) ? -1 : 0;
}

/* Copies text into buf like snprintf: the length the whole text needs, -1 on error. */
static int copy_out(int rc, char *text, size_t len, char *buf, size_t cap)
{
    if (rc == 0 && buf && cap) {
        size_t n = len < cap - 1 ? len : cap - 1;
        memcpy(buf, text, n);
        buf[n] = '\0';
    }
    free(text);
    return rc == 0 ? (int)len : -1;
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
    return copy_out(rc, text, len, buf, cap);
}

static bool to_stream(void *ctx, const char *p, size_t n)
{
    return fwrite(p, 1, n, ctx) == n;
}

FBC_EXPORT int fbcount_census_json(fbcount_census *c, char *buf, size_t cap)
{
    fbc_report *r = c ? report(c) : NULL;
    if (!r)
        return -1;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return -1;
    char chunk[16384];
    fbc_writer w;
    fbc_w_init_sink(&w, chunk, sizeof chunk, to_stream, f);
    fputc('{', f);
    fbc_report_json(&w, r, true);
    fbc_w_flush(&w);
    fputs("}", f);
    int rc = w.failed || ferror(f) ? -1 : 0;
    fclose(f);
    return copy_out(rc, text, len, buf, cap);
}

FBC_EXPORT void fbcount_census_free(fbcount_census *c)
{
    if (!c)
        return;
    fbc_report_free(c->report);
    fbc_scope_free(c->scope);
    free(c);
}

FBC_EXPORT int fbcount_dump(const char *path)
{
    fbc_init();
    /* A census of zero from a process that counts nothing would be a lie a gate believes. */
    if (!__atomic_load_n(&fbc_proc.on, __ATOMIC_ACQUIRE)) {
        fbc_warn("dump: this process's census is not recording (libfbcount was loaded, not "
                 "preloaded, and FBCOUNT is not 1): nothing written; `fbcount run`, LD_PRELOAD "
                 "or FBCOUNT=1 records it, and scopes (fbcount_count) count what they enclose");
        return -1;
    }
    fbc_dump_req req = {.reason = FBR_REASON_API, .path = path, .always = true, .patient = true};
    return fbc_dump_write(&req, NULL, NULL, 0);
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

FBC_EXPORT const char *fbcount_format_bytes(uint64_t n, char *buf, size_t cap)
{
    return fbr_bytes(n, buf, cap);
}

/* The prefixes a caller gave, else FBCOUNT_OP_PREFIX as it is now: a front end may set it
 * after the shim read it (the Python package's os.environ is this environment). */
static void prefixes_of(const char *given, fbr_names *out)
{
    fbr_names_parse(given ? given : getenv(fbr_var_names[FBR_VAR_OP_PREFIX]), FBR_DEFAULT_OP_PREFIX,
                    out);
}

FBC_EXPORT const char *fbcount_op_short(const char *op, const char *prefixes, char *buf, size_t cap)
{
    fbr_names p;
    prefixes_of(prefixes, &p);
    snprintf(buf, cap, "%s", op ? fbr_op_short(op, &p) : "");
    fbr_names_free(&p);
    return buf;
}

FBC_EXPORT bool fbcount_op_named(const char *name, const char *op, const char *prefixes)
{
    fbr_names p;
    prefixes_of(prefixes, &p);
    bool named = name && op && fbr_op_named(name, op, &p);
    fbr_names_free(&p);
    return named;
}

FBC_EXPORT size_t fbcount_op_closest(const char *name, const char *const *known, size_t n,
                                     const char *prefixes, const char **out, size_t max)
{
    fbr_names p;
    prefixes_of(prefixes, &p);
    size_t got = fbr_op_closest(name, known, n, &p, out, max);
    fbr_names_free(&p);
    return got;
}
