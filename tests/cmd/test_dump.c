/* test_dump.c - the dump reader on good, broken and hostile dumps. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dump.h"

#define DATA FBCOUNT_TEST_DATA

static char err[512];
static fbd_status st;

static fbd_dump *from_text(const char *text)
{
    err[0] = '\0';
    return fbd_load_buffer(text, strlen(text), "t.json", &st, err, sizeof err);
}

/* A minimal valid dump with one field replaced by the caller's text. */
static char *with(const char *ops)
{
    static char buf[4096];
    snprintf(buf, sizeof buf,
             "{\"schema\":\"fbcount/1\",\"reason\":\"exit\",\"seq\":1,"
             "\"process\":{\"pid\":7,\"exe\":\"/bin/x\"},"
             "\"total\":{\"fallbacks\":1,\"bytes\":4,\"host_ops\":0},"
             "\"ops\":%s,\"host_ops\":[],\"stacks\":[]}",
             ops);
    return buf;
}

static void expect_invalid(const char *text, const char *needle)
{
    fbd_dump *d = from_text(text);
    cr_expect_null(d, "accepted: %.200s", text);
    cr_expect_eq(st, FBD_EINVALID);
    cr_expect(strstr(err, needle) != NULL, "message '%s' lacks '%s'", err, needle);
    cr_expect(strncmp(err, "t.json: ", 8) == 0, "message '%s' does not name the file", err);
    cr_expect_null(strchr(err, '\n'), "message is not one line: %s", err);
    fbd_free(d);
}

Test(dump, loads_the_documented_example)
{
    fbd_dump *d = fbd_load_file(DATA "/run1/fbcount.lenet.4242.1.json", &st, err, sizeof err);
    cr_assert_not_null(d, "%s", err);
    cr_expect_str_eq(fbd_reason(d), "exit");
    cr_expect_eq(fbd_pid(d), 4242);
    cr_expect_eq(fbd_seq(d), 1);
    cr_expect_str_eq(fbd_exe(d), "/opt/app/lenet");
    fbd_total t = fbd_totals(d);
    cr_expect_eq(t.fallbacks, 12);
    cr_expect_eq(t.bytes, 4096);
    cr_expect_eq(t.host_ops, 3);
    fbd_counters b = fbd_backend_stats(d);
    cr_expect(b.present);
    cr_expect_eq(b.native, 880);
    size_t n;
    const fbd_op *ops = fbd_ops(d, FBD_FALLBACK, &n);
    cr_assert_eq(n, 2);
    cr_expect_str_eq(ops[1].op, "vkt_dot");
    cr_expect_eq(ops[1].nsites, 2);
    cr_expect_eq(ops[1].sites[0].line, 120);
    cr_expect_eq(ops[1].shapes[0].ndims, 2);
    cr_expect_eq(ops[1].shapes[0].dims[1], 32);
    const fbd_op *h = fbd_ops(d, FBD_HOST, &n);
    cr_assert_eq(n, 1);
    cr_expect_str_eq(h[0].op, "vkt_transpose");
    const fbd_stack *s = fbd_stacks(d, &n);
    cr_assert_eq(n, 4);
    cr_expect_eq(s[3].kind, FBD_HOST);
    cr_expect_eq(s[0].nframes, 5);
    cr_expect(s[0].frames[0]->has_offset);
    cr_expect_eq(s[0].frames[0]->offset, 0x1f30);
    cr_expect_eq(s[0].frames[0]->ip, 0x7f1234561f30ULL);
    const fbd_module *m = fbd_modules(d, &n);
    cr_assert_eq(n, 2);
    cr_expect_eq(m[0].base, 0x7f1234560000ULL);
    fbd_free(d);
}

Test(dump, optional_fields_may_be_absent_and_unknown_ones_are_ignored)
{
    fbd_dump *d = from_text(with("[{\"op\":\"vkt_dot\",\"count\":1,\"bytes\":4,\"new\":[1]}]"));
    cr_assert_not_null(d, "%s", err);
    size_t n;
    cr_expect_eq(fbd_ops(d, FBD_FALLBACK, &n)[0].nsites, 0);
    cr_expect_not(fbd_backend_stats(d).present);
    cr_expect(fbd_symbolized(d));
    const char *const *p = fbd_op_prefixes(d, &n);
    cr_expect_eq(n, 1);
    cr_expect_str_eq(p[0], "vkt_");
    fbd_free(d);
}

