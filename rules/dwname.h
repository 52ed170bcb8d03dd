/* dwname.h - how a frame's function and source file are named from DWARF: the rule the shim
 * applies when it names live stacks and the command applies when it symbolizes a crash dump
 * later, perhaps elsewhere. Both must give the same names for the same address (tests/cpp
 * checks it), so both call these.
 */
#ifndef FBR_DWNAME_H
#define FBR_DWNAME_H

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>

#include "symbolizer.h"

/* A source file as a line table names it, made absolute against the compilation directory
 * ("../tests/app.c" compiled in /src/build is /src/tests/app.c) with "." and ".." folded, so
 * that the name does not depend on where the dump is read. Written into out (cap bytes; a
 * component that does not fit is left out) and returned; NULL for a NULL file. */
char *fbr_source_path(const char *file, const char *comp_dir, char *out, size_t cap);

/* The name a DIE has in the symbol table's terms: its linkage (mangled) name where it has
 * one, from its abstract origin for an inlined instance; else its plain name; else NULL. */
const char *fbr_die_name(Dwarf_Die *die);

/* One frame at an address: a function inlined there, or the function the symbol table names
 * (the last of a chain). symbol points into the module's data (valid while its Dwfl is);
 * file into the buffer given to fbr_dw_chain. */
typedef struct {
    const char *symbol;
    const char *file;
    long line;
    bool inlined;
} fbr_dw_frame;

/* The frames at addr in mod (a Dwfl address: the return address less one for every frame but
 * a stack's innermost), innermost first: each function inlined there, named by its DIE at the
 * line inside it, then the function the symbol table names (fbr_function_at, through fns: the
 * module's table) at the line of the innermost call. Returns how many were written (at least
 * 1, at most max); files are made absolute (fbr_source_path) into buf (cap bytes; a file that
 * does not fit is left NULL). */
int fbr_dw_chain(Dwfl_Module *mod, fbr_functions **fns, Dwarf_Addr addr, fbr_dw_frame *out, int max,
                 char *buf, size_t cap);

#define FBR_MAX_CHAIN 16

/* A cache of named frames: each address of a module named once, for all who name frames in
 * one libdwfl session (the shim's process, a dump `fbcount symbolize` reads). */
typedef struct fbr_chains fbr_chains;

/* fbr_dw_chain's frames at addr in mod (at most FBR_MAX_CHAIN), named at the first call for
 * (mod, addr) and kept in *cache (NULL at first) with the strings they own; *out points into
 * the cache, its symbols into mod's data. Returns how many (0 when out of memory). Free the
 * cache with fbr_chains_free, at the latest when the session ends. */
int fbr_chain_at(fbr_chains **cache, Dwfl_Module *mod, fbr_functions **fns, Dwarf_Addr addr,
                 const fbr_dw_frame **out);
void fbr_chains_free(fbr_chains *cache);

#endif
