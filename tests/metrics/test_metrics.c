/* The metrics formatter (rules/metrics.h): exact text for known rows, merging, escaping,
 * times, optional labels, and errors from the caller's write function. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

typedef struct {
    char *buf;
    size_t len, cap;
    int calls;
    int fail_at; /* 0: never */
} sink;

static int sink_write(void *ctx, const char *buf, size_t len)
{
    sink *s = ctx;
    s->calls++;
    if (s->fail_at && s->calls >= s->fail_at)
        return 7;
    if (s->len + len + 1 > s->cap) {
        s->cap = (s->len + len + 1) * 2;
        s->buf = realloc(s->buf, s->cap);
        cr_assert_not_null(s->buf);
    }
    memcpy(s->buf + s->len, buf, len);
    s->len += len;
    s->buf[s->len] = '\0';
    return 0;
}

static char *format(const fbr_metrics_proc *p, size_t np, const fbr_metrics_row *r, size_t nr)
{
    sink s = {0};
    int rc = fbr_metrics_format(p, np, r, nr, sink_write, &s);
    cr_assert_eq(rc, 0, "format returned %d", rc);
    cr_assert_not_null(s.buf);
    return s.buf;
}

static const fbr_metrics_proc lenet = {.pid = 4242,
                                       .rank = 0,
                                       .host = "box",
                                       .exe = "/opt/bin/vkt-lenet",
                                       .has_time = true,
                                       .has_backend = true,
                                       .native = 1380,
                                       .fallback = 280,
                                       .host_ops = 0};

Test(metrics, exact_text)
{
    fbr_metrics_row rows[] = {
        {0, FBR_METRICS_FALLBACK, "vkt_dot", "train_step", "lenet.c", 230, 180, 5767168, 412000000},
        {0, FBR_METRICS_HOST, "vkt_transpose", "train_step", NULL, 0, 3, 96, 1500},
    };
    char *t = format(&lenet, 1, rows, 2);
    const char *want =
        "# HELP fbcount_fallbacks_total Fallbacks (host_result calls): ops that left the GPU.\n"
        "# TYPE fbcount_fallbacks_total counter\n"
        "fbcount_fallbacks_total{backend=\"vkt\",op=\"vkt_dot\",site=\"train_step\",file=\"lenet."
        "c\",line=\"230\","
        "pid=\"4242\",rank=\"0\",host=\"box\",exe=\"vkt-lenet\"} 180\n"
        "# HELP fbcount_fallback_bytes_total Bytes of the results that fallbacks computed on the "
        "host.\n"
        "# TYPE fbcount_fallback_bytes_total counter\n"
        "fbcount_fallback_bytes_total{backend=\"vkt\",op=\"vkt_dot\",site=\"train_step\",file="
        "\"lenet.c\","
        "line=\"230\",pid=\"4242\",rank=\"0\",host=\"box\",exe=\"vkt-lenet\"} 5767168\n"
        "# HELP fbcount_fallback_seconds_total Wall time of fallbacks (what it covers: the "
        "dump's config.timing).\n"
        "# TYPE fbcount_fallback_seconds_total counter\n"
        "fbcount_fallback_seconds_total{backend=\"vkt\",op=\"vkt_dot\",site=\"train_step\",file="
        "\"lenet.c\","
        "line=\"230\",pid=\"4242\",rank=\"0\",host=\"box\",exe=\"vkt-lenet\"} 0.412\n"
        "# HELP fbcount_host_ops_total Host-resident ops: downstream work on tensors a fallback "
        "left on the host.\n"
        "# TYPE fbcount_host_ops_total counter\n"
        "fbcount_host_ops_total{backend=\"vkt\",op=\"vkt_transpose\",site=\"train_step\",pid="
        "\"4242\",rank=\"0\","
        "host=\"box\",exe=\"vkt-lenet\"} 3\n"
        "# HELP fbcount_host_op_bytes_total Bytes of the results of host-resident ops.\n"
        "# TYPE fbcount_host_op_bytes_total counter\n"
        "fbcount_host_op_bytes_total{backend=\"vkt\",op=\"vkt_transpose\",site=\"train_step\",pid="
        "\"4242\","
        "rank=\"0\",host=\"box\",exe=\"vkt-lenet\"} 96\n"
        "# HELP fbcount_host_op_seconds_total Wall time of host-resident ops.\n"
        "# TYPE fbcount_host_op_seconds_total counter\n"
        "fbcount_host_op_seconds_total{backend=\"vkt\",op=\"vkt_transpose\",site=\"train_step\","
        "pid=\"4242\","
        "rank=\"0\",host=\"box\",exe=\"vkt-lenet\"} 0.0000015\n"
        "# HELP fbcount_backend_ops_total Ops the backend ran, by path: native, fallback, "
        "host-resident.\n"
        "# TYPE fbcount_backend_ops_total counter\n"
        "fbcount_backend_ops_total{backend=\"vkt\",pid=\"4242\",rank=\"0\",host=\"box\",exe=\"vkt-"
        "lenet\","
        "path=\"native\"} 1380\n"
        "fbcount_backend_ops_total{backend=\"vkt\",pid=\"4242\",rank=\"0\",host=\"box\",exe=\"vkt-"
        "lenet\","
        "path=\"fallback\"} 280\n"
        "fbcount_backend_ops_total{backend=\"vkt\",pid=\"4242\",rank=\"0\",host=\"box\",exe=\"vkt-"
        "lenet\","
        "path=\"host\"} 0\n"
        "# HELP fbcount_native_share Share of the backend's ops that ran natively (0 to 1).\n"
        "# TYPE fbcount_native_share gauge\n"
        "fbcount_native_share{backend=\"vkt\",pid=\"4242\",rank=\"0\",host=\"box\",exe=\"vkt-"
        "lenet\"} 0.831325\n"
        "# EOF\n";
    cr_assert_str_eq(t, want);
    free(t);
}

