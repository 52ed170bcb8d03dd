/* fbcount.h - the in-process API of libfbcount: count the fallbacks of a scope and assert on
 * them, or ask for a census dump on demand.
 *
 * Link the program with -lfbcount ahead of the backend (or preload libfbcount.so). A scope
 * records the calling thread only; scopes nest, and an event in an inner scope is counted in
 * every enclosing one. Op names are attributed as in the dumps: the innermost frame whose
 * name starts with an FBCOUNT_OP_PREFIX prefix (default "vkt_"), or "(unknown)".
 */
#ifndef FBCOUNT_H
#define FBCOUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The fallbacks (host_result calls) and host-resident ops (host_resident_op calls) one scope
 * saw, with their stacks. Opaque; free with fbcount_census_free. */
typedef struct fbcount_census fbcount_census;

/* Runs fn(arg) with the calling thread recording, and returns what it recorded (NULL only
 * when out of memory). */
fbcount_census *fbcount_count(void (*fn)(void *), void *arg);

/* Opens a scope on the calling thread; fbcount_scope_end closes the innermost one and
 * returns its census (NULL if none is open). For code that cannot be put in a function. */
void fbcount_scope_begin(void);
fbcount_census *fbcount_scope_end(void);

/* A scope over the whole process: every thread's fallbacks until fbcount_scope_end_all
 * (one such scope at a time). Returns 0, or -1 when one is already open or out of memory. */
int fbcount_scope_begin_all(void);
fbcount_census *fbcount_scope_end_all(void);

/* Number of fallbacks in c, the bytes their results carried off the GPU, and the time they
 * took (nanoseconds: from the fallback's start, as the backend reports it, to its result). */
uint64_t fbcount_census_total(const fbcount_census *c);
uint64_t fbcount_census_bytes(const fbcount_census *c);
uint64_t fbcount_census_ns(const fbcount_census *c);

/* Fallbacks (count, bytes) attributed to one op, e.g. "vkt_dot"; 0 when it never fell back.
 * The first query symbolizes the census' stacks. */
uint64_t fbcount_census_op_count(fbcount_census *c, const char *op);
uint64_t fbcount_census_op_bytes(fbcount_census *c, const char *op);

/* The same for host-resident ops: work that ran on the host because its input was there. */
uint64_t fbcount_census_host_total(const fbcount_census *c);
uint64_t fbcount_census_host_op_count(fbcount_census *c, const char *op);

/* A short human report of c (totals, then each op with its count, bytes and sites). The
 * buffer form returns the length the whole text needs, like snprintf; -1 on error. */
int fbcount_census_format(fbcount_census *c, FILE *out);
int fbcount_census_format_buf(fbcount_census *c, char *buf, size_t cap);

/* c as JSON with the dump format's names (interpose/dump-format.md): {"total": {...},
 * "ops": [...], "host_ops": [...]}, each op with its shapes and its sites (file and line where
 * known, "python": true for a line of Python). Returns the length the whole text needs, like
 * snprintf; -1 on error. */
int fbcount_census_json(fbcount_census *c, char *buf, size_t cap);

/* Frees c; NULL is fine. */
void fbcount_census_free(fbcount_census *c);

/* Writes a dump of the whole process census now (reason "api"), to path, or to the next
 * FBCOUNT_OUTPUT file when path is NULL. Returns 0, or -1 (with a warning on stderr), also
 * where the process census does not record (the library linked or loaded, not preloaded,
 * without FBCOUNT=1): it would say 0 of what it never counted. */
int fbcount_dump(const char *path);

/* Names and sizes as the census shows them, for front ends that show them too (the Python
 * package calls these rather than keep copies of the rules, rules/units.h and opname.h).
 * prefixes: op prefixes, comma-separated as FBCOUNT_OP_PREFIX; NULL for its value now. */

/* n bytes for people ("512 B", "4.0 KiB", "12 MiB") into buf (cap bytes); returns buf. */
const char *fbcount_format_bytes(uint64_t n, char *buf, size_t cap);

/* op without the op prefix it starts with ("vkt_dot" -> "dot") into buf (cap bytes); op
 * itself when it starts with none or nothing would be left. Returns buf. */
const char *fbcount_op_short(const char *op, const char *prefixes, char *buf, size_t cap);

