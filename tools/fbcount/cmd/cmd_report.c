/* cmd_report.c - fbcount report: merge dumps and print them in one of several formats.
 *
 * A format is one row of `formats`: its name, what --help says of it, and its writer, which
 * lives in the file of its own idea (table.c, flame.c, pprof.c, metrics_report.c). Adding a
 * format is one row here and one writer there.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "flame.h"
#include "metrics_report.h"
#include "output.h"
#include "pprof.h"
#include "report_json.h"
#include "table.h"
#include "units.h"

/* Writes the census to out; returns 0, or -1 when memory ran out or out failed (ferror). */
typedef int (*report_writer)(FILE *out, fbm_census *c, const fbt_opts *o);

static const struct {
    const char *name;
    report_writer write;
    bool binary; /* never written to a terminal */
    const char *help;
} formats[] = {
    {"text", fbt_write_text, false, "tables of fallbacks and host-resident ops"},
    {"json", fbt_json_write, false, "the same as one object (fbcount-report/1)"},
    {"folded", fbf_folded, false, "stacks for flamegraph.pl, speedscope, inferno"},
    {"svg", fbf_svg, false, "a self-contained interactive flame graph"},
    {"pprof", fbpp_write_file, true, "profile.proto, gzip (-o or a redirect)"},
    {"openmetrics", fbom_write, false, "counters for Prometheus"},
};
#define NFORMATS (sizeof formats / sizeof *formats)

static const fbx_choice *format_choices(void)
{
    static fbx_choice list[NFORMATS];
    for (size_t i = 0; i < NFORMATS; i++)
        list[i] = (fbx_choice){formats[i].name, (int)i};
    return list;
}

FBX_CHOICE_VALUES(by_values, fbt_bys, fbt_nbys)
FBX_CHOICE_VALUES(sort_values, fbt_sorts, fbt_nsorts)
FBX_CHOICE_VALUES(frames_values, fbt_frame_modes, fbt_nframe_modes)
FBX_CHOICE_VALUES(format_values, format_choices(), NFORMATS)

/* --format's help: each format and what it writes, the first the default. */
static const char *format_help(void)
{
    static char b[1024];
    size_t len = 0;
    for (size_t i = 0; i < NFORMATS && len < sizeof b; i++)
        len += (size_t)snprintf(b + len, sizeof b - len, "%s%s: %s%s", i ? "\n" : "",
                                formats[i].name, formats[i].help, i == 0 ? " (default)" : "");
    return b;
}

FBX_CHOICE_VALUES(weight_values, fbt_weights, fbt_nweights)

static const fbx_opt options[] = {
    {'b', false, "by", "%s", "group rows by (default op)", by_values, NULL},
    {'s', false, "sort", "%s", "order rows by (default bytes)", sort_values, NULL},
    {'t', false, "top", "N", "print at most N rows per table (default all)", NULL, NULL},
    {'W', false, "where", "FIELD=VALUE",
     "FIELD one of %s: only processes whose\n"
     "rank, pid, host or exe (path or name) is VALUE, only\n"
     "rows of backend VALUE; repeat to allow several values\n"
     "or to combine fields",
     fbm_where_help, NULL},
    {'F', false, "frames", "%s",
     "name stack frames by function (default), or by function\n"
     "and call line, one frame per line: 'step (a.c:187)'",
     frames_values, NULL},
    {'d', false, "depth", "N",
     "--by stack: user frames shown per row (default 8;\n"
     "0: all); the backend's and the interpreter's are folded",
     NULL, NULL},
    {'f', false, "format", "%s", NULL, format_values, format_help},
    {'w', false, "weight", "%s", "folded/svg frame width (default count)", weight_values, NULL},
    {'u', false, "user-only", NULL,
     "folded/svg: the user's frames and the op only (the\n"
     "backend's, the interpreter's and libc's left out)",
     NULL, NULL},
    {'r', false, "raw", NULL,
     "text: one line per row, fields separated by a space,\n"
     "exact numbers, names escaped (\\x20 for a space)",
     NULL, NULL},
    {'n', false, "no-headings", NULL, "text: no column headings", NULL, NULL},
    {'o', true, "output", "FILE", "write there (replaced atomically) instead of standard\noutput",
     NULL, NULL},
    FBX_OPTS_VERSION_HELP,
};
#define NOPTIONS (sizeof options / sizeof *options)