Test(metrics, empty_census_is_just_eof)
{
    char *t = format(NULL, 0, NULL, 0);
    cr_assert_str_eq(t, "# EOF\n");
    free(t);
}

Test(metrics, equal_series_are_added_once_and_sorted)
{
    fbr_metrics_proc p[2] = {lenet, lenet}; /* two censuses with the same labels */
    p[1].has_backend = false;
    fbr_metrics_row rows[] = {
        {1, FBR_METRICS_FALLBACK, "vkt_dot", "b", NULL, 0, 5, 50, 0},
        {0, FBR_METRICS_FALLBACK, "vkt_dot", "a", NULL, 0, 1, 10, 0},
        {0, FBR_METRICS_FALLBACK, "vkt_dot", "b", NULL, 0, 2, 20, 0},
        {0, FBR_METRICS_FALLBACK, "vkt_conv", "b", NULL, 0, 4, 40, 0},
    };
    char *t = format(p, 2, rows, 4);
    const char *conv =
        strstr(t, "fbcount_fallbacks_total{backend=\"vkt\",op=\"vkt_conv\",site=\"b\"");
    const char *a = strstr(t, "fbcount_fallbacks_total{backend=\"vkt\",op=\"vkt_dot\",site=\"a\"");
    const char *b = strstr(t, "fbcount_fallbacks_total{backend=\"vkt\",op=\"vkt_dot\",site=\"b\"");
    cr_assert(conv && a && b && conv < a && a < b, "%s", t);
    cr_assert(strstr(b, "} 7\n"), "b's two rows add up: %s", t);
    cr_assert_null(
        strstr(b + 1, "fbcount_fallbacks_total{backend=\"vkt\",op=\"vkt_dot\",site=\"b\""),
        "one series per label set: %s", t);
    cr_assert(strstr(t, "path=\"native\"} 1380\n"), "backend counters of the one that has them");
    free(t);
}

Test(metrics, escaping_and_utf8)
{
    fbr_metrics_proc p = {.pid = 1, .rank = -1, .exe = "a\"b"};
    fbr_metrics_row r = {0,
                         FBR_METRICS_FALLBACK,
                         "op\\x",
                         "line1\nline2 \xC3\xA9 \xF0\x9F\x98\x80",
                         "bad\xFF\xC3(\xED\xA0\x80\xC0\xAF.c",
                         1,
                         1,
                         1,
                         0};
    char *t = format(&p, 1, &r, 1);
    cr_assert(
        strstr(t,
               "{backend=\"vkt\",op=\"op\\\\x\",site=\"line1\\nline2 \xC3\xA9 \xF0\x9F\x98\x80\","
               "file=\"bad\xEF\xBF\xBD\xEF\xBF\xBD(\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"
               "\xEF\xBF\xBD\xEF\xBF\xBD.c\",line=\"1\",pid=\"1\",exe=\"a\\\"b\"} 1\n"),
        "%s", t);
    free(t);
}

