/* layouts.h — the push-constant layouts and parameter-block offsets that the
 * C recorders (backend/ops/) and the GLSL kernels (shaders/) share: one text,
 * included by both, so the two sides cannot drift apart.
 *
 * A layout is a field list, NAME_FIELDS, of 32-bit scalars and arrays of them
 * (std430 lays those out as C does). C declares `typedef struct name_push {
 * NAME_FIELDS } name_push;`, a kernel `layout(push_constant) uniform P {
 * NAME_FIELDS } p;`. VULKAN is defined by glslang for Vulkan targets only. */
#ifndef VKT_LAYOUTS_H
#define VKT_LAYOUTS_H

#ifdef VULKAN
#define PC_U32 uint
#define PC_I32 int
#else
#include <stdint.h>
#define PC_U32 uint32_t
#define PC_I32 int32_t
#endif

/* Rank limit of the layouts; C asserts it equals VKT_MAX_RANK. */
#define PC_MAXR 6

/* elementwise (common/elementwise.glsl): the output's shape, and per input
 * element strides that are 0 along broadcast axes; contig: every input has
 * the output's shape. as_type and in-op conversions fill the first four only. */
#define EW_PUSH_FIELDS                                                                             \
    PC_U32 n, rank, contig, aux;                                                                   \
    PC_U32 shape[PC_MAXR];                                                                         \
    PC_U32 sa[PC_MAXR];                                                                            \
    PC_U32 sb[PC_MAXR];                                                                            \
    PC_U32 sc[PC_MAXR];

/* elementwise: the kernel a graph fuses f32 elementwise ops into
 * (ew_fused.comp, backend/fuse.c): n outputs, and input k read at
 * (i / div[k]) % mod[k] for output i. */
#define FU_MAX_IN 7
#define FU_MAX_STEPS 7
#define FU_PUSH_FIELDS                                                                             \
    PC_U32 n, nin;                                                                                 \
    PC_U32 div[FU_MAX_IN];                                                                         \
    PC_U32 mod[FU_MAX_IN];
/* A step of a fused program, packed into a specialization constant: its kind,
 * op code (enum ref_unop or ref_binop), and operands (0..6 an input, 8 + s
 * the result of step s). */
#define FU_UNARY 1u
#define FU_BINARY 2u
#define FU_COPY 3u
#define FU_STEP(kind, op, a, b) ((kind) | ((op) << 2) | ((a) << 10) | ((b) << 14))
#define FU_REG 8u

/* A fused program run in another kernel's store (common/epilogue.glsl): its
 * inputs are bindings EP_BIND.. (up to EP_MAX_IN), its steps (up to
 * EP_MAX_STEPS: each is inlined with every op it could be, which a driver
 * compiles before it folds them) and indexing specialization constants
 * EP_SPEC.. (1 + EP_MAX_STEPS + 2 * EP_MAX_IN of them), and operand EP_SELF
 * is the value the kernel computed. A reduction's
 * prologue (the program its input is) has the same form at PRO_BIND and
 * PRO_SPEC. */
#define EP_BIND 5
#define EP_MAX_IN 3
#define EP_MAX_STEPS 4
#define EP_SPEC 16
#define EP_NSPEC (1 + EP_MAX_STEPS + 2 * EP_MAX_IN)
#define EP_SELF 7u
#define PRO_BIND 2
#define PRO_SPEC (EP_SPEC + EP_NSPEC)

/* reduce (reduce/reduce.glsl): kept and reduced groups of the input. */
#define RD_PUSH_FIELDS                                                                             \
    PC_U32 nout, nred, chunk, nparts;                                                              \
    PC_U32 kshape[3];                                                                              \
    PC_U32 kstride[3];                                                                             \
    PC_U32 rshape[3];                                                                              \
    PC_U32 rstride[3];

/* movement: the strided copy (move.comp), dst[obase + c.ost] = src[ibase + c.ist]
 * with round-up reciprocals (magic, packed shifts) dividing by the shape. */
#define MV_PUSH_FIELDS                                                                             \
    PC_U32 n, rank;                                                                                \
    PC_I32 ibase, obase;                                                                           \
    PC_U32 shifts;                                                                                 \
    PC_U32 shape[PC_MAXR];                                                                         \
    PC_U32 magic[PC_MAXR];                                                                         \
    PC_I32 ist[PC_MAXR];                                                                           \
    PC_I32 ost[PC_MAXR];

