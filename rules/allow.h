/* allow.h - the allow file: ops whose fallbacks are expected, each with its reason.
 *
 * One grammar for the shim (FBCOUNT_ALLOW) and the command (--allow), so both give the same
 * verdict on the same file, bad lines included:
 *
 *   file    = { line "\n" }            at most FBR_ALLOW_MAX_BYTES, UTF-8, "\r\n" accepted
 *   line    = blank | comment | entry
 *   comment = [blanks] "#" any         a whole-line comment
 *   entry   = [blanks] op [blanks] [ "#" reason ]
 *   op      = 1..255 bytes, none of them blank, '#' or a control character
 *
 * Anything else on a line (two words before '#', a control character, a line longer than
 * FBR_ALLOW_MAX_LINE) makes the whole file invalid: nothing in it is allowed. An entry
 * without a reason is allowed, with a warning. An op listed twice keeps its first reason.
 * An op is named by its short name ("dot") or as the census names it ("vkt_dot"), as
 * rules/opname.h has it.
 */
#ifndef FBR_ALLOW_H
#define FBR_ALLOW_H

#include <stdbool.h>
#include <stddef.h>

#include "opname.h"

#define FBR_ALLOW_MAX_BYTES ((size_t)1 << 20)
#define FBR_ALLOW_MAX_LINE 4096

typedef struct fbr_allow fbr_allow;

/* Called once per entry without a reason: its line number and op. */
typedef void (*fbr_allow_warn)(void *ctx, long line, const char *op);

/* Parses text (len bytes; NUL bytes are an error). Returns the list, or NULL with one line
 * "line N: ..." in err (or "out of memory"). warn may be NULL. */
fbr_allow *fbr_allow_parse(const char *text, size_t len, fbr_allow_warn warn, void *ctx, char *err,
                           size_t errlen);

/* Reads and parses path (a regular file, see readfile.h). NULL with "PATH: ..." in err; *unreadable
 * tells a file that could not be read from one that is not a valid allow file. */
fbr_allow *fbr_allow_load(const char *path, fbr_allow_warn warn, void *ctx, char *err,
                          size_t errlen, bool *unreadable);

/* An empty list: nothing is allowed. NULL when out of memory. */
fbr_allow *fbr_allow_empty(void);

/* The op prefixes a's names are matched under (rules/opname.h); FBR_DEFAULT_OP_PREFIX until
 * set. prefixes must outlive a; NULL restores the default. */
void fbr_allow_set_prefixes(fbr_allow *a, const fbr_names *prefixes);

/* Whether op (as the census names it, or short) is listed; a NULL list allows nothing. */
bool fbr_allow_has(const fbr_allow *a, const char *op);

/* The reason written after '#' for op; "" when none was written or op is not listed. */
const char *fbr_allow_reason(const fbr_allow *a, const char *op);

/* Calls fn once for every entry of a that names none of the n known ops (a typo, or an op
 * of another backend), in the order of the file, with its line and the known ops closest to
 * it (rules/opname.h; nclose of them, up to 3). Returns how many entries that was. */
typedef void (*fbr_allow_unknown_fn)(void *ctx, long line, const char *name,
                                     const char *const *close, size_t nclose);
size_t fbr_allow_unknown(const fbr_allow *a, const char *const *known, size_t n,
                         fbr_allow_unknown_fn fn, void *ctx);

/* Number of distinct ops listed. */
size_t fbr_allow_count(const fbr_allow *a);

void fbr_allow_free(fbr_allow *a);

#endif
