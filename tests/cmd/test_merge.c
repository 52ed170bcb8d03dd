/* test_census.c - merging dumps, the allow file and byte units. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "allow.h"
#include "merge.h"
#include "flame.h"
#include "units.h"

#define DATA FBCOUNT_TEST_DATA

static char err[512];

static fbm_census *load(const char *path)
{
    fbm_census *c = fbm_census_new();
    char *paths[] = {(char *)path};
    fbd_status st = fbm_census_load(c, paths, 1, err, sizeof err);
    cr_assert_eq(st, FBD_OK, "%s", err);
    return c;
}

Test(census, two_processes_add_up)
{
    fbm_census *c = load(DATA "/run1");
    fbm_summary s = fbm_census_summary(c);
    cr_expect_eq(s.dumps, 2);
    cr_expect_eq(s.superseded, 0);
    cr_expect_eq(s.total.fallbacks, 24);
    cr_expect_eq(s.total.bytes, 8192);
    cr_expect_eq(s.total.host_ops, 6);
    cr_expect_eq(s.total.max_bytes, 1024);
    cr_expect(s.backend.present);
    cr_expect_eq(s.backend.native, 880); /* only one dump carries backend counters */
    size_t n;
    const fbm_row *r = fbm_census_rows(c, FBD_FALLBACK, FBM_BY_OP, FBM_SORT_BYTES, &n);
    cr_assert_eq(n, 2);
    /* Equal bytes: the larger count comes first. */
    cr_expect_str_eq(r[0].key, "vkt_dot");
    cr_expect_eq(r[0].count, 14);
    cr_expect_eq(r[0].max_bytes, 512);
    cr_assert_eq(r[0].nparts, 2);
    cr_expect_str_eq(r[0].parts[0].name, "train_step (lenet.c:120)"); /* sites with their line */
    cr_expect_eq(r[0].parts[0].count, 10);
    fbm_census_free(c);
}

Test(census, latest_dump_of_a_process_wins)
{
    fbm_census *c = load(DATA "/snapshots");
    fbm_summary s = fbm_census_summary(c);
    cr_expect_eq(s.dumps, 1);
    cr_expect_eq(s.superseded, 2);
    cr_expect_eq(s.total.fallbacks, 36); /* seq 3 (x3), not 12+24+36 */
    cr_expect_str_eq(fbd_reason(fbm_census_dump(c, 0)), "exit");
    fbm_census_free(c);
}

Test(census, order_of_loading_does_not_matter)
{
    fbm_census *c = fbm_census_new();
    char *paths[] = {DATA "/snapshots/fbcount.lenet.500.3.json",
                     DATA "/snapshots/fbcount.lenet.500.1.json"};
    cr_assert_eq(fbm_census_load(c, paths, 2, err, sizeof err), FBD_OK, "%s", err);
    cr_expect_eq(fbd_seq(fbm_census_dump(c, 0)), 3);
    fbm_census_free(c);
}

Test(census, site_stack_and_shape_views)
{
    fbm_census *c = load(DATA "/run1");
    size_t n;
    const fbm_row *r = fbm_census_rows(c, FBD_FALLBACK, FBM_BY_SITE, FBM_SORT_COUNT, &n);
    cr_assert_eq(n, 3);
    cr_expect_str_eq(r[0].key,
                     "conv_backward (lenet.c:88)"); /* 10 calls, 4 KiB beats train_step's 3 */
    r = fbm_census_rows(c, FBD_FALLBACK, FBM_BY_STACK, FBM_SORT_BYTES, &n);
    cr_assert_eq(n, 3);
    cr_expect_eq(r[0].nframes, 5);
    cr_expect_str_eq(r[0].labels[0], "main");
    cr_expect_str_eq(r[0].labels[4], "host_result");
    r = fbm_census_rows(c, FBD_FALLBACK, FBM_BY_SHAPE, FBM_SORT_COUNT, &n);
    cr_assert_eq(n, 2);
    cr_expect_str_eq(r[0].key, "vkt_dot f32[16x32]");
    cr_expect(r[0].has_bytes && r[0].has_time); /* the op's one shape: its bytes and time */
    cr_expect_eq(r[0].bytes, 4096);
    r = fbm_census_rows(c, FBD_HOST, FBM_BY_OP, FBM_SORT_BYTES, &n);
    cr_assert_eq(n, 1);
    cr_expect_eq(r[0].count, 6);
    cr_expect_not_null(fbm_census_find(c, FBD_FALLBACK, FBM_BY_OP, "vkt", "vkt_conv"));
    cr_expect_null(fbm_census_find(c, FBD_FALLBACK, FBM_BY_OP, "vkt", "vkt_sort"));
    fbm_census_free(c);
}

Test(census, a_bad_file_in_a_directory_stops_the_load)
{
    char dir[] = "/tmp/fbcount-dir-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char p[128];
    snprintf(p, sizeof p, "%s/a.json", dir);
    FILE *f = fopen(p, "w");
    fputs("{\"schema\":\"fbcount/1\",", f);
    fclose(f);
    fbm_census *c = fbm_census_new();
    char *paths[] = {dir};
    fbd_status st = fbm_census_load(c, paths, 1, err, sizeof err);
    unlink(p);
    rmdir(dir);
    cr_expect_eq(st, FBD_EINVALID);
    cr_expect(strstr(err, "a.json: line 1: truncated") != NULL, "%s", err);
    fbm_census_free(c);
}

