#version 450
#extension GL_GOOGLE_include_directive : require
// Batched swap of the last two axes, [b, rows, cols] -> [b, cols, rows],
// through a 32x32 tile in shared memory so that both the reads and the writes
// of a workgroup touch contiguous runs. The padding column keeps the
// column-wise reads of the tile off one bank. Workgroups loop over tiles, so
// any number of tiles fits the 65,535-group limit.
#include "common.glsl"

#define TILE 32
layout(local_size_x = TILE, local_size_y = LOCAL / TILE) in;
layout(push_constant) uniform PC { TILED_PUSH_FIELDS } pc;
layout(std430, binding = 0) readonly buffer A { TE a[]; };
layout(std430, binding = 1) writeonly buffer O { TE o[]; };

shared TE tile[TILE][TILE + 1];

void main()
{
    uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
    uint per = pc.tiles_r * pc.tiles_c, total = per * pc.b;
    for (uint t = gl_WorkGroupID.x; t < total; t += gl_NumWorkGroups.x) {
        uint bi = t / per, rem = t % per;
        uint r0 = (rem / pc.tiles_c) * TILE, c0 = (rem % pc.tiles_c) * TILE;
        uint base = bi * pc.rows * pc.cols;
        for (uint k = ty; k < TILE; k += LOCAL / TILE) {
            uint r = r0 + k, c = c0 + tx;
            if (r < pc.rows && c < pc.cols)
                tile[k][tx] = a[base + r * pc.cols + c];
        }
        barrier();
        for (uint k = ty; k < TILE; k += LOCAL / TILE) {
            uint c = c0 + k, r = r0 + tx;
            if (c < pc.cols && r < pc.rows)
                o[base + c * pc.rows + r] = tile[tx][k];
        }
        barrier();
    }
}
