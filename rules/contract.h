/* contract.h - what the command and the shim say to each other, in one place: the variables
 * the shim reads (the settings `fbcount run` hands a watched process as its environment, and
 * `fbcount attach` as text), the census modes, the names of the files a run leaves, the list
 * separators, and the contract's version, which the shim checks. Adding a mode or a variable
 * is one line below; the shim, the command and the documentation tests read these lists.
 */
#ifndef FBR_CONTRACT_H
#define FBR_CONTRACT_H

#include <stdbool.h>
#include <stddef.h>

/* The version of this contract. The command hands it to the shim (FBCOUNT_CONTRACT), which
 * says once when it was built for another: a command and a shim of two builds. */
#define FBR_CONTRACT_VERSION 2

/* The modes of the census (FBCOUNT_MODE, --mode): X(ID, name, what it does). */
#define FBR_MODES(X)                                                                               \
    X(COUNT, "count", "record silently")                                                           \
    X(WARN, "warn", "print each new (op, site) as it falls back")                                  \
    X(ABORT, "abort", "write the census and abort at a fallback FBCOUNT_ALLOW does not list")      \
    X(ERROR, "error", "fail a fallback FBCOUNT_ALLOW does not list in the backend's error path")

typedef enum {
#define FBR_MODE_ENUM(id, name, what) FBR_MODE_##id,
    FBR_MODES(FBR_MODE_ENUM)
#undef FBR_MODE_ENUM
        FBR_NMODES
} fbr_mode;

/* A mode's name ("count"); "count" for a value out of range. */
const char *fbr_mode_name(fbr_mode m);
/* The mode named name; false (out unchanged) when it names none. */
bool fbr_mode_parse(const char *name, fbr_mode *out);
/* The modes' names joined by sep, the last by last: "count, warn, abort or error". */
const char *fbr_mode_list(const char *sep, const char *last, char *buf, size_t cap);

/* The variables the shim reads: X(ID, NAME). The command sets those of a run (below). */
#define FBR_VARIABLES(X)                                                                           \
    X(ENABLED, "FBCOUNT")                                                                          \
    X(ALL_PROCESSES, "FBCOUNT_ALL_PROCESSES")                                                      \
    X(DEPTH, "FBCOUNT_DEPTH")                                                                      \
    X(OP_PREFIX, "FBCOUNT_OP_PREFIX")                                                              \
    X(PY_BACKEND, "FBCOUNT_PY_BACKEND")                                                            \
    X(BACKEND, "FBCOUNT_BACKEND")                                                                  \
    X(EXIT, "FBCOUNT_EXIT")                                                                        \
    X(TORCH_ADAPTER, "FBCOUNT_TORCH_ADAPTER")                                                      \
    X(OUTPUT, "FBCOUNT_OUTPUT")                                                                    \
    X(METRICS, "FBCOUNT_METRICS")                                                                  \
    X(RUN_LOG, "FBCOUNT_RUN_LOG")                                                                  \
    X(SIGNAL, "FBCOUNT_SIGNAL")                                                                    \
    X(INTERVAL, "FBCOUNT_INTERVAL")                                                                \
    X(SIGNAL_WAIT, "FBCOUNT_SIGNAL_WAIT")                                                          \
    X(MODE, "FBCOUNT_MODE")                                                                        \
    X(QUIET, "FBCOUNT_QUIET")                                                                      \
    X(CLOCK, "FBCOUNT_CLOCK")                                                                      \
    X(ALLOW, "FBCOUNT_ALLOW")                                                                      \
    X(CONTRACT, "FBCOUNT_CONTRACT")

typedef enum {
#define FBR_VAR_ENUM(id, name) FBR_VAR_##id,
    FBR_VARIABLES(FBR_VAR_ENUM)
#undef FBR_VAR_ENUM
        FBR_NVARS
} fbr_var;

/* The longest variable's name, with its NUL. */
#define FBR_VAR_NAME_MAX 24

/* The names of the variables, by fbr_var: characters, not pointers (the shim reads them at
 * load, where a relocated pointer would cost every process a page). */
extern const char fbr_var_names[FBR_NVARS][FBR_VAR_NAME_MAX];

/* The separators of the variables that hold lists: FBCOUNT_BACKEND's files, FBCOUNT_EXIT's
 * exits (blanks separate them too). */
#define FBR_BACKEND_SEP ':'
#define FBR_EXIT_SEP ','

/* Where a process writes its census when FBCOUNT_OUTPUT is unset, and what the shim adds
 * to a dump's name for the temporary it writes first (then "<id>" and a rename). */
#define FBR_DEFAULT_OUTPUT "fbcount.%e.%p.json"
#define FBR_TEMPORARY ".tmp."
/* The escapes of an FBCOUNT_OUTPUT template, which the shim expands (pid, host, executable,
 * dump number, MPI rank, census id, '%'); the shim refuses a template with another. */
#define FBR_OUTPUT_ESCAPES "phenri%"
/* The value of FBCOUNT_OUTPUT that writes no dump. */
#define FBR_OUTPUT_NONE "none"

/* The template a run's processes write their dumps by, in the run's folder dir (out: cap
 * bytes). false when it does not fit. */
bool fbr_run_output(const char *dir, char *out, size_t cap);
/* The name of the folder `fbcount run` makes for process pid: "fbcount-<pid>", or
 * "fbcount-<pid>.<n>" for n > 0 (that name taken). */
bool fbr_run_dir_name(long pid, int n, char *out, size_t cap);
/* The run's log in its folder dir, which the shim's processes append to (FBCOUNT_RUN_LOG):
 * hidden, so that no reader takes it for a dump. */
bool fbr_run_log(const char *dir, long pid, char *out, size_t cap);
/* Whether a file name is one a run leaves in its folder: a dump, a temporary, its log. */
bool fbr_is_run_file(const char *name);
/* Whether a file name is a dump's: a name ending in ".json", not hidden (a temporary of the
 * shim's, "NAME.json.tmp.ID", is not one). */
bool fbr_is_dump_name(const char *name);
/* Whether a file name is a temporary the shim writes a dump into before its rename. */
bool fbr_is_dump_temporary(const char *name);
/* Whether a folder name is one `fbcount run` makes: "fbcount-<pid>" or "fbcount-<pid>.<n>". */
bool fbr_is_run_dir(const char *name);

#endif
