/* test_census.c - merging dumps, the allow file and byte units. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "allow.h"
#include "census.h"
#include "flame.h"
#include "units.h"

#define DATA FBCOUNT_TEST_DATA

static char err[512];

static fbc_census *load(const char *path)
{
    fbc_census *c = fbc_census_new();
    char *paths[] = {(char *)path};
    fbd_status st = fbc_census_load(c, paths, 1, err, sizeof err);
    cr_assert_eq(st, FBD_OK, "%s", err);
    return c;
}

Test(census, two_processes_add_up)
{
    fbc_census *c = load(DATA "/run1");
    fbc_summary s = fbc_census_summary(c);
    cr_expect_eq(s.dumps, 2);
    cr_expect_eq(s.superseded, 0);
    cr_expect_eq(s.total.fallbacks, 24);
    cr_expect_eq(s.total.bytes, 8192);
    cr_expect_eq(s.total.host_ops, 6);
    cr_expect_eq(s.total.max_bytes, 1024);
    cr_expect(s.backend.present);
    cr_expect_eq(s.backend.native, 880); /* only one dump carries backend counters */
    size_t n;
    const fbc_row *r = fbc_census_rows(c, FBD_FALLBACK, FBC_BY_OP, FBC_SORT_BYTES, &n);
    cr_assert_eq(n, 2);
    /* Equal bytes: the larger count comes first. */
    cr_expect_str_eq(r[0].key, "vkt_dot");
    cr_expect_eq(r[0].count, 14);
    cr_expect_eq(r[0].max_bytes, 512);
    cr_assert_eq(r[0].nparts, 2);
    cr_expect_str_eq(r[0].parts[0].name, "train_step");
    cr_expect_eq(r[0].parts[0].count, 10);
    fbc_census_free(c);
}

Test(census, latest_dump_of_a_process_wins)
{
    fbc_census *c = load(DATA "/snapshots");
    fbc_summary s = fbc_census_summary(c);
    cr_expect_eq(s.dumps, 1);
    cr_expect_eq(s.superseded, 2);
    cr_expect_eq(s.total.fallbacks, 36); /* seq 3 (x3), not 12+24+36 */
    cr_expect_str_eq(fbd_reason(fbc_census_dump(c, 0)), "exit");
    fbc_census_free(c);
}

Test(census, order_of_loading_does_not_matter)
{
    fbc_census *c = fbc_census_new();
    char *paths[] = {DATA "/snapshots/fbcount.lenet.500.3.json",
                     DATA "/snapshots/fbcount.lenet.500.1.json"};
    cr_assert_eq(fbc_census_load(c, paths, 2, err, sizeof err), FBD_OK, "%s", err);
    cr_expect_eq(fbd_seq(fbc_census_dump(c, 0)), 3);
    fbc_census_free(c);
}

Test(census, site_stack_and_shape_views)
{
    fbc_census *c = load(DATA "/run1");
    size_t n;
    const fbc_row *r = fbc_census_rows(c, FBD_FALLBACK, FBC_BY_SITE, FBC_SORT_COUNT, &n);
    cr_assert_eq(n, 3);
    cr_expect_str_eq(r[0].key, "conv_backward (lenet.c:88)"); /* 10 calls, 4 KiB beats train_step's 3 */
    r = fbc_census_rows(c, FBD_FALLBACK, FBC_BY_STACK, FBC_SORT_BYTES, &n);
    cr_assert_eq(n, 3);
    cr_expect_eq(r[0].nframes, 5);
    cr_expect_str_eq(r[0].frames[0], "main");
    cr_expect_str_eq(r[0].frames[4], "host_result");
    r = fbc_census_rows(c, FBD_FALLBACK, FBC_BY_SHAPE, FBC_SORT_COUNT, &n);
    cr_assert_eq(n, 2);
    cr_expect_str_eq(r[0].key, "vkt_dot f32[16x32]");
    cr_expect_not(r[0].has_bytes);
    r = fbc_census_rows(c, FBD_HOST, FBC_BY_OP, FBC_SORT_BYTES, &n);
    cr_assert_eq(n, 1);
    cr_expect_eq(r[0].count, 6);
    cr_expect_not_null(fbc_census_find(c, FBD_FALLBACK, FBC_BY_OP, "vkt_conv"));
    cr_expect_null(fbc_census_find(c, FBD_FALLBACK, FBC_BY_OP, "vkt_sort"));
    fbc_census_free(c);
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
    fbc_census *c = fbc_census_new();
    char *paths[] = {dir};
    fbd_status st = fbc_census_load(c, paths, 1, err, sizeof err);
    unlink(p);
    rmdir(dir);
    cr_expect_eq(st, FBD_EINVALID);
    cr_expect(strstr(err, "a.json: line 1: truncated") != NULL, "%s", err);
    fbc_census_free(c);
}

