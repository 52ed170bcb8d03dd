/* backend_fields.h - the dump fields that name backends and transfers (interpose/
 * dump-format.md, "Backends"). Their home is rules/fields.h, beside the others the shim
 * writes; until the shim's side lands there, the reader defines them here, and each
 * definition steps aside for the one in rules/fields.h. */
#ifndef FBCOUNT_BACKEND_FIELDS_H
#define FBCOUNT_BACKEND_FIELDS_H

#include "fields.h"

#ifndef FBR_TRANSFERS
#define FBR_TRANSFERS "transfers" /* top level: rows of bytes that crossed between devices */
#endif
#ifndef FBR_TRANSFER_BYTES
#define FBR_TRANSFER_BYTES "transfer_bytes" /* total */
#endif
#ifndef FBR_TRANSFER_NS
#define FBR_TRANSFER_NS "transfer_ns" /* total, when timed */
#endif
#ifndef FBR_KIND_TRANSFER
#define FBR_KIND_TRANSFER "transfer" /* stacks[].kind */
#endif
#ifndef FBR_BYTES_KNOWN
#define FBR_BYTES_KNOWN "bytes_known" /* false: the backend cannot read sizes */
#endif
#ifndef FBR_BACKENDS
#define FBR_BACKENDS "backends" /* top level: the backends seen; config: the rows in force */
#endif
#ifndef FBR_NAME
#define FBR_NAME "name"
#endif
#ifndef FBR_SOURCE
#define FBR_SOURCE "source" /* "builtin", "file" or "declared" */
#endif
#ifndef FBR_COUNTERS
#define FBR_COUNTERS "counters" /* a backend's own counters: native, fallback, host */
#endif
#ifndef FBR_DEFAULT_BACKEND
#define FBR_DEFAULT_BACKEND "vkt" /* what a row without "backend" belongs to */
#endif

#endif