/* movement: the shared-memory transpose of the last two axes (transpose_tiled.comp). */
#define TILED_PUSH_FIELDS PC_U32 b, rows, cols, tiles_r, tiles_c;

/* movement: pad.comp; step_or_magic holds interior + 1 per axis with interior
 * padding (INTERIOR), else the dividers of the shape. */
#define PAD_PUSH_FIELDS                                                                            \
    PC_U32 n, rank, shifts;                                                                        \
    PC_U32 shape[PC_MAXR];                                                                         \
    PC_I32 lo[PC_MAXR];                                                                            \
    PC_U32 xdim[PC_MAXR];                                                                          \
    PC_U32 step_or_magic[PC_MAXR];

/* movement: gather.comp; dims and strides list the indexed axes [0, k), then
 * the free ones; magic divides by the free dims. empty: an indexed axis has
 * size 0, so the result is zeros. */
#define GATHER_PUSH_FIELDS                                                                         \
    PC_U32 n, k, nf, slab;                                                                         \
    PC_U32 empty, slab_magic, slab_shift, shifts;                                                  \
    PC_U32 dims[PC_MAXR];                                                                          \
    PC_U32 strides[PC_MAXR];                                                                       \
    PC_U32 magic[PC_MAXR];

/* dot: the batched GEMM (gemm.comp, direct.comp). One stride per index of each
 * operand; a_mfast/b_nfast say which index is contiguous (the coalesced load
 * order); a_off/b_off start a dispatch at its slice of K and accumulate adds
 * to what the earlier slices wrote; a_vec/b_vec: the operand may be read as
 * aligned 4-vectors along its contiguous index (VEC kernels). */
#define DOT_PUSH_FIELDS                                                                            \
    PC_U32 M, N, K, Q;                                                                             \
    PC_U32 a_sq, a_sm, a_sk;                                                                       \
    PC_U32 b_sq, b_sk, b_sn;                                                                       \
    PC_U32 a_mfast, b_nfast;                                                                       \
    PC_U32 tiles_m, tiles_n;                                                                       \
    PC_U32 a_off, b_off, accumulate;                                                               \
    PC_U32 a_vec, b_vec;

/* dot: pack.comp, a strided copy into (batch, contracting, free) order. */
#define DOT_PACK_PUSH_FIELDS                                                                       \
    PC_U32 n, rank;                                                                                \
    PC_U32 shape[PC_MAXR];                                                                         \
    PC_U32 stride[PC_MAXR];

/* sort: block.comp and merge.comp. */
#define SORT_PUSH_FIELDS PC_U32 rows, n, inner, blk, nb, ngroups, desc, arg, final_, w;

/* window (window/window.glsl): the slice [k0, k1) of window positions one
 * dispatch walks; first: start from the identity or init value. */
#define WN_PUSH_FIELDS PC_U32 n, k0, k1, first;

/* window: pool.comp, windows that tile the last two axes of [planes, h, w]
 * (kh x kw, an oh x ow grid); n counts outputs, or inputs for a scatter. */
#define POOL_PUSH_FIELDS PC_U32 n, h, w, kh, kw, oh, ow;

/* The window family's parameter block (a storage buffer of ints: six axes of
 * WP ints each, padded at the front with size-1 windows). */
#define W_IN 0  /* input size */
#define W_OUT 1 /* windows along the axis (the reduction's output, the scatter's source) */
#define W_WIN 2 /* window size */
#define W_STR 3 /* stride */
#define W_LO 4  /* low padding (negative trims) */
#define W_DIL 5 /* window dilation */
#define W_IST 6 /* element stride of the input */
#define W_SST 7 /* element stride of the windows' tensor (output or source) */
#define W_NB 8  /* scatter: most windows that can cover one element */
#define WP 10

