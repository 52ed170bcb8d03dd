/* One op naming (rules/opname.h): short and long names match under the op prefixes, in the
 * allow list too; an unknown name is found with the known names closest to it. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "allow.h"
#include "opname.h"

static fbr_names two;

static void two_prefixes(void)
{
    cr_assert_eq(fbr_names_parse("vkt_, my_", NULL, &two), 0);
}

static void free_prefixes(void)
{
    fbr_names_free(&two);
}

TestSuite(opname, .init = two_prefixes, .fini = free_prefixes);

Test(opname, short_names)
{
    cr_expect_str_eq(fbr_op_short("vkt_dot", &fbr_default_prefixes), "dot");
    cr_expect_str_eq(fbr_op_short("dot", &fbr_default_prefixes), "dot");
    cr_expect_str_eq(fbr_op_short("vkt_", &fbr_default_prefixes), "vkt_",
                     "nothing left: unchanged");
    cr_expect_str_eq(fbr_op_short("my_sort", &two), "sort");
    cr_expect_str_eq(fbr_op_short("aten::gelu.out", &two), "aten::gelu.out");
    cr_expect_null(fbr_op_short(NULL, &two));
}

Test(opname, short_and_long_name_the_same_op)
{
    const fbr_names *p = &fbr_default_prefixes;
    cr_expect(fbr_op_named("dot", "vkt_dot", p));
    cr_expect(fbr_op_named("vkt_dot", "vkt_dot", p));
    cr_expect(fbr_op_named("vkt_dot", "dot", p), "a census that gives short names");
    cr_expect(!fbr_op_named("dot", "vkt_dot_general", p));
    cr_expect(!fbr_op_named("do", "vkt_dot", p));
    cr_expect(!fbr_op_named("vkt_dot", "vkt_sort", p));
    cr_expect(!fbr_op_named("my_dot", "vkt_dot", &two), "another backend's prefix");
    cr_expect(fbr_op_named("dot", "my_dot", &two));
    cr_expect(!fbr_op_named(NULL, "vkt_dot", p));
}

Test(opname, closest_known_names)
{
    const char *known[] = {"vkt_dot", "vkt_sort", "vkt_conv", "vkt_window_scatter_max",
                           "vkt_add", "vkt_dot"};
    size_t n = sizeof known / sizeof *known;
    const char *out[3];
    cr_expect(fbr_op_known("sort", known, n, &fbr_default_prefixes));
    cr_expect(!fbr_op_known("dto", known, n, &fbr_default_prefixes));
    size_t k = fbr_op_closest("dto", known, n, &fbr_default_prefixes, out, 3);
    cr_assert_eq(k, 1, "got %zu", k);
    cr_expect_str_eq(out[0], "vkt_dot", "a transposition is one edit; each name once");
    k = fbr_op_closest("vkt_sot", known, n, &fbr_default_prefixes, out, 3);
    cr_assert_eq(k, 2, "got %zu", k);
    cr_expect_str_eq(out[0], "vkt_dot", "closest first, then by name");
    cr_expect_str_eq(out[1], "vkt_sort");
    k = fbr_op_closest("vkt_window_scater_max", known, n, &fbr_default_prefixes, out, 3);
    cr_assert_eq(k, 1);
    cr_expect_str_eq(out[0], "vkt_window_scatter_max");
    cr_expect_eq(fbr_op_closest("DOT", known, n, &fbr_default_prefixes, out, 3), 1, "case ignored");
    cr_expect_eq(fbr_op_closest("matmul", known, n, &fbr_default_prefixes, out, 3), 0);
    cr_expect_eq(fbr_op_closest("dot", known, n, &fbr_default_prefixes, out, 0), 0);
}

static char seen[4][64];
static long seen_line[4];
static size_t nseen;

static void unknown(void *ctx, long line, const char *name, const char *const *close, size_t nclose)
{
    (void)ctx;
    if (nseen < 4) {
        snprintf(seen[nseen], sizeof seen[nseen], "%s:%s", name, nclose ? close[0] : "-");
        seen_line[nseen] = line;
    }
    nseen++;
}

Test(opname, allow_lists_take_either_name)
{
    char err[256];
    const char *text = "dot   # short\nvkt_sort # long\nmy_pad # another prefix\nsrot # typo\n";
    fbr_allow *a = fbr_allow_parse(text, strlen(text), NULL, NULL, err, sizeof err);
    cr_assert_not_null(a, "%s", err);
    cr_expect(fbr_allow_has(a, "vkt_dot"));
    cr_expect(fbr_allow_has(a, "dot"));
    cr_expect(fbr_allow_has(a, "vkt_sort"));
    cr_expect(fbr_allow_has(a, "sort"));
    cr_expect_str_eq(fbr_allow_reason(a, "vkt_dot"), "short");
    cr_expect_str_eq(fbr_allow_reason(a, "sort"), "long");
    cr_expect(!fbr_allow_has(a, "vkt_pad"), "my_ is no prefix by default");
    cr_expect(!fbr_allow_has(a, "vkt_srot_x"));
    fbr_allow_set_prefixes(a, &two);
    cr_expect(fbr_allow_has(a, "pad"));
    cr_expect(!fbr_allow_has(a, "vkt_pad"));
    cr_expect(fbr_allow_has(a, "vkt_dot"));
    fbr_allow_set_prefixes(a, NULL);

    const char *known[] = {"vkt_dot", "vkt_sort", "vkt_conv"};
    nseen = 0;
    cr_expect_eq(fbr_allow_unknown(a, known, 3, unknown, NULL), 2);
    cr_assert_eq(nseen, 2);
    cr_expect_str_eq(seen[0], "my_pad:-");
    cr_expect_eq(seen_line[0], 3);
    cr_expect_str_eq(seen[1], "srot:vkt_sort", "the typo, with its closest known op");
    cr_expect_eq(seen_line[1], 4);
    fbr_allow_free(a);
}
