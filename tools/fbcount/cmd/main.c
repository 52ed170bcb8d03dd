/* main.c - the fbcount command: dispatch to one subcommand per file. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* own_status: the command ends as the program it ran did (run), so its status is never
 * turned into a write error of its own output; every other command is finished here. */
static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *what;
    bool own_status;
} commands[] = {
    {"run", fbx_run, "run a command with the census shim, print the merged census", true},
    {"report", fbx_report, "merge dumps; print a table, JSON, folded stacks or an SVG", false},
    {"diff", fbx_diff, "compare two censuses: ops that appeared, vanished, grew, shrank", false},
    {"check", fbx_check, "exit 1 when a census is over its allowance (for CI)", false},
    {"snapshot", fbx_snapshot, "ask a running process for a census and print it", false},
    {"symbolize", fbx_symbolize, "resolve the raw frames of a crash dump with elfutils", false},
    {"attach", fbx_attach, "start a census in a running process started without fbcount", false},
    {"detach", fbx_detach, "end an attached census: write it and put the process back", false},
};

/* Runs command i and finishes it (fbx_finish), unless its status is its program's. */
static int dispatch(size_t i, int argc, char **argv)
{
    int code = commands[i].fn(argc, argv);
    return commands[i].own_status ? code : fbx_finish(commands[i].name, code);
}

static void usage(FILE *out)
{
    fputs("usage: fbcount <command> [options] [args]\n\n"
          "Counts the operations that silently leave the GPU (fallbacks) and the host work\n"
          "they cause, from the dumps libfbcount.so writes.\n\nCommands:\n",
          out);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].what);
    fputs("\n'fbcount help <command>' (or 'fbcount <command> --help') describes each;\n"
          "'man fbcount' has the details. -V, --version: the version.\n\n",
          out);
    fbx_put_exit_codes(out, NULL);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return FBX_USAGE;
    }
    /* "fbcount help CMD" is "fbcount CMD --help", so the two can never differ. */
    if (!strcmp(argv[1], "help") && argc > 2) {
        char *args[] = {argv[2], "--help", NULL};
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
            if (!strcmp(argv[2], commands[i].name))
                return dispatch(i, 2, args);
        fprintf(stderr, "fbcount: help: unknown command '%s' (try 'fbcount --help')\n", argv[2]);
        return FBX_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return fbx_finish("help", FBX_OK);
    }
    /* -V right after the command's name works for every command, run and snapshot too. */
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V") ||
        (argc > 2 && (!strcmp(argv[2], "--version") || !strcmp(argv[2], "-V")))) {
        fbx_version();
        return fbx_finish("version", FBX_OK);
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return dispatch(i, argc - 1, argv + 1);
    fprintf(stderr, "fbcount: unknown command '%s' (try 'fbcount --help')\n", argv[1]);
    return FBX_USAGE;
}
