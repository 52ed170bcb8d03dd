/* families.h — the op families of libvkt; each defines `op_table_<name>`
 * listing its public ops for the support matrix and the statistics. */
#ifndef VKT_FAMILIES_H
#define VKT_FAMILIES_H

#include "core.h"

#define OP_FAMILIES(X) X(elementwise) X(reduce) X(movement) X(dot) X(sort) X(conv) X(window)

#define FAMILY_DECL(name) extern INTERNAL const op_table op_table_##name;
OP_FAMILIES(FAMILY_DECL)
#undef FAMILY_DECL

#endif