Test(metrics, optional_labels_left_out)
{
    fbr_metrics_proc p = {.pid = 9, .rank = -1, .host = "", .exe = NULL};
    fbr_metrics_row r = {0, FBR_METRICS_FALLBACK, NULL, NULL, NULL, -3, 2, 8, 0};
    char *t = format(&p, 1, &r, 1);
    cr_assert(strstr(t, "fbcount_fallbacks_total{backend=\"vkt\",op=\"(unknown)\",pid=\"9\"} 2\n"),
              "%s", t);
    cr_assert_null(strstr(t, "rank="));
    cr_assert_null(strstr(t, "host="));
    cr_assert_null(strstr(t, "seconds"), "no times without has_time: %s", t);
    cr_assert_null(strstr(t, "native_share"), "no share without backend counters: %s", t);
    free(t);
}

Test(metrics, seconds_are_exact_decimals)
{
    static const struct {
        uint64_t ns;
        const char *text;
    } cases[] = {{0, "} 0\n"},
                 {1, "} 0.000000001\n"},
                 {3000000000u, "} 3\n"},
                 {UINT64_C(9007199254740993), "} 9007199.254740993\n"},
                 {100000000, "} 0.1\n"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        fbr_metrics_proc p = {.pid = 1, .rank = -1, .has_time = true};
        fbr_metrics_row r = {0, FBR_METRICS_FALLBACK, "vkt_dot", NULL, NULL, 0, 1, 1, cases[i].ns};
        char *t = format(&p, 1, &r, 1);
        const char *s = strstr(t, "fbcount_fallback_seconds_total{");
        cr_assert(s && strstr(s, cases[i].text) == strchr(s, '}'), "%s: %s", cases[i].text, t);
        free(t);
    }
}

Test(metrics, sums_saturate)
{
    fbr_metrics_proc p = {.pid = 1, .rank = -1};
    fbr_metrics_row r[2] = {
        {0, FBR_METRICS_FALLBACK, "vkt_dot", NULL, NULL, 0, UINT64_MAX - 1, 0, 0},
        {0, FBR_METRICS_FALLBACK, "vkt_dot", NULL, NULL, 0, 5, 0, 0}};
    char *t = format(&p, 1, r, 2);
    cr_assert(strstr(t, "} 18446744073709551615\n"), "%s", t);
    free(t);
}

Test(metrics, share_of_zero_ops_is_left_out)
{
    fbr_metrics_proc p = {.pid = 1, .rank = 3, .has_backend = true};
    char *t = format(&p, 1, NULL, 0);
    cr_assert(
        strstr(
            t,
            "fbcount_backend_ops_total{backend=\"vkt\",pid=\"1\",rank=\"3\",path=\"native\"} 0\n"),
        "%s", t);
    cr_assert_null(strstr(t, "fbcount_native_share{"), "0/0 is no share: %s", t);
    free(t);
}

Test(metrics, large_output_arrives_whole)
{
    enum { N = 3000 };
    fbr_metrics_row *r = calloc(N, sizeof *r);
    char(*names)[32] = calloc(N, sizeof *names);
    fbr_metrics_proc p = {.pid = 1, .rank = -1};
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "site_%05d", i);
        r[i] = (fbr_metrics_row){0, FBR_METRICS_FALLBACK, "vkt_dot", names[i], NULL,
                                 0, (uint64_t)i + 1,      0,         0};
    }
    sink s = {0};
    cr_assert_eq(fbr_metrics_format(&p, 1, r, N, sink_write, &s), 0);
    cr_assert_gt(s.calls, 10, "written in pieces");
    int seen = 0;
    for (const char *q = s.buf; (q = strstr(q, "fbcount_fallbacks_total{")); q++) {
        char want[64];
        snprintf(want, sizeof want, "site=\"site_%05d\",pid=\"1\"} %d\n", seen, seen + 1);
        cr_assert(!strncmp(strstr(q, ",site=") + 1, want, strlen(want)), "row %d", seen);
        seen++;
    }
    cr_assert_eq(seen, N);
    cr_assert(s.len > 6 && !strcmp(s.buf + s.len - 6, "# EOF\n"));
    free(s.buf);
    free(r);
    free(names);
}

