/* test_api.c - the in-process API with libfbcount linked ahead of the backend: scopes count
 * exactly (nested, many threads), attribute to the innermost vkt_ op, pass results through,
 * and the assertion helper reports through its hook. Run twice by meson: scopes only, and
 * with FBCOUNT=1 (process census on) where the dumps are read back with jansson. */
#define FBCOUNT_NO_CRITERION /* test the hook form of FBCOUNT_ASSERT_NONE here */
#include <criterion/criterion.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fakevkt.h"
#include "fbcount.h"

#define SITE __attribute__((noinline))

static fake_tensor t = {0, 2, {4, 4}};

SITE static void api_site(void *arg)
{
    int n = *(int *)arg;
    for (int i = 0; i < n; i++)
        vkt_dot(&t, 64);
    vkt_add(&t, 16);
    vkt_add(&t, 16);
}

SITE static void nested_inner(void *arg)
{
    (void)arg;
    vkt_matmul(&t, 8);
    vkt_transpose(&t, 4);
    fake_raw(2);
}

SITE static void nested_outer(void *arg)
{
    vkt_dot(&t, 1);
    fbcount_census *inner = fbcount_count(nested_inner, NULL);
    *(fbcount_census **)arg = inner;
    vkt_add(&t, 1);
}

Test(api, counts_ops_and_bytes_exactly)
{
    int n = 3;
    fbcount_census *c = fbcount_count(api_site, &n);
    cr_assert_not_null(c);
    cr_assert_eq(fbcount_census_total(c), 5);
    cr_assert_eq(fbcount_census_bytes(c), 3 * 64 + 2 * 16);
    cr_assert_eq(fbcount_census_op_count(c, "vkt_dot"), 3);
    cr_assert_eq(fbcount_census_op_count(c, "dot"), 3, "a short name, as vkt names its ops");
    cr_assert_eq(fbcount_census_op_count(c, "my_dot"), 0, "another prefix is another op");
    cr_assert_eq(fbcount_census_op_bytes(c, "vkt_dot"), 192);
    cr_assert_eq(fbcount_census_op_count(c, "vkt_add"), 2);
    cr_assert_eq(fbcount_census_op_count(c, "vkt_matmul"), 0);
    char buf[4096];
    int len = fbcount_census_format_buf(c, buf, sizeof buf);
    cr_assert_gt(len, 0);
    cr_assert(strstr(buf, "vkt_dot") && strstr(buf, "api_site"), "format: %s", buf);
    fbcount_census_free(c);
}

Test(api, nested_scopes_count_inner_events_in_both)
{
    fbcount_census *inner = NULL;
    fbcount_census *outer = fbcount_count(nested_outer, &inner);
    cr_assert_eq(fbcount_census_total(inner), 2); /* matmul (as dot) + raw */
    cr_assert_eq(fbcount_census_total(outer), 4); /* dot, add, and the inner two */
    /* A public op calling another: the innermost vkt_ frame is the op. */
    cr_assert_eq(fbcount_census_op_count(inner, "vkt_dot"), 1);
    cr_assert_eq(fbcount_census_op_count(inner, "vkt_matmul"), 0);
    cr_assert_eq(fbcount_census_op_count(inner, "(unknown)"), 1);
    cr_assert_eq(fbcount_census_host_total(inner), 1);
    cr_assert_eq(fbcount_census_host_op_count(inner, "vkt_transpose"), 1);
    cr_assert_eq(fbcount_census_op_count(outer, "vkt_dot"), 2);
    cr_assert_eq(fbcount_census_host_op_count(outer, "vkt_transpose"), 1);
    fbcount_census_free(inner);
    fbcount_census_free(outer);
}

Test(api, results_pass_through_unchanged)
{
    uint64_t before = fake_calls();
    fake_set_rc(-42);
    fbcount_scope_begin();
    int r = vkt_dot(&t, 4);
    fbcount_census *c = fbcount_scope_end();
    fake_set_rc(0);
    cr_assert_eq(r, -42);
    cr_assert_eq(fake_calls() - before, 1, "the backend must see exactly one call");
    cr_assert_eq(fbcount_census_total(c), 1);
    fbcount_census_free(c);
    cr_assert_null(fbcount_scope_end(), "no scope is open any more");
}