Test(dump, missing_file_is_a_read_error)
{
    fbd_dump *d = fbd_load_file(DATA "/no-such.json", &st, err, sizeof err);
    cr_expect_null(d);
    cr_expect_eq(st, FBD_EREAD);
    cr_expect(strstr(err, "no-such.json: cannot open") != NULL, "%s", err);
}

Test(dump, directory_is_a_read_error)
{
    fbd_dump *d = fbd_load_file(DATA, &st, err, sizeof err);
    cr_expect_null(d);
    cr_expect_eq(st, FBD_EREAD);
    cr_expect(strstr(err, "not a regular file") != NULL, "%s", err);
}

Test(dump, fifo_is_refused_without_blocking)
{
    char dir[] = "/tmp/fbcount-fifo-XXXXXX", path[64];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/f.json", dir);
    cr_assert_eq(mkfifo(path, 0600), 0);
    fbd_dump *d = fbd_load_file(path, &st, err, sizeof err);
    unlink(path);
    rmdir(dir);
    cr_expect_null(d);
    cr_expect_eq(st, FBD_EREAD);
    cr_expect(strstr(err, "not a regular file") != NULL, "%s", err);
}

Test(dump, empty_input)
{
    expect_invalid("", "empty file");
}

Test(dump, not_json)
{
    expect_invalid("hello\n", "line 1: not valid JSON");
}

Test(dump, top_level_not_an_object)
{
    expect_invalid("[1,2]", "top level is an array");
}

Test(dump, wrong_schema)
{
    expect_invalid("{\"schema\":\"fbcount/2\"}", "unsupported schema \"fbcount/2\"");
}

Test(dump, missing_required_field)
{
    expect_invalid("{\"schema\":\"fbcount/1\",\"reason\":\"exit\",\"seq\":1}",
                   "process: required field is missing");
}

Test(dump, wrong_types_name_the_path)
{
    expect_invalid(with("{}"), "ops: expected an array, got an object");
    expect_invalid(with("[{\"op\":\"x\",\"count\":\"7\",\"bytes\":1}]"),
                   "ops[0].count: expected a non-negative integer, got a string");
    expect_invalid(with("[{\"op\":\"x\",\"count\":1.5,\"bytes\":1}]"),
                   "ops[0].count: expected a non-negative integer, got a real number");
    expect_invalid(with("[{\"op\":7,\"count\":1,\"bytes\":1}]"),
                   "ops[0].op: expected a string, got an integer");
    expect_invalid(with("[3]"), "ops[0]: expected an object, got an integer");
    expect_invalid(with("[{\"op\":\"x\",\"count\":1,\"bytes\":1,\"sites\":[{\"site\":null,"
                        "\"count\":1}]}]"),
                   "ops[0].sites[0].site: expected a string, got null");
}

Test(dump, negative_and_huge_counts_are_rejected)
{
    expect_invalid(with("[{\"op\":\"x\",\"count\":-1,\"bytes\":1}]"),
                   "ops[0].count: negative value -1");
    expect_invalid(with("[{\"op\":\"x\",\"count\":9007199254740993,\"bytes\":1}]"), "exceeds 2^53");
    /* Beyond 64 bits: jansson refuses the number itself. */
    expect_invalid(with("[{\"op\":\"x\",\"count\":123456789012345678901234567890,\"bytes\":1}]"),
                   "too big");
}

Test(dump, bad_hex_address)
{
    const char *t = "{\"schema\":\"fbcount/1\",\"reason\":\"crash\",\"seq\":1,"
                    "\"process\":{\"pid\":7,\"exe\":\"/bin/x\"},"
                    "\"total\":{\"fallbacks\":0,\"bytes\":0,\"host_ops\":0},"
                    "\"ops\":[],\"host_ops\":[],\"stacks\":[{\"count\":1,\"frames\":"
                    "[{\"offset\":\"1f30\"}]}]}";
    expect_invalid(t, "stacks[0].frames[0].offset: expected a hex string");
}

/* A dump whose "stacks" are the caller's text. */
static char *with_stacks(const char *stacks, const char *more)
{
    static char buf[16384];
    snprintf(buf, sizeof buf,
             "{\"schema\":\"fbcount/1\",\"reason\":\"crash\",\"seq\":1,"
             "\"process\":{\"pid\":7,\"exe\":\"/bin/x\"},"
             "\"total\":{\"fallbacks\":3,\"bytes\":0,\"host_ops\":0},"
             "\"ops\":[],\"host_ops\":[],\"stacks\":%s%s}",
             stacks, more);
    return buf;
}