Test(metrics, write_error_stops_and_is_returned)
{
    enum { N = 500 };
    fbr_metrics_row r[N];
    fbr_metrics_proc p = {.pid = 1, .rank = -1};
    for (int i = 0; i < N; i++)
        r[i] = (fbr_metrics_row){0, FBR_METRICS_FALLBACK, "vkt_dot", NULL, NULL, i + 1, 1, 0, 0};
    sink s = {.fail_at = 2};
    cr_assert_eq(fbr_metrics_format(&p, 1, r, N, sink_write, &s), 7);
    cr_assert_eq(s.calls, 2, "no write after the failing one");
    free(s.buf);
}

Test(metrics, bad_process_index_writes_nothing)
{
    fbr_metrics_proc p = {.pid = 1, .rank = -1};
    fbr_metrics_row r = {1, FBR_METRICS_FALLBACK, "vkt_dot", NULL, NULL, 0, 1, 0, 0};
    sink s = {0};
    cr_assert_eq(fbr_metrics_format(&p, 1, &r, 1, sink_write, &s), -2);
    cr_assert_eq(s.calls, 0);
}

Test(metrics, backends_transfers_and_unknown_sizes)
{
    fbr_metrics_counters be[2] = {{"torch", 10, 3, 1}, {"vkt", 5, 0, 0}};
    fbr_metrics_proc p = {
        .pid = 7, .rank = -1, .has_backend = true, .native = 99, .backends = be, .nbackends = 2};
    fbr_metrics_row r[] = {
        {0, FBR_METRICS_FALLBACK, "aten::gelu.out", "fwd", "m.py", 7, 3, 0, 0},
        {0, FBR_METRICS_FALLBACK, "vkt_dot", NULL, NULL, 0, 2, 64, 0},
        {0, FBR_METRICS_TRANSFER, "host -> Vulkan0", NULL, NULL, 0, 4, 4096, 0},
    };
    fbr_metrics_origin from[] = {
        {"torch", true, false}, {NULL, false, false}, {"ggml", false, false}};
    sink s = {0};
    cr_assert_eq(fbr_metrics_format_from(&p, 1, r, from, 3, sink_write, &s), 0);
    const char *t = s.buf;
    cr_assert(strstr(t, "fbcount_fallbacks_total{backend=\"torch\",op=\"aten::gelu.out\","
                        "site=\"fwd\",file=\"m.py\",line=\"7\",pid=\"7\"} 3\n"),
              "%s", t);
    cr_assert(strstr(t, "fbcount_fallback_bytes_total{backend=\"vkt\",op=\"vkt_dot\""), "%s", t);
    cr_assert_null(strstr(t, "fbcount_fallback_bytes_total{backend=\"torch\""),
                   "no bytes sample where sizes are unknown: %s", t);
    cr_assert(strstr(t, "fbcount_transfers_total{backend=\"ggml\",op=\"host -> Vulkan0\","
                        "pid=\"7\"} 4\n"),
              "%s", t);
    cr_assert(strstr(t, "fbcount_transfer_bytes_total{backend=\"ggml\",op=\"host -> Vulkan0\","
                        "pid=\"7\"} 4096\n"),
              "%s", t);
    cr_assert(
        strstr(t, "fbcount_backend_ops_total{backend=\"torch\",pid=\"7\",path=\"fallback\"} 3\n"),
        "%s", t);
    cr_assert(strstr(t, "fbcount_backend_ops_total{backend=\"vkt\",pid=\"7\",path=\"native\"} 5\n"),
              "backends[] replaces the top-level counters: %s", t);
    cr_assert(strstr(t, "fbcount_native_share{backend=\"torch\",pid=\"7\"} 0.714286\n"), "%s", t);
    free(s.buf);
}
