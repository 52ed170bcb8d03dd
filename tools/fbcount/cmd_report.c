/* cmd_report.c - fbcount report: merge dumps and print them in one of several formats. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "flame.h"
#include "metrics_report.h"
#include "output.h"
#include "pprof.h"
#include "table.h"
#include "units.h"

static const char help[] =
    "usage: fbcount report [options] [DUMP|DIR...]\n\n"
    "Merges dumps (a DIR means every *.json in it) and prints the census. Successive dumps\n"
    "of one process (checkpoints, snapshots, then its exit or signal dump) are counted\n"
    "once, from the latest. Without a DUMP or DIR, reads the newest fbcount-* folder in\n"
    "the working directory.\n\n"
    "  --by op|site|stack|shape|rank|host|process\n"
    "                             group rows by (default op)\n"
    "  --sort bytes|count|time    order rows by (default bytes)\n"
    "  --top N                    print at most N rows per table (default all)\n"
    "  --where FIELD=VALUE        only processes whose rank, pid, host or exe (path or\n"
    "                             name) is VALUE; repeat to allow several values or to\n"
    "                             combine fields\n"
    "  --frames func|line         name stack frames by function (default), or by function\n"
    "                             and call line, one frame per line: 'step (a.c:187)'\n"
    "  --format text|json|folded|svg|pprof|openmetrics\n"
    "                             text: tables of fallbacks and host-resident ops;\n"
    "                             json: the same as one object (fbcount-report/1);\n"
    "                             folded: collapsed stacks for flamegraph.pl, speedscope,\n"
    "                             inferno; svg: a self-contained interactive flame graph;\n"
    "                             pprof: gzip-compressed profile.proto for go tool pprof,\n"
    "                             Pyroscope, Parca, Grafana (needs -o or a redirect);\n"
    "                             openmetrics: counters for Prometheus\n"
    "  --weight count|bytes|time  folded/svg frame width (default count)\n"
    "  --raw                      text: one line per row, fields separated by a space,\n"
    "                             exact numbers, names escaped (\\x20 for a space)\n"
    "  --no-headings              text: no column headings\n"
    "  -o, --output FILE          write there (replaced atomically) instead of standard\n"
    "                             output\n"
    "  -V, --version              print the version\n"
    "  -h, --help                 this text\n\n"
    "C++ names are demangled in text, folded and SVG output; JSON keeps the dump's raw\n"
    "symbol and adds \"demangled\". Tables fit the terminal when writing to one and are\n"
    "never cut otherwise.\n\n";

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
    static const char *bys[] = {"op", "site", "stack", "shape", "rank", "host", "process"};
    static const char *sorts[] = {"bytes", "count", "time"};
    static const char *formats[] = {"text", "json", "folded", "svg", "pprof", "openmetrics"};
    static const char *weights[] = {"count", "bytes", "time"};
    static const char *frames[] = {"func", "line"};
    static const struct option longopts[] = {
        {"by", required_argument, 0, 'b'},     {"sort", required_argument, 0, 's'},
        {"top", required_argument, 0, 't'},    {"format", required_argument, 0, 'f'},
        {"weight", required_argument, 0, 'w'}, {"output", required_argument, 0, 'o'},
        {"where", required_argument, 0, 'W'},  {"frames", required_argument, 0, 'F'},
        {"raw", no_argument, 0, 'r'},          {"no-headings", no_argument, 0, 'n'},
        {"version", no_argument, 0, 'V'},      {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    int by = 0, sort = 0, format = 0, weight = 0, frame = 0, opt;
    uint64_t top = 0;
    bool raw = false, noheadings = false;
    const char *output = NULL;
    fbm_census *c = fbm_census_new();
    if (!c) {
        fbx_error("report", "out of memory");
        return FBX_READ;
    }
    optind = 1;
    opterr = 0;
    int code = FBX_OK;
    while (code == FBX_OK && (opt = getopt_long(argc, argv, "ho:V", longopts, NULL)) != -1) {
        switch (opt) {
        case 'b': by = pick("report", "--by", optarg, bys, 7); break;
        case 's': sort = pick("report", "--sort", optarg, sorts, 3); break;
        case 'f': format = pick("report", "--format", optarg, formats, 6); break;
        case 'w': weight = pick("report", "--weight", optarg, weights, 3); break;
        case 'F': frame = pick("report", "--frames", optarg, frames, 2); break;
        case 'o': output = optarg; break;
        case 'r': raw = true; break;
        case 'n': noheadings = true; break;
        case 'W': {
            char *eq = strchr(optarg, '=');
            if (eq)
                *eq = '\0';
            if (!eq || fbm_census_where(c, optarg, eq + 1) != 0) {
                if (eq)
                    *eq = '=';
                fbx_error("report", "--where: expected rank=N, pid=N, host=NAME or exe=NAME, "
                          "got '%s'", optarg);
                code = FBX_USAGE;
            }
            break;
        }
        case 't':
            if (fbu_parse_count(optarg, &top) != 0) {
                fbx_error("report", "--top: expected a number, got '%s'", optarg);
                code = FBX_USAGE;
            }
            break;
        case 'V': fbx_version(); fbm_census_free(c); return fbx_finish("report", FBX_OK);
        case 'h':
            fputs(help, stdout);
            fputs(fbx_exit_codes, stdout);
            fbm_census_free(c);
            return fbx_finish("report", FBX_OK);
        default:
            fbx_error("report", "unknown or incomplete option '%s' (try --help)",
                      argv[optind - 1]);
            code = FBX_USAGE;
        }
        if (by < 0 || sort < 0 || format < 0 || weight < 0 || frame < 0)
            code = FBX_USAGE;
    }
    if (code != FBX_OK) {
        fbm_census_free(c);
        return code;
    }
    fbm_census_set_frames(c, (fbm_frames)frame);
    char dflt[4096];
    char *dpath[] = {dflt};
    if (optind >= argc && fbx_default_dir("report", dflt, sizeof dflt) != 0) {
        fbm_census_free(c);
        return FBX_USAGE;
    }
    code = optind >= argc ? fbx_load_into("report", c, dpath, 1)
                          : fbx_load_into("report", c, argv + optind, argc - optind);
    if (code != FBX_OK) {
        fbm_census_free(c);
        return code;
    }
    char err[512];
    if (format == 4) {
        /* Binary: written (atomically, never to a terminal) by the profile's own writer. */
        fbpp_status ps = fbpp_write(c, output, err, sizeof err);
        fbm_census_free(c);
        if (ps != FBPP_OK) {
            fbx_error("report", "%s", err);
            return ps == FBPP_ETTY ? FBX_USAGE : FBX_WRITE;
        }
        return FBX_OK;
    }
    fbo_file out;
    if (fbo_open(&out, output, err, sizeof err) != 0) {
        fbx_error("report", "%s", err);
        fbm_census_free(c);
        return FBX_WRITE;
    }
    fbt_opts o = {.by = (fbm_by)by, .sort = (fbm_sort)sort, .top = top, .raw = raw,
                  .noheadings = noheadings, .width = fbt_term_width(out.f)};
    int rc = 0;
    if (format == 0) {
        fbt_print_census(out.f, c, &o);
    } else if (format == 1) {
        rc = fbt_json_write(out.f, c, &o);
    } else if (format == 2) {
        rc = fbf_folded(out.f, c, (fbf_weight)weight);
    } else if (format == 5) {
        rc = fbom_write(c, out.f);
    } else {
        rc = fbf_svg(out.f, c, (fbf_weight)weight);
    }
    fbm_census_free(c);
    if (rc) {
        fbo_close(&out, false, err, sizeof err);
        fbx_error("report", "out of memory while writing the report");
        return FBX_WRITE;
    }
    if (fbo_close(&out, true, err, sizeof err) != 0) {
        fbx_error("report", "%s", err);
        return FBX_WRITE;
    }
    return FBX_OK;
}
