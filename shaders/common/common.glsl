#ifndef COMMON_GLSL
#define COMMON_GLSL
// Shared by every libvkt shader: extensions, the op codes, grid-stride
// iteration (dispatches are capped at 65,535 groups; the loop covers the rest)
// and the storage/compute type of each dtype, chosen by -D defines per variant:
//   TA/TB/TD   storage types of inputs, TO storage type of the output,
//   TC         the compute type (float, double, int, uint for u8).
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_control_flow_attributes : enable
#include "opcodes.glsl"
#include "layouts.h"

#define LOCAL 256
#define GRID_LOOP(i, n) \
    for (uint i = gl_GlobalInvocationID.x; i < (n); i += gl_NumWorkGroups.x * LOCAL)

// Maps a linear output index to element offsets of up to three broadcast
// inputs, through per-input strides that are 0 along broadcast axes.
#define MAXR PC_MAXR
struct Strided {
    EW_PUSH_FIELDS
};
#endif
