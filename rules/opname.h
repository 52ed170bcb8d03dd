/* opname.h - one name for an op, wherever a person writes one.
 *
 * The census names an op by its function ("vkt_dot"); VKT_NATIVE_DISABLE, vkt's Python
 * functions and libvkt's profile say "dot". Both are accepted wherever an op is named (allow
 * files and FBCOUNT_ALLOW, fbcount check --allow, the pytest plugin's allow=, the in-process
 * API's op queries): an op's short name is its name without the op prefix it starts with
 * (FBCOUNT_OP_PREFIX, default "vkt_"). A name that names no op known there is warned about
 * once, with the known names closest to it.
 */
#ifndef FBR_OPNAME_H
#define FBR_OPNAME_H

#include <stdbool.h>
#include <stddef.h>

#include "attrib.h" /* fbr_names */

/* The default prefixes (FBR_DEFAULT_OP_PREFIX), for callers that were given none. */
extern const fbr_names fbr_default_prefixes;

/* op without the first of prefixes it starts with ("vkt_dot" -> "dot"); op itself when it
 * starts with none, or when nothing would be left. */
const char *fbr_op_short(const char *op, const fbr_names *prefixes);

/* Whether name, as a person wrote it, names op, as the census names it: the same text, or
 * one of them is the other with its op prefix taken off ("dot" and "vkt_dot"). A prefix of
 * another backend does not match ("my_dot" is not "vkt_dot"). */
bool fbr_op_named(const char *name, const char *op, const fbr_names *prefixes);

/* Whether name names any of the n known ops. */
bool fbr_op_known(const char *name, const char *const *known, size_t n, const fbr_names *prefixes);

/* Up to max of the known ops a person writing name may have meant, closest first: short
 * names within an edit distance of a third of the longer one (at least 1, case ignored),
 * each given as the census names it, none twice. Returns how many. */
size_t fbr_op_closest(const char *name, const char *const *known, size_t n,
                      const fbr_names *prefixes, const char **out, size_t max);

#endif
