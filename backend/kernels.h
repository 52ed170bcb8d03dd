/* kernels.h — the kernel names that VKT_DOT_KERNEL and VKT_CONV_KERNEL accept,
 * as X-lists: the ops build their kernel tables from them, and the context
 * checks the variables against them when it is made (context.c), so a name
 * that is none warns there, once, instead of inside an op. "auto" is the
 * automatic choice in both. */
#ifndef VKT_KERNELS_H
#define VKT_KERNELS_H

#define DOT_KERNELS(X) X(auto) X(direct) X(tiny) X(small) X(big) X(big_vec) X(tall_vec)
#define CONV_KERNELS(X) X(auto) X(tile) X(kgrad) X(direct) X(split)

#define KERNEL_ENUM_DK(name) DK_##name,
#define KERNEL_ENUM_CK(name) CK_##name,
enum { DOT_KERNELS(KERNEL_ENUM_DK) DK__COUNT };
enum { CONV_KERNELS(KERNEL_ENUM_CK) CK__COUNT };
#undef KERNEL_ENUM_DK
#undef KERNEL_ENUM_CK

#endif