/* conv: conv2d_tile.comp, 2-d f32 convs without dilations or groups, in
 * canonical order: batch n, output features o, input features c, input and
 * output sizes, kernel size, strides, low padding, the three operands'
 * element strides. A workgroup takes a th x tw tile of output positions of
 * one batch element, for g * OB output features (g groups of threads, OB
 * features each), over one part of the reduction (cper input features by
 * uper kernel rows, parts_u parts along the rows), staging cb input
 * features' tiles and kernel slices at a time. */
#define C2T_PUSH_FIELDS                                                                            \
    PC_U32 n, o, c;                                                                                \
    PC_U32 oh, ow, ih, iw;                                                                         \
    PC_U32 kh, kw;                                                                                 \
    PC_I32 sh, sw, ph, pw;                                                                         \
    PC_U32 th, tw, g;                                                                              \
    PC_U32 cb, cper, uper, parts_u;                                                                \
    PC_I32 xs[4];                                                                                  \
    PC_I32 ks[4];                                                                                  \
    PC_I32 ys[4];
/* conv2d_tile's shared arrays, in floats: input tiles, kernel slices. */
#define C2T_XS 4096
#define C2T_KS 4096

/* conv2d_sum.comp and conv2d_kgrad_sum.comp: cnt canonical outputs (n, o,
 * oh, ow), parts partial sums of each, and the result's strides. */
#define C2S_PUSH_FIELDS                                                                            \
    PC_U32 cnt, parts, o, oh, ow;                                                                  \
    PC_I32 ys[4];

/* conv: conv2d_kgrad.comp, 2-d f32 convs with strides 1, no dilations or
 * groups, few outputs and a long reduction (kernel gradients), in canonical
 * order as C2T's. The reduction (input features c by kernel rows kh) is cut
 * into units of cb features by rb kernel rows; a workgroup takes upc
 * consecutive units and writes one partial sum of every output. Its lanes
 * (groups of invocations covering all outputs) share out each unit's kernel
 * rows in segments of js columns. */
#define KG_PUSH_FIELDS                                                                             \
    PC_U32 n, o, c;                                                                                \
    PC_U32 oh, ow, ih, iw;                                                                         \
    PC_U32 kh, kw;                                                                                 \
    PC_I32 ph, pw;                                                                                 \
    PC_U32 cb, rb, upc, js, lanes;                                                                 \
    PC_I32 xs[4];                                                                                  \
    PC_I32 ks[4];                                                                                  \
    PC_I32 ys[4];
/* conv2d_kgrad's shared array in floats (a unit's input and kernel bands,
 * then the lanes' sums: LOCAL x KG_MAX_ACC), the most accumulators of one
 * invocation (output features by columns), and the most columns. */
#define KG_SM 8192
#define KG_MAX_ACC 32
#define KG_MAX_QB 8
/* Values an invocation of conv2d_kgrad loads per staging round. */
#define KG_STAGE 8
/* conv2d_kgrad_sum.comp: outputs per workgroup; LOCAL / KG_SUM_W lanes
 * share out each one's parts. */
#define KG_SUM_W 8

/* The conv family's parameter block (a storage buffer of ints). */
#define CV_N 0        /* canonical output elements */
#define CV_O 1        /* output features */
#define CV_CG 2       /* input features per feature group (kernel axis 1) */
#define CV_PER_FG 3   /* output features per feature group */
#define CV_PER_BG 4   /* output features per batch group */
#define CV_BATCH_BG 5 /* input batch per batch group (= output batch) */
#define CV_XS_N 6     /* element strides of the canonical batch/feature axes */
#define CV_XS_C 7
#define CV_KS_O 8
#define CV_KS_I 9
#define CV_YS_N 10
#define CV_YS_C 11
#define CV_KSP 12 /* kernel spatial elements */
#define CV_R 13   /* reduction length: CG * KSP */
#define CV_SP 16  /* then CV_SPW ints per spatial dim, four dims: */
#define CV_OSZ 0
#define CV_ISZ 1
#define CV_KSZ 2
#define CV_STR 3
#define CV_LO 4
#define CV_LD 5
#define CV_RD 6
#define CV_XST 7
#define CV_KST 8
#define CV_YST 9
#define CV_KSTEP 10 /* ld / gcd(rd, ld): kernel steps between taps that hit input elements */
#define CV_SPW 11
#define CV_NPARAM (CV_SP + 4 * CV_SPW)

#endif
