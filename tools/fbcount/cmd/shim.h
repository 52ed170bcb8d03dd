/* shim.h - finding libfbcount.so for fbcount run, and telling whether a running process runs
 * it, so that no fbcount command sends a signal to a process that would die of it. */
#ifndef FBCOUNT_SHIM_H
#define FBCOUNT_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "choice.h"
#include "contract.h"

/* meson passes <prefix>/<libdir>/libfbcount.so and <libdir>; these defaults serve other
 * builds. */
#ifndef FBCOUNT_LIBDIR
#define FBCOUNT_LIBDIR "lib"
#endif
#ifndef FBCOUNT_SHIM_INSTALLED
#define FBCOUNT_SHIM_INSTALLED "/usr/local/lib/libfbcount.so"
#endif

/* What a run or an attach asks of the shim: the folder its dumps go to (absolute), and
 * the options given; NULL for one not given. */
typedef struct {
    const char *dir, *log, *mode, *allow, *exits, *backends;
} fbs_request;

/* The census modes as --mode's choices (contract.h's list). */
extern const fbx_choice fbs_modes[FBR_NMODES];
/* Their names joined by '|', as --help shows --mode's values. */
const char *fbs_mode_values(void);

/* One variable the shim is handed, and its value. */
typedef struct {
    fbr_var var;
    const char *value;
} fbs_setting;

/* The settings that carry req to the shim (FBCOUNT_OUTPUT, _QUIET, _CONTRACT, ...) into
 * out, their texts kept in buf: the one list fbcount run sets as environment and fbcount
 * attach hands over as text. Returns how many, or -1 when buf is too small. */
int fbs_settings(const fbs_request *req, fbs_setting out[FBR_NVARS], char *buf, size_t cap);

/* Writes the shim's absolute path into buf: $FBCOUNT_SHIM if set, else the build tree
 * next to this binary (<dir>/../../interpose/libfbcount.so), else the installed tree next to
 * it (<dir>/../<libdir>/libfbcount.so), else the configured installed path.
 * Returns 0, or -1 with the places tried written into buf. */
int fbs_find(char *buf, size_t len);

/* Whether pid runs the shim and catches its census signal: /proc/PID/maps maps libfbcount,
 * FBCOUNT_SIGNAL in /proc/PID/environ names the signal as the shim reads it (USR1 when
 * unset or refused), and that signal's bit is set in SigCgt of /proc/PID/status. Returns 0
 * with *sig set, or -1 with why ("does not run libfbcount.so", ...) and errno ESRCH when
 * there is no such process. */
int fbs_probe(pid_t pid, int *sig, char *why, size_t len);

/* Sends pid its census signal when fbs_probe allows it (and, when want > 0, that signal is
 * want), through a pidfd opened before the checks, so that a pid reused meanwhile is not
 * hit. Returns 0 with *sent set, or -1 with why; nothing is sent then. */
int fbs_signal(pid_t pid, int want, int *sent, char *why, size_t len);

/* The live descendants of pid (its children, theirs, ...), read from /proc. Returns a
 * malloc'ed array and its length in *n; NULL with *n == 0 when there are none. */
pid_t *fbs_descendants(pid_t pid, size_t *n);

/* Whether pid is an `fbcount run` supervisor (its command line is fbcount run ...). */
bool fbs_is_supervisor(pid_t pid);

/* Whether pid is attached now (fbcount attach, not yet detached): it holds the memfd
 * FBR_ATTACH_MEMFD (rules/fields.h). */
bool fbs_attached(pid_t pid);

/* The path of the libfbcount it maps, into path; false when it maps none. */
bool fbs_mapped_shim(pid_t pid, char *path, size_t len);

/* The value of name for pid's shim: its attach's variables when it is attached, else
 * /proc/PID/environ; copied into buf. False when absent or unreadable. */
bool fbs_environ(pid_t pid, const char *name, char *buf, size_t len);

#endif