Test(census, frame_labels)
{
    char b[64];
    fbd_frame f = {.module = "/usr/lib/libvkt.so", .offset = 0x1f30, .has_offset = true};
    fbc_frame_label(&f, b, sizeof b);
    cr_expect_str_eq(b, "libvkt.so+0x1f30");
    f.symbol = "vkt_dot";
    fbc_frame_label(&f, b, sizeof b);
    cr_expect_str_eq(b, "vkt_dot");
}

Test(units, bytes_print_in_binary_units)
{
    char b[32];
    cr_expect_str_eq(fbu_bytes(0, b, sizeof b), "0 B");
    cr_expect_str_eq(fbu_bytes(1023, b, sizeof b), "1023 B");
    cr_expect_str_eq(fbu_bytes(1536, b, sizeof b), "1.5 KiB");
    cr_expect_str_eq(fbu_bytes(100ull << 20, b, sizeof b), "100 MiB");
}

Test(units, sizes_parse_with_suffixes)
{
    uint64_t v;
    cr_expect_eq(fbu_parse_bytes("4096", &v), 0);
    cr_expect_eq(v, 4096);
    cr_expect_eq(fbu_parse_bytes("4K", &v), 0);
    cr_expect_eq(v, 4096);
    cr_expect_eq(fbu_parse_bytes("4KiB", &v), 0);
    cr_expect_eq(v, 4096);
    cr_expect_eq(fbu_parse_bytes("4kb", &v), 0);
    cr_expect_eq(v, 4000);
    cr_expect_eq(fbu_parse_bytes("1.5M", &v), 0);
    cr_expect_eq(v, 1572864);
    cr_expect_eq(fbu_parse_bytes("2 GiB", &v), 0);
    cr_expect_eq(v, 2ull << 30);
    cr_expect_eq(fbu_parse_bytes("-1", &v), -1);
    cr_expect_eq(fbu_parse_bytes("1.5", &v), -1);
    cr_expect_eq(fbu_parse_bytes("12Q", &v), -1);
    cr_expect_eq(fbu_parse_bytes("", &v), -1);
    cr_expect_eq(fbu_parse_bytes("99999999999T", &v), -1);
    cr_expect_eq(fbu_parse_count("12", &v), 0);
    cr_expect_eq(fbu_parse_count("-3", &v), -1);
    cr_expect_eq(fbu_parse_count("99999999999999999999999", &v), -1);
}

Test(allow, file_format)
{
    char path[] = "/tmp/fbcount-allow-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("# expected fallbacks\n\n  vkt_sort   # no sort shader yet\nvkt_conv\n", f);
    fclose(f);
    fba_list *l = fba_load(path, err, sizeof err);
    cr_assert_not_null(l, "%s", err);
    cr_expect(fba_allows(l, "vkt_sort"));
    cr_expect(fba_allows(l, "vkt_conv"));
    cr_expect_not(fba_allows(l, "vkt_dot"));
    cr_expect_str_eq(fba_reason(l, "vkt_sort"), "no sort shader yet");
    fba_free(l);
    f = fopen(path, "w");
    fputs("vkt_sort vkt_dot\n", f);
    fclose(f);
    l = fba_load(path, err, sizeof err);
    unlink(path);
    cr_expect_null(l);
    cr_expect(strstr(err, "line 1: expected one op name") != NULL, "%s", err);
    cr_expect_null(fba_load("/nonexistent/allow", err, sizeof err));
}

Test(census, very_deep_stacks_are_cut_to_the_innermost_frames)
{
    size_t depth = 100000, cap = depth * 24 + 512;
    char *buf = malloc(cap);
    cr_assert_not_null(buf);
    size_t k = (size_t)snprintf(buf, cap, "{\"schema\":\"fbcount/1\",\"reason\":\"exit\",\"seq\":1,"
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
    fbc_census *c = fbc_census_new();
    cr_assert_eq(fbc_census_add(c, d), 0);
    size_t n;
    const fbc_row *r = fbc_census_rows(c, FBD_FALLBACK, FBC_BY_STACK, FBC_SORT_BYTES, &n);
    cr_assert_eq(n, 1);
    cr_expect_eq(r[0].nframes, FBC_MAX_FRAMES);
    cr_expect_str_eq(r[0].frames[FBC_MAX_FRAMES - 1], "f0"); /* innermost kept */
    FILE *null = fopen("/dev/null", "w");
    cr_expect_eq(fbf_svg(null, c, false), 0);
    cr_expect_eq(fbf_folded(null, c, false), 0);
    fclose(null);
    fbc_census_free(c);
}
