/* options.c - see options.h. */
#include "options.h"

#include <getopt.h>
#include <string.h>

#include "cli.h"

/* Room for the rows of one command's table, the terminating row included. */
#define MAX_OPTS 32

/* Whether a row's argument may be left out (--json[=FILE]). */
static bool optional(const fbx_opt *o)
{
    return o->arg && o->arg[0] == '[';
}

int fbx_options(int argc, char **argv, const fbx_opt *opts, size_t n, bool in_order,
                fbx_option_fn each, void *ctx)
{
    struct option longopts[MAX_OPTS] = {{0}};
    char shortopts[2 * MAX_OPTS + 2] = "";
    size_t ns = 0;
    if (in_order)
        shortopts[ns++] = '+';
    for (size_t i = 0; i < n && i + 1 < MAX_OPTS; i++) {
        int has = optional(&opts[i]) ? optional_argument
                  : opts[i].arg      ? required_argument
                                     : no_argument;
        longopts[i] = (struct option){opts[i].name, has, NULL, opts[i].key};
        if (opts[i].short_too) {
            shortopts[ns++] = (char)opts[i].key;
            if (opts[i].arg)
                shortopts[ns++] = ':';
        }
    }
    shortopts[ns] = '\0';
    optind = 1;
    opterr = 0; /* an unknown option is named below, in the command's words */
    int opt, code = FBX_OK;
    while (code == FBX_OK && (opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        if (opt == '?' || opt == ':') {
            fbx_error(argv[0], "unknown or incomplete option '%s' (try --help)", argv[optind - 1]);
            return FBX_USAGE;
        }
        code = each(ctx, opt, optarg);
    }
    return code;
}

/* text with its "%s" (at most one) replaced by values, into buf. */
static const char *filled(const char *text, const fbx_opt *o, char *buf, size_t cap)
{
    const char *at = strstr(text, "%s");
    if (!at || !o->values)
        return text;
    snprintf(buf, cap, "%.*s%s%s", (int)(at - text), text, o->values(), at + 2);
    return buf;
}

void fbx_put_options(FILE *out, const fbx_opt *opts, size_t n, int col)
{
    for (size_t i = 0; i < n; i++) {
        const fbx_opt *o = &opts[i];
        char letter[8] = "", head[512], arg[256], help[1024];
        if (o->short_too)
            snprintf(letter, sizeof letter, "-%c, ", o->key);
        int len = snprintf(head, sizeof head, "  %s--%s%s%s", letter, o->name,
                           o->arg && !optional(o) ? " " : "",
                           o->arg ? filled(o->arg, o, arg, sizeof arg) : "");
        fputs(head, out);
        if (len >= col)
            fprintf(out, "\n%*s", col, "");
        else
            fprintf(out, "%*s", col - len, "");
        const char *text = o->help ? filled(o->help, o, help, sizeof help) : o->help_of();
        for (const char *h = text ? text : ""; *h;) {
            size_t line = strcspn(h, "\n");
            fwrite(h, 1, line, out);
            fputc('\n', out);
            h += line;
            if (*h && *++h)
                fprintf(out, "%*s", col, "");
        }
    }
}