/* Inline frames are read by their text, the stack's other members by jansson: whatever the
 * order of the members, the blanks, a frame met again or an empty list, the stacks read the
 * same; frames that are frame_table indices, or a list mixing both, are read whole. */
Test(dump, inline_frames_read_by_their_text_read_as_written)
{
    const char *stacks =
        "[{\"op\":\"vkt_dot\",\"count\":1,\"frames\":[{\"symbol\":\"host_result\"},"
        "{\"symbol\":\"f\",\"offset\":\"0x10\"}]},\n"
        " { \"frames\" : [ {\"symbol\":\"host_result\"} ,\n {\"symbol\":\"g\",\"line\":7} ] ,"
        " \"count\" : 2 , \"op\":\"vkt_sum\" },"
        "{\"count\":3,\"frames\":[]}]";
    fbd_dump *d = from_text(with_stacks(stacks, ""));
    cr_assert_not_null(d, "%s", err);
    size_t n;
    const fbd_stack *s = fbd_stacks(d, &n);
    cr_assert_eq(n, 3);
    cr_expect_str_eq(s[0].op, "vkt_dot");
    cr_expect_str_eq(s[1].op, "vkt_sum");
    cr_expect_eq(s[1].count, 2);
    cr_assert_eq(s[0].nframes, 2);
    cr_assert_eq(s[1].nframes, 2);
    cr_expect_eq(s[2].nframes, 0);
    cr_expect_eq(s[0].frames[0], s[1].frames[0], "one frame, read once");
    cr_expect_eq(s[0].frames[1]->offset, 0x10);
    cr_expect_str_eq(s[1].frames[1]->symbol, "g");
    cr_expect_eq(s[1].frames[1]->line, 7);
    fbd_free(d);
    const char *mixed = "[{\"count\":1,\"frames\":[0,{\"symbol\":\"h\"}]},{\"count\":2,\"frames\":["
                        "{\"symbol\":\"h\"}]}]";
    d = from_text(with_stacks(mixed, ",\"frame_table\":[{\"symbol\":\"t\"}]"));
    cr_assert_not_null(d, "%s", err);
    s = fbd_stacks(d, &n);
    cr_assert_eq(n, 2);
    cr_expect_str_eq(s[0].frames[0]->symbol, "t");
    cr_expect_eq(s[0].frames[1], s[1].frames[0]);
    fbd_free(d);
}

/* Errors in a stack read by its text still name their path and line, and a second "frames"
 * is a duplicate however it is spelled. */
Test(dump, inline_frames_read_by_their_text_keep_their_errors)
{
    expect_invalid(with_stacks("[{\"count\":1,\"frames\":[{\"symbol\":\"a\"}]},"
                               "{\"count\":1,\"frames\":[{\"symbol\":\"a\"},{\"offset\":\"1f\"}]}]",
                               ""),
                   "stacks[1].frames[1].offset: expected a hex string");
    expect_invalid(with_stacks("[{\"count\":1,\"frames\":[{\"symbol\":tru}]}]", ""),
                   "line 1: not valid JSON");
    /* A syntax error anywhere in the stack comes before what its valid parts would fail. */
    expect_invalid(with_stacks("[{\"count\":\"x\",\"frames\":[{\"symbol\":tru}]}]", ""),
                   "not valid JSON");
    expect_invalid(
        with_stacks("[{\"count\":1,\"frames\":[{\"offset\":\"zz\"},{\"symbol\":tru}]}]", ""),
        "not valid JSON");
    expect_invalid(with_stacks("[{\"count\":1,\"frames\":null,\"frames\":[]}]", ""),
                   "line 1: not valid JSON: duplicate");
    expect_invalid(with_stacks("[{\"count\":tru,\"frames\":[{\"symbol\":\"a\"}]}]", ""),
                   "not valid JSON");
    expect_invalid(with_stacks("[{\"count\":1,\"frames\":[],\"frames\":[]}]", ""), "duplicate");
    expect_invalid(with_stacks("[{\"count\":1,\"frames\":[],\"fr\\u0061mes\":[]}]", ""),
                   "duplicate");
    expect_invalid(with_stacks("[{\"count\":1,\"frames\":[{\"symbol\":\"a\"}", ""), "truncated");
    expect_invalid(with_stacks("[{\"count\":1,\"frames\":[{\"symbol\":\"a\"} {}]}]", ""),
                   "not valid JSON");
    expect_invalid(with_stacks("[{\"frames\":[{\"symbol\":\"a\"}]}]", ""),
                   "stacks[0].count: required");
}

