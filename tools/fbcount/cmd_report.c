/* cmd_report.c - fbcount report: merge dumps and print them in one of four formats. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "flame.h"
#include "table.h"
#include "units.h"

static const char help[] =
    "usage: fbcount report [options] DUMP|DIR...\n\n"
    "Merges dumps (a DIR means every *.json in it) and prints the census. A process that\n"
    "wrote several dumps (snapshots, then exit) is counted once, from its latest dump.\n\n"
    "  --by op|site|stack|shape   group rows by (default op)\n"
    "  --sort bytes|count         order rows by (default bytes)\n"
    "  --top N                    print at most N rows per table (default all)\n"
    "  --format text|json|folded|svg\n"
    "                             text: tables of fallbacks and host-resident ops;\n"
    "                             json: the same as one object; folded: collapsed stacks\n"
    "                             for flamegraph.pl/speedscope/inferno; svg: a\n"
    "                             self-contained interactive flame graph\n"
    "  --weight count|bytes       folded/svg frame width (default count)\n"
    "  -o, --output FILE          write there instead of standard output\n"
    "  -h, --help                 this text\n\n";

static int pick(const char *cmd, const char *opt, const char *val, const char *const *names,
                int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(val, names[i]))
            return i;
    fbx_error(cmd, "%s: unknown value '%s'", opt, val);
    return -1;
}

int fbx_report(int argc, char **argv)
{
    static const char *bys[] = {"op", "site", "stack", "shape"};
    static const char *sorts[] = {"bytes", "count"};
    static const char *formats[] = {"text", "json", "folded", "svg"};
    static const char *weights[] = {"count", "bytes"};
    static const struct option longopts[] = {
        {"by", required_argument, 0, 'b'},     {"sort", required_argument, 0, 's'},
        {"top", required_argument, 0, 't'},    {"format", required_argument, 0, 'f'},
        {"weight", required_argument, 0, 'w'}, {"output", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    int by = 0, sort = 0, format = 0, weight = 0, opt;
    uint64_t top = 0;
    const char *output = NULL;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
        switch (opt) {
        case 'b': by = pick("report", "--by", optarg, bys, 4); break;
        case 's': sort = pick("report", "--sort", optarg, sorts, 2); break;
        case 'f': format = pick("report", "--format", optarg, formats, 4); break;
        case 'w': weight = pick("report", "--weight", optarg, weights, 2); break;
        case 'o': output = optarg; break;
        case 't':
            if (fbu_parse_count(optarg, &top) != 0) {
                fbx_error("report", "--top: expected a number, got '%s'", optarg);
                return FBX_USAGE;
            }
            break;
        case 'h': fputs(help, stdout); fputs(fbx_exit_codes, stdout); return FBX_OK;
        default:
            fbx_error("report", "unknown or incomplete option '%s' (try --help)",
                      argv[optind - 1]);
            return FBX_USAGE;
        }
        if (by < 0 || sort < 0 || format < 0 || weight < 0)
            return FBX_USAGE;
    }
    if (optind >= argc) {
        fbx_error("report", "no dump given (try --help)");
        return FBX_USAGE;
    }
    int code;
    fbm_census *c = fbx_load("report", argv + optind, argc - optind, &code);
    if (!c)
        return code;
    FILE *out = stdout;
    if (output && !(out = fopen(output, "w"))) {
        fbx_error("report", "%s: cannot write", output);
        fbm_census_free(c);
        return FBX_READ;
    }
    int rc = 0;
    if (format == 0) {
        fbt_text(out, c, (fbm_by)by, (fbm_sort)sort, top);
    } else if (format == 1) {
        json_t *j = fbt_json(c, (fbm_by)by, (fbm_sort)sort, top);
        rc = j ? json_dumpf(j, out, JSON_INDENT(2)) : -1;
        fputc('\n', out);
        json_decref(j);
    } else if (format == 2) {
        rc = fbf_folded(out, c, weight == 1);
    } else {
        rc = fbf_svg(out, c, weight == 1);
    }
    if (out != stdout && fclose(out) != 0)
        rc = -1;
    fbm_census_free(c);
    if (rc) {
        fbx_error("report", "cannot write the report");
        return FBX_READ;
    }
    return FBX_OK;
}