Test(api, outside_a_scope_nothing_is_counted_by_scopes)
{
    vkt_dot(&t, 4);
    fbcount_census *c = fbcount_count(nested_inner, NULL);
    cr_assert_eq(fbcount_census_total(c), 2);
    fbcount_census_free(c);
}

#define THREADS 8
#define PER_THREAD 20000

SITE static void hammer(void *arg)
{
    (void)arg;
    for (int i = 0; i < PER_THREAD; i++)
        vkt_dot(&t, 2);
}

static void *thread_main(void *arg)
{
    fbcount_census **out = arg;
    *out = fbcount_count(hammer, NULL);
    return NULL;
}

Test(api, many_threads_count_exactly, .timeout = 60)
{
    pthread_t th[THREADS];
    fbcount_census *c[THREADS];
    uint64_t before = fake_calls();
    for (int i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, thread_main, &c[i]);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    cr_assert_eq(fake_calls() - before, THREADS * PER_THREAD);
    for (int i = 0; i < THREADS; i++) {
        cr_assert_eq(fbcount_census_total(c[i]), PER_THREAD);
        cr_assert_eq(fbcount_census_op_count(c[i], "vkt_dot"), PER_THREAD);
        fbcount_census_free(c[i]);
    }
}

static int hook_calls;
static uint64_t hook_seen;
static bool hook(const char *what, const char *file, int line, fbcount_census *c)
{
    hook_calls++;
    hook_seen = fbcount_census_op_count(c, "vkt_add");
    return strstr(what, "vkt_add") && strstr(file, "test_api.c") && line > 0 ? false : true;
}

Test(api, assert_none_passes_clean_code_and_reports_fallbacks)
{
    fbcount_set_fail_hook(hook);
    bool ok = FBCOUNT_ASSERT_NONE(vkt_native());
    cr_assert(ok);
    cr_assert_eq(hook_calls, 0);
    ok = FBCOUNT_ASSERT_NONE(vkt_add(&t, 8); vkt_add(&t, 8));
    cr_assert_not(ok);
    cr_assert_eq(hook_calls, 1);
    cr_assert_eq(hook_seen, 2);
    fbcount_set_fail_hook(NULL);
}

Test(api, default_hook_returns_false)
{
    bool ok = FBCOUNT_ASSERT_NONE(vkt_dot(&t, 8));
    cr_assert_not(ok);
}

/* With the process census on (FBCOUNT=1): exact counts across threads in a dump. */
static json_t *op_entry(json_t *d, const char *key, const char *op)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(d, key), i,
                       e) if (!strcmp(json_string_value(json_object_get(e, "op")), op)) return e;
    return NULL;
}

Test(api, process_dump_counts_exactly, .timeout = 60)
{
    const char *on = getenv("FBCOUNT");
    if (!on || strcmp(on, "1"))
        cr_skip_test("process census off (run with FBCOUNT=1)");
    char path[] = "/tmp/fbcount-api-XXXXXX";
    cr_assert_not_null(mkdtemp(path));
    char file[128];
    snprintf(file, sizeof file, "%s/a.json", path);
    pthread_t th[THREADS];
    fbcount_census *c[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, thread_main, &c[i]);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < THREADS; i++)
        fbcount_census_free(c[i]);
    cr_assert_eq(fbcount_dump(file), 0);
    json_error_t err;
    json_t *d = json_load_file(file, 0, &err);
    cr_assert_not_null(d, "%s", err.text);
    cr_assert_str_eq(json_string_value(json_object_get(d, "reason")), "api");
    json_t *dot = op_entry(d, "ops", "vkt_dot");
    cr_assert_not_null(dot);
    cr_assert_geq(json_integer_value(json_object_get(dot, "count")), THREADS * PER_THREAD);
    json_t *site = json_array_get(json_object_get(dot, "sites"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(site, "site")), "hammer");
    json_t *shape = json_array_get(json_object_get(dot, "shapes"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(shape, "dtype")), "f32");
    json_decref(d);
    unlink(file);
    rmdir(path);
}
