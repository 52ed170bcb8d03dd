/* names.h - names as people read them: C++ symbols demangled, paths shortened. */
#ifndef FBCOUNT_NAMES_H
#define FBCOUNT_NAMES_H

#include <stddef.h>

/* The demangled form of an Itanium C++ name (libstdc++'s __cxa_demangle, clone suffixes
 * such as ".isra.0" included) as a new string to free(), or NULL when sym is not one. */
char *fbn_demangle(const char *sym);

/* Writes sym demangled (or as it is) into buf; returns buf. */
const char *fbn_display(const char *sym, char *buf, size_t len);

#endif