/* Whether name, as a person wrote it ("dot" or "vkt_dot"), names op as the census names it:
 * the same text, or one is the other with its op prefix taken off. */
bool fbcount_op_named(const char *name, const char *op, const char *prefixes);

/* Up to max of the n known ops a person writing name may have meant, closest first (short
 * names within an edit distance of a third of the longer, case ignored), as pointers into
 * known. Returns how many. */
size_t fbcount_op_closest(const char *name, const char *const *known, size_t n,
                          const char *prefixes, const char **out, size_t max);

/* Attaches the census to this running process, which was started without the shim (what
 * `fbcount attach PID` calls inside it once it has loaded libfbcount.so). vars holds the
 * configuration as "FBCOUNT_NAME=VALUE" lines, read instead of the process's environment. The
 * census counts from now (its dumps carry attached_at); the exit, termination signals (chained
 * to the program's own handlers) and the census signal are armed, and the loaded modules'
 * calls of the backends' exits are redirected to the shim. Returns FBCOUNT_ATTACH_OK or why
 * not; nothing is changed then. */
enum {
    FBCOUNT_ATTACH_OK = 0,
    FBCOUNT_ATTACH_ALREADY = 1,  /* attached already */
    FBCOUNT_ATTACH_DETACHED = 2, /* attached once and detached: the shim stays inert */
    FBCOUNT_ATTACH_RUNNING = 3,  /* the process records already (preloaded, FBCOUNT=1) */
    FBCOUNT_ATTACH_BAD = 4,      /* vars is NULL or longer than 16 KiB */
    FBCOUNT_ATTACH_SYSTEM = 5    /* the attach's state cannot be kept (memfd_create failed) */
};
int fbcount_attach(const char *vars);

/* Ends an attach: writes the census (reason "detach"), restores every redirected entry and the
 * signal actions the attach installed, and leaves the shim loaded but inert (calls in flight
 * finish normally). Returns the dump's path ("" when none was written), or NULL when the
 * process is not attached. */
const char *fbcount_detach(void);

/* Called when FBCOUNT_ASSERT_NONE sees fallbacks: what (the statement's text), where, and the
 * census. Its result is the assertion's. The default prints the ops and sites to stderr and
 * returns false; fbcount_set_fail_hook(NULL) restores it. */
typedef bool (*fbcount_fail_hook)(const char *what, const char *file, int line, fbcount_census *c);
void fbcount_set_fail_hook(fbcount_fail_hook hook);

/* The check behind FBCOUNT_ASSERT_NONE: true when c holds no fallback, else the hook's answer. */
bool fbcount_expect_none(fbcount_census *c, const char *what, const char *file, int line);

/* Runs stmt under a census and fails when anything in it fell back. With Criterion included
 * first it is a cr_assert that prints the census; otherwise the failure hook decides. */
#if defined(CRITERION_H_) && !defined(FBCOUNT_NO_CRITERION)
#define FBCOUNT_ASSERT_NONE(stmt)                                                                  \
    do {                                                                                           \
        fbcount_scope_begin();                                                                     \
        stmt;                                                                                      \
        fbcount_census *fbcount_c_ = fbcount_scope_end();                                          \
        char fbcount_m_[4096] = "";                                                                \
        if (fbcount_census_total(fbcount_c_))                                                      \
            fbcount_census_format_buf(fbcount_c_, fbcount_m_, sizeof fbcount_m_);                  \
        uint64_t fbcount_n_ = fbcount_census_total(fbcount_c_);                                    \
        fbcount_census_free(fbcount_c_);                                                           \
        cr_assert(fbcount_n_ == 0, "%s fell back:\n%s", #stmt, fbcount_m_);                        \
    } while (0)
#else
/* Here it is an expression too: bool ok = FBCOUNT_ASSERT_NONE(f()); (GNU C, gcc and clang). */
#define FBCOUNT_ASSERT_NONE(stmt)                                                                  \
    __extension__({                                                                                \
        fbcount_scope_begin();                                                                     \
        stmt;                                                                                      \
        fbcount_census *fbcount_c_ = fbcount_scope_end();                                          \
        bool fbcount_ok_ = fbcount_expect_none(fbcount_c_, #stmt, __FILE__, __LINE__);             \
        fbcount_census_free(fbcount_c_);                                                           \
        fbcount_ok_;                                                                               \
    })
#endif

#ifdef __cplusplus
}
#endif

#endif