Test(census, frame_labels)
{
    char b[64];
    fbd_frame f = {.module = "/usr/lib/libvkt.so", .offset = 0x1f30, .has_offset = true};
    fbm_frame_label(&f, FBM_FRAMES_FUNC, b, sizeof b);
    cr_expect_str_eq(b, "libvkt.so+0x1f30");
    f.symbol = "vkt_dot";
    fbm_frame_label(&f, FBM_FRAMES_FUNC, b, sizeof b);
    cr_expect_str_eq(b, "vkt_dot");
}

Test(units, bytes_print_in_binary_units)
{
    char b[32];
    cr_expect_str_eq(fbr_bytes(0, b, sizeof b), "0 B");
    cr_expect_str_eq(fbr_bytes(1023, b, sizeof b), "1023 B");
    cr_expect_str_eq(fbr_bytes(1536, b, sizeof b), "1.5 KiB");
    cr_expect_str_eq(fbr_bytes(100ull << 20, b, sizeof b), "100 MiB");
}

Test(units, sizes_parse_with_suffixes)
{
    uint64_t v;
    cr_expect_eq(fbr_parse_bytes("4096", &v), 0);
    cr_expect_eq(v, 4096);
    cr_expect_eq(fbr_parse_bytes("4K", &v), 0);
    cr_expect_eq(v, 4096);
    cr_expect_eq(fbr_parse_bytes("4KiB", &v), 0);
    cr_expect_eq(v, 4096);
    cr_expect_eq(fbr_parse_bytes("4kb", &v), 0);
    cr_expect_eq(v, 4000);
    cr_expect_eq(fbr_parse_bytes("1.5M", &v), 0);
    cr_expect_eq(v, 1572864);
    cr_expect_eq(fbr_parse_bytes("2 GiB", &v), 0);
    cr_expect_eq(v, 2ull << 30);
    cr_expect_eq(fbr_parse_bytes("-1", &v), -1);
    cr_expect_eq(fbr_parse_bytes("1.5", &v), -1);
    cr_expect_eq(fbr_parse_bytes("12Q", &v), -1);
    cr_expect_eq(fbr_parse_bytes("", &v), -1);
    cr_expect_eq(fbr_parse_bytes("99999999999T", &v), -1);
    cr_expect_eq(fbr_parse_count("12", &v), 0);
    cr_expect_eq(fbr_parse_count("-3", &v), -1);
    cr_expect_eq(fbr_parse_count("99999999999999999999999", &v), -1);
}

Test(allow, file_format)
{
    char path[] = "/tmp/fbcount-allow-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("# expected fallbacks\n\n  vkt_sort   # no sort shader yet\nvkt_conv\n", f);
    fclose(f);
    bool unreadable;
    fbr_allow *l = fbr_allow_load(path, NULL, NULL, err, sizeof err, &unreadable);
    cr_assert_not_null(l, "%s", err);
    cr_expect(fbr_allow_has(l, "vkt_sort"));
    cr_expect(fbr_allow_has(l, "vkt_conv"));
    cr_expect_not(fbr_allow_has(l, "vkt_dot"));
    cr_expect_str_eq(fbr_allow_reason(l, "vkt_sort"), "no sort shader yet");
    fbr_allow_free(l);
    f = fopen(path, "w");
    fputs("vkt_sort vkt_dot\n", f);
    fclose(f);
    l = fbr_allow_load(path, NULL, NULL, err, sizeof err, &unreadable);
    unlink(path);
    cr_expect_null(l);
    cr_expect(strstr(err, "line 1: expected one op name") != NULL, "%s", err);
    cr_expect_null(fbr_allow_load("/nonexistent/allow", NULL, NULL, err, sizeof err, &unreadable));
    cr_expect(unreadable);
}

Test(census, very_deep_stacks_are_cut_to_the_innermost_frames)
{
    size_t depth = 100000, cap = depth * 24 + 512;
    char *buf = malloc(cap);
    cr_assert_not_null(buf);
    size_t k = (size_t)snprintf(buf, cap,
                                "{\"schema\":\"fbcount/1\",\"reason\":\"exit\",\"seq\":1,"
                                "\"process\":{\"pid\":7,\"exe\":\"/bin/x\"},\"total\":"
                                "{\"fallbacks\":1,\"bytes\":4,\"host_ops\":0},\"ops\":[],"
                                "\"host_ops\":[],\"stacks\":[{\"count\":1,\"frames\":[");
    for (size_t i = 0; i < depth; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s{\"symbol\":\"f%zu\"}", i ? "," : "", i);
    k += (size_t)snprintf(buf + k, cap - k, "]}]}");
    fbd_status st;
    fbd_dump *d = fbd_load_buffer(buf, k, "deep.json", &st, err, sizeof err);
    free(buf);
    cr_assert_not_null(d, "%s", err);
    fbm_census *c = fbm_census_new();
    cr_assert_eq(fbm_census_add(c, d), 0);
    size_t n;
    const fbm_row *r = fbm_census_rows(c, FBD_FALLBACK, FBM_BY_STACK, FBM_SORT_BYTES, &n);
    cr_assert_eq(n, 1);
    cr_expect_eq(r[0].nframes, FBM_MAX_FRAMES);
    cr_expect_str_eq(r[0].labels[FBM_MAX_FRAMES - 1], "f0"); /* innermost kept */
    FILE *null = fopen("/dev/null", "w");
    cr_expect_eq(fbf_svg(null, c, &(fbt_opts){.weight = FBM_SORT_COUNT}), 0);
    cr_expect_eq(fbf_folded(null, c, &(fbt_opts){.weight = FBM_SORT_COUNT}), 0);
    fclose(null);
    fbm_census_free(c);
}
