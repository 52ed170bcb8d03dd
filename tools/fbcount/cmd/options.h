/* options.h - one table of options per command, as perf's parse-options: a row names the long
 * option, whether its letter is a short option too, its argument and its help. Parsing (the
 * getopt_long tables), the option lines of --help and the check of the man page's SYNOPSIS
 * (tests/cmd/docs_test.py reads --help) all come from the table, so they cannot disagree.
 */
#ifndef FBCOUNT_OPTIONS_H
#define FBCOUNT_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "choice.h"

typedef struct {
    int key;          /* what the command's handler is given; the letter of a short option */
    bool short_too;   /* -KEY is accepted as well as --name */
    const char *name; /* the long name, without "--" */
    const char *arg;  /* the argument as --help shows it ("FILE"; "[=FILE]" optional), or NULL */
    const char *help; /* its lines, '\n' between them */
    /* The text of "%s" in arg or help (a list of values), NULL when neither has one. */
    const char *(*values)(void);
    /* The help where it is made from another table (a format and what it writes each), for
     * a row whose help is NULL. */
    const char *(*help_of)(void);
} fbx_opt;

/* Defines fn, a row's values: the names of a table of choices (base/choice.h) joined by '|'. */
#define FBX_CHOICE_VALUES(fn, list, n)                                                             \
    static const char *fn(void)                                                                    \
    {                                                                                              \
        static char b[256];                                                                        \
        return fbx_choices(list, n, "|", b, sizeof b);                                             \
    }

/* The rows every command has: its handler prints the version, or its help. */
#define FBX_OPTS_VERSION_HELP                                                                      \
    {'V', true, "version", NULL, "print the version", NULL, NULL},                                 \
    {                                                                                              \
        'h', true, "help", NULL, "this text", NULL, NULL                                           \
    }

/* One option of a subcommand: its row's key and its argument. Returns FBX_OK, an exit code,
 * or -1 after --help or --version. */
typedef int (*fbx_option_fn)(void *ctx, int key, char *arg);

/* Reads the options of argv (argv[0] the subcommand's name) by the table opts (n rows), each
 * through each(ctx, ...), until the first that does not return FBX_OK; optind is then where
 * the operands begin (the first of them ends the options when in_order: a command's own
 * arguments follow). An option of no row, or one without its argument, is named on stderr
 * in the command's words. Returns FBX_OK, FBX_USAGE or what each returned. */
int fbx_options(int argc, char **argv, const fbx_opt *opts, size_t n, bool in_order,
                fbx_option_fn each, void *ctx);

/* The option lines of --help for the table: "  -o, --output FILE", then the help from column
 * col (on the next line when the option reaches it), each further line indented to col. */
void fbx_put_options(FILE *out, const fbx_opt *opts, size_t n, int col);

#endif