static void help(void)
{
    printf("usage: fbcount report [options] [DUMP|DIR...]\n\n"
           "Merges dumps (a DIR means every *.json in it) and prints the census. Successive dumps\n"
           "of one process (checkpoints, snapshots, then its exit or signal dump) are counted\n"
           "once, from the latest. Without a DUMP or DIR, reads the newest fbcount-* folder in\n"
           "the working directory that holds a dump.\n\n");
    fbx_put_options(stdout, options, NOPTIONS, 29);
    printf("\nC++ names are demangled in text, folded and SVG output; JSON keeps the dump's raw\n"
           "symbol and adds \"demangled\". Tables fit the terminal when writing to one and are\n"
           "never cut otherwise.\n\n");
    fbx_put_exit_codes(stdout, "report");
}

typedef struct {
    fbt_opts o;
    int format, frames;
    const char *output;
    fbm_census *c;
} report_args;

/* One option (fbx_option_fn). */
static int option(void *ctx, int opt, char *arg)
{
    report_args *a = ctx;
    int v = 0;
    switch (opt) {
    case 'b': v = a->o.by = (fbm_by)fbx_choose("report", "--by", arg, fbt_bys, fbt_nbys); break;
    case 's': v = a->o.sort = fbx_choose("report", "--sort", arg, fbt_sorts, fbt_nsorts); break;
    case 'f':
        v = a->format = fbx_choose("report", "--format", arg, format_choices(), NFORMATS);
        break;
    case 'w':
        v = a->o.weight = fbx_choose("report", "--weight", arg, fbt_weights, fbt_nweights);
        break;
    case 'F':
        v = a->frames = fbx_choose("report", "--frames", arg, fbt_frame_modes, fbt_nframe_modes);
        break;
    case 'o': a->output = arg; break;
    case 'r': a->o.raw = true; break;
    case 'n': a->o.noheadings = true; break;
    case 'u': a->o.user_only = true; break;
    case 'W': return fbx_where("report", a->c, arg);
    case 't':
    case 'd': {
        uint64_t n;
        if (fbr_parse_count(arg, &n) != 0) {
            fbx_error("report", "%s: expected a number, got '%s'", opt == 't' ? "--top" : "--depth",
                      arg);
            return FBX_USAGE;
        }
        if (opt == 't')
            a->o.top = (size_t)n;
        else
            a->o.depth = (size_t)n;
        break;
    }
    case 'V': fbx_version(); return -1;
    case 'h': help(); return -1;
    }
    return v < 0 ? FBX_USAGE : FBX_OK;
}

static int parse(report_args *a, int argc, char **argv)
{
    return fbx_options(argc, argv, options, NOPTIONS, false, option, a);
}

/* Writes the census in the chosen format; returns the exit code. */
static int write_report(fbm_census *c, const report_args *a)
{
    char err[512];
    if (formats[a->format].binary && (!a->output || !strcmp(a->output, "-")) &&
        isatty(STDOUT_FILENO)) {
        fbx_error("report",
                  "a %s profile is binary: not written to a terminal (give -o FILE, "
                  "or redirect standard output)",
                  formats[a->format].name);
        return FBX_USAGE;
    }
    fbo_file out;
    if (fbo_open(&out, a->output, err, sizeof err) != 0) {
        fbx_error("report", "%s", err);
        return FBX_WRITE;
    }
    fbt_opts o = a->o;
    o.width = fbt_term_width(out.f);
    int rc = formats[a->format].write(out.f, c, &o);
    bool nomem = rc != 0 && !ferror(out.f);
    if (fbo_close(&out, rc == 0, err, sizeof err) == 0)
        return FBX_OK;
    if (nomem)
        fbx_error("report", "out of memory while writing the report");
    else
        fbx_error("report", "%s", err);
    return nomem ? FBX_NOMEM : FBX_WRITE;
}

int fbx_report(int argc, char **argv)
{
    report_args a = {
        .o = {.by = FBM_BY_OP, .sort = FBM_SORT_BYTES, .weight = FBM_SORT_COUNT, .depth = 8}};
    fbm_census *c = a.c = fbm_census_new();
    if (!c) {
        fbx_error("report", "out of memory");
        return FBX_NOMEM;
    }
    int code = parse(&a, argc, argv);
    if (code == FBX_OK) {
        fbm_census_set_frames(c, (fbm_frames)a.frames);
        /* A view reads what it can, naming each dump it cannot read (check does not). */
        fbm_census_set_lenient(c, true);
        code = fbx_load_args("report", c, argv + optind, argc - optind);
    }
    if (code == FBX_OK)
        code = write_report(c, &a);
    fbm_census_free(c);
    return code < 0 ? FBX_OK : code;
}
