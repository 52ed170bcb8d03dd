/* fold.h - which frames of a stack are the user's code, so views of user code (report --by
 * stack, --user-only flame graphs) can put them first and fold the rest away, as py-spy
 * merges native frames and pprof's -focus hides the runtime.
 *
 * A frame is the backend's when it lies at or inside the op's frame, in the op's native
 * module or one of the backend's (its row in rules/backend.h: a built-in one by name, else
 * the descriptor the dump carries for it; and backends[].modules), in one of its Python
 * packages (the row's and the dump's config.py_backend), or, inlined, in its sources (a
 * header of its C++ API); the interpreter's when its module is an FFI layer or a Python
 * interpreter (rules/attrib.h); the system's when it is the C library's, the C++ runtime's
 * or the loader's; the user's otherwise. Another inlined frame has the role of the frame it
 * was inlined into.
 */
#ifndef FBCOUNT_FOLD_H
#define FBCOUNT_FOLD_H

#include "dump.h"

typedef enum { FBM_ROLE_USER, FBM_ROLE_BACKEND, FBM_ROLE_INTERPRETER, FBM_ROLE_SYSTEM } fbm_role;

/* The role of each frame of st (innermost first) into roles[0..st->nframes). */
void fbm_frame_roles(const fbd_dump *d, const fbd_stack *st, unsigned char *roles);

/* The name of a folded role, for people and JSON: "backend", "interpreter", "system"
 * (NULL for FBM_ROLE_USER). */
const char *fbm_role_name(fbm_role role);

/* The site of a stack as file and line: the frame of the site's function, outward from the
 * op (NULL and 0 when no frame names it, or it has no line). */
void fbm_stack_site(const fbd_dump *d, const fbd_stack *st, const char **file, long *line);

#endif
