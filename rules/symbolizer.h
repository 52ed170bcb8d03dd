/* symbolizer.h - the core both namers of frames share: the shim's, when it writes a live
 * dump, and `fbcount symbolize`'s, when it names a crash dump's raw frames later. Which debug
 * information a namer reads is a policy passed here and recorded in the dump ("debuginfo"),
 * so that a reader knows how its names were found and the command can name frames as the
 * shim does (--debuginfo build-id); how a frame is named from what was read is dwname.h's.
 */
#ifndef FBR_SYMBOLIZER_H
#define FBR_SYMBOLIZER_H

#include <elfutils/libdwfl.h>
#include <stddef.h>

/* The debug-information policies: name as the dump writes it, libdwfl's find_debuginfo
 * callback that applies it (symbolizer.c), what is read. */
#define FBR_DEBUGINFO_POLICIES(X)                                                                  \
    X(BUILD_ID, "build-id", build_id_debuginfo,                                                    \
      "the modules' own symbol and line tables, and separate debug information from the local "    \
      "build-id tree (/usr/lib/debug/.build-id) for modules other than the system's runtime")      \
    X(STANDARD, "standard", dwfl_standard_find_debuginfo,                                          \
      "elfutils' standard search as well: .gnu_debuglink files, the build-id tree for every "      \
      "module, and debuginfod servers where DEBUGINFOD_URLS names them")

typedef enum {
#define FBR_DEBUGINFO_ENUM(id, name, find, what) FBR_DEBUGINFO_##id,
    FBR_DEBUGINFO_POLICIES(FBR_DEBUGINFO_ENUM)
#undef FBR_DEBUGINFO_ENUM
        FBR_DEBUGINFO_COUNT
} fbr_debuginfo;

/* The policy's name as the dump and the command line write it ("build-id"); NULL for none. */
const char *fbr_debuginfo_name(fbr_debuginfo policy);
/* What the policy reads, in a sentence (the command's help and errors). */
const char *fbr_debuginfo_what(fbr_debuginfo policy);
/* The policy named name into *out; -1 where no policy has that name. */
int fbr_debuginfo_parse(const char *name, fbr_debuginfo *out);

/* libdwfl's callbacks for a session that reads debug information by policy: dwfl_begin
 * them, then report modules at their load bases (or at 0 for offsets). */
const Dwfl_Callbacks *fbr_debuginfo_callbacks(fbr_debuginfo policy);

/* Reports the module file at path to dwfl under name, at base (its load base; 0 where
 * addresses are looked up by their offsets, as a dump's are), read from fd (-1: opened by
 * path; libdwfl owns it either way), and checks its build id against build_id (hex, as the
 * module map recorded it, perhaps a prefix; NULL or "" for none). The module, or NULL with why
 * written (cap bytes): the file cannot be read, or its build id differs (the file changed
 * since the process loaded it, and would name its frames wrongly). Call between libdwfl's
 * report begin and end. */
Dwfl_Module *fbr_report_module(Dwfl *dwfl, const char *name, const char *path, int fd,
                               GElf_Addr base, const char *build_id, char *why, size_t cap);

/* A module's functions by address, from its symbol table sorted once: libdwfl's own lookup
 * walks the whole table at every call, and a backend's is tens of thousands long
 * (libtorch_cpu: 35,000): a thousand distinct frames made seconds of it. */
typedef struct fbr_functions fbr_functions;

/* The function of mod whose extent holds addr (a Dwfl address): the last one starting at or
 * before it, or one of no size right there; an alias by its global name, as libdwfl prefers
 * it; NULL where none does. *fns (NULL at first, one per module) is built at the first call
 * and freed with fbr_functions_free. */
const char *fbr_function_at(fbr_functions **fns, Dwfl_Module *mod, GElf_Addr addr);
void fbr_functions_free(fbr_functions *fns);

/* Writes n bytes as 2n lowercase hex digits and a NUL at out; returns the NUL's address.
 * Async-signal-safe: the one way a build id is written, in module maps, debug-file paths
 * and comparisons. */
char *fbr_hex_bytes(char *out, const unsigned char *bytes, size_t n);

#endif
