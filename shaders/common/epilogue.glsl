// epilogue.glsl — f32 elementwise programs that a graph fused into the kernel
// that includes this (backend/fuse.c), each step fused.glsl's (the op's own
// arithmetic), the program and its inputs' indexing in specialization
// constants, so each fused graph gets straight-line code:
//   EPI  an epilogue: where the kernel would store value v as element i of its
//        result, it stores ep_store(i, v), the program run with operand
//        EP_SELF standing for v (bindings EP_BIND.., constant_id EP_SPEC..).
//        Without EPI, ep_store(i, v) is v.
//   PRO  a prologue (reductions): the kernel's input element i is
//        pro_run(i, 0), a program over other buffers (bindings PRO_BIND..,
//        constant_id PRO_SPEC..).
// Input k of a program is read at (i / div) % mod, as ew_fused.comp reads its
// inputs; an in-place update reads what it writes at i only. A program of no
// steps gives v. The including kernel computes in f32 and includes
// common.glsl first; its own bindings and constants stay below these.
#ifndef EPILOGUE_GLSL
#define EPILOGUE_GLSL
#if defined(EPI) || defined(PRO)
#ifndef IS_FLOAT
#define IS_FLOAT
#endif
#define EW_FUSED
#include "elementwise.glsl"
#include "../elementwise/cmath.glsl"
#include "../elementwise/unary_ops.glsl"
#include "../elementwise/binary_ops.glsl"
#include "fused.glsl"

// A program named P: its constants, its input buffers and P_run(i, v).
#define PROGRAM(P, SPEC, BIND)                                                                       \
    layout(constant_id = SPEC) const uint P##_NSTEPS = 0;                                            \
    layout(constant_id = SPEC + 1) const uint P##_S0 = 0;                                            \
    layout(constant_id = SPEC + 2) const uint P##_S1 = 0;                                            \
    layout(constant_id = SPEC + 3) const uint P##_S2 = 0;                                            \
    layout(constant_id = SPEC + 4) const uint P##_S3 = 0;                                            \
    layout(constant_id = SPEC + 5) const uint P##_DIV0 = 1;                                          \
    layout(constant_id = SPEC + 6) const uint P##_MOD0 = 1;                                          \
    layout(constant_id = SPEC + 7) const uint P##_DIV1 = 1;                                          \
    layout(constant_id = SPEC + 8) const uint P##_MOD1 = 1;                                          \
    layout(constant_id = SPEC + 9) const uint P##_DIV2 = 1;                                          \
    layout(constant_id = SPEC + 10) const uint P##_MOD2 = 1;                                         \
    layout(std430, binding = BIND) readonly buffer P##0 { float P##_in0[]; };                        \
    layout(std430, binding = BIND + 1) readonly buffer P##1 { float P##_in1[]; };                    \
    layout(std430, binding = BIND + 2) readonly buffer P##2 { float P##_in2[]; };                    \
    uint P##_step(uint s)                                                                            \
    {                                                                                                \
        return s == 0 ? P##_S0 : s == 1 ? P##_S1 : s == 2 ? P##_S2 : P##_S3;                         \
    }                                                                                                \
    float P##_input(uint k, uint i)                                                                  \
    {                                                                                                \
        if (k == 0)                                                                                  \
            return P##_in0[(i / P##_DIV0) % P##_MOD0];                                               \
        if (k == 1)                                                                                  \
            return P##_in1[(i / P##_DIV1) % P##_MOD1];                                               \
        return P##_in2[(i / P##_DIV2) % P##_MOD2];                                                   \
    }                                                                                                \
    /* no array passes through a call: a driver may keep it in memory */                             \
    float P##_run(uint i, float v)                                                                   \
    {                                                                                                \
        if (P##_NSTEPS == 0)                                                                         \
            return v;                                                                                \
        precise float r[EP_MAX_STEPS];                                                               \
        [[unroll]] for (uint s = 0; s < EP_MAX_STEPS; s++) {                                         \
            if (s >= P##_NSTEPS)                                                                     \
                break;                                                                               \
            uint st = P##_step(s), a = fu_a(st), b = fu_b(st);                                       \
            float x = a >= FU_REG ? r[a - FU_REG] : a == EP_SELF ? v : P##_input(a, i);              \
            float y = fu_kind(st) != FU_BINARY ? 0.0                                                 \
                    : b >= FU_REG ? r[b - FU_REG] : b == EP_SELF ? v : P##_input(b, i);              \
            r[s] = fu_apply(st, x, y);                                                               \
        }                                                                                            \
        return r[P##_NSTEPS - 1];                                                                    \
    }
#endif

#ifdef EPI
PROGRAM(ep, EP_SPEC, EP_BIND)
#define ep_store(i, v) ep_run(i, v)
#else
#define ep_store(i, v) (v)
#endif
#ifdef PRO
PROGRAM(pro, PRO_SPEC, PRO_BIND)
#endif
#endif
