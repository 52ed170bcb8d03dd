/* shim.h - finding libfbcount.so for fbcount run. */
#ifndef FBCOUNT_SHIM_H
#define FBCOUNT_SHIM_H

#include <stddef.h>

/* meson passes <prefix>/<libdir>/libfbcount.so; this default serves other builds. */
#ifndef FBCOUNT_SHIM_INSTALLED
#define FBCOUNT_SHIM_INSTALLED "/usr/local/lib/libfbcount.so"
#endif

/* Writes the shim's absolute path into buf: $FBCOUNT_SHIM if set, else the build tree
 * next to this binary (<dir>/../../interpose/libfbcount.so), else the installed path.
 * Returns 0, or -1 with the places tried written into buf. */
int fbs_find(char *buf, size_t len);

#endif