/* A frame read by its text is nested as deep as it would be inside its stack, and a string
 * that ends in a backslash at the very end of the buffer is a truncated dump, never a read
 * past it (the buffer below has no NUL after it). */
Test(dump, inline_frames_read_by_their_text_keep_the_whole_parsers_limits)
{
    for (int deep = 2045; deep <= 2046; deep++) {
        size_t cap = 4 * (size_t)deep + 512;
        char *frames = malloc(cap);
        cr_assert_not_null(frames);
        int n = snprintf(frames, cap, "[{\"count\":1,\"frames\":[{\"symbol\":\"a\",\"x\":");
        for (int i = 0; i < deep; i++)
            frames[n++] = '[';
        for (int i = 0; i < deep; i++)
            frames[n++] = ']';
        snprintf(frames + n, cap - (size_t)n, "}]}]");
        const char *text = with_stacks(frames, "");
        fbd_dump *d = fbd_load_buffer(text, strlen(text), "t.json", &st, err, sizeof err);
        if (deep == 2045)
            cr_expect_not_null(d, "%s", err);
        else
            cr_expect(!d && strstr(err, "nested too deeply"), "%s", err);
        fbd_free(d);
        free(frames);
    }
    const char *cut = "{\"schema\":\"fbcount/1\",\"stacks\":[{\"count\":1,\"op\":\"abc\\";
    size_t len = strlen(cut);
    char *exact = malloc(len);
    cr_assert_not_null(exact);
    memcpy(exact, cut, len);
    fbd_dump *d = fbd_load_buffer(exact, len, "t.json", &st, err, sizeof err);
    cr_expect_null(d);
    cr_expect(strstr(err, "truncated") != NULL, "%s", err);
    fbd_free(d);
    free(exact);
}

Test(dump, duplicate_keys_are_rejected)
{
    expect_invalid("{\"schema\":\"fbcount/1\",\"schema\":\"fbcount/1\"}", "duplicate");
}

Test(dump, truncation_is_named)
{
    const char *full = with("[{\"op\":\"x\",\"count\":1,\"bytes\":1}]");
    for (size_t cut = 1; cut < strlen(full); cut += 7) {
        fbd_dump *d = fbd_load_buffer(full, cut, "t.json", &st, err, sizeof err);
        cr_expect_null(d, "accepted a dump cut at %zu", cut);
        cr_expect_eq(st, FBD_EINVALID);
        cr_expect(strstr(err, "truncated") || strstr(err, "not valid JSON"), "%s", err);
        fbd_free(d);
    }
    fbd_dump *d = fbd_load_buffer(full, strlen(full) / 2, "t.json", &st, err, sizeof err);
    cr_expect_null(d);
    fbd_free(d);
}

Test(dump, deep_nesting_is_refused_not_a_crash)
{
    size_t depth = 200000;
    char *buf = malloc(depth * 2 + 64);
    cr_assert_not_null(buf);
    size_t k = (size_t)sprintf(buf, "{\"schema\":\"fbcount/1\",\"x\":");
    for (size_t i = 0; i < depth; i++)
        buf[k++] = '[';
    for (size_t i = 0; i < depth; i++)
        buf[k++] = ']';
    buf[k++] = '}';
    fbd_dump *d = fbd_load_buffer(buf, k, "t.json", &st, err, sizeof err);
    cr_expect_null(d);
    cr_expect_eq(st, FBD_EINVALID);
    cr_expect(strstr(err, "nesting") || strstr(err, "deep"), "%s", err);
    free(buf);
}

Test(dump, oversized_file_is_refused_before_reading)
{
    char path[] = "/tmp/fbcount-big-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(ftruncate(fd, (off_t)FBD_MAX_FILE_BYTES + 1), 0);
    close(fd);
    fbd_dump *d = fbd_load_file(path, &st, err, sizeof err);
    unlink(path);
    cr_expect_null(d);
    cr_expect_eq(st, FBD_EINVALID);
    cr_expect(strstr(err, "larger than") != NULL, "%s", err);
}

Test(dump, empty_file_on_disk)
{
    char path[] = "/tmp/fbcount-empty-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    fbd_dump *d = fbd_load_file(path, &st, err, sizeof err);
    unlink(path);
    cr_expect_null(d);
    cr_expect_eq(st, FBD_EINVALID);
    cr_expect(strstr(err, "empty file") != NULL, "%s", err);
}
