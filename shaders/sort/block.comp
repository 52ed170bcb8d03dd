#version 450
#extension GL_GOOGLE_include_directive : require
// sort and argsort, first step: sorts blocks of up to SLOTS elements of each row in shared memory with a
// bitonic network over (key, index) pairs, the index making it stable. A
// workgroup holds SLOTS slots: several short rows (blocks of blk, a power of
// two) or one block of a long row. Rows of one block write the result; longer
// rows write the block's sorted indices for merge.comp.
#include "common.glsl"
#include "order.glsl"

#define SLOTS 2048u

layout(local_size_x = LOCAL) in;
layout(std430, binding = 0) readonly buffer X { TS x[]; };
layout(std430, binding = 0) readonly buffer XR { TE xr[]; };
layout(std430, binding = 1) writeonly buffer I { uint ix[]; };
layout(std430, binding = 2) writeonly buffer OV { TE ov[]; };
layout(std430, binding = 2) writeonly buffer OI { int oi[]; };

layout(push_constant) uniform P { SORT_PUSH_FIELDS } p;

shared TC keys[SLOTS];
shared uint idx[SLOTS];

void main()
{
    const bool desc = p.desc != 0;
    for (uint g = gl_WorkGroupID.x; g < p.ngroups; g += gl_NumWorkGroups.x) {
        for (uint s = gl_LocalInvocationIndex; s < SLOTS; s += LOCAL) {
            uint seg = (g * SLOTS + s) / p.blk, local = (g * SLOTS + s) % p.blk;
            uint row = seg / p.nb, k = (seg % p.nb) * p.blk + local;
            if (row < p.rows && k < p.n) {
                uint base = (row / p.inner) * p.n * p.inner + row % p.inner;
                keys[s] = TC(x[base + k * p.inner]);
                idx[s] = k;
            } else {
                keys[s] = TC(0);
                idx[s] = SENT;
            }
        }
        barrier();
        for (uint k = 2; k <= p.blk; k <<= 1) {
            for (uint j = k >> 1; j > 0; j >>= 1) {
                for (uint q = gl_LocalInvocationIndex; q < SLOTS / 2; q += LOCAL) {
                    uint i = ((q & ~(j - 1)) << 1) | (q & (j - 1)), l = i | j;
                    // Blocks sort in the same direction: the last stage of
                    // each block (k == blk) merges ascending everywhere.
                    bool up = (i & k & (p.blk - 1)) == 0;
                    bool swap = up ? sort_before(keys[l], idx[l], keys[i], idx[i], desc)
                                   : sort_before(keys[i], idx[i], keys[l], idx[l], desc);
                    if (swap) {
                        TC tk = keys[i]; keys[i] = keys[l]; keys[l] = tk;
                        uint ti = idx[i]; idx[i] = idx[l]; idx[l] = ti;
                    }
                }
                barrier();
            }
        }
        for (uint s = gl_LocalInvocationIndex; s < SLOTS; s += LOCAL) {
            uint seg = (g * SLOTS + s) / p.blk, local = (g * SLOTS + s) % p.blk;
            uint row = seg / p.nb, k = (seg % p.nb) * p.blk + local;
            if (row < p.rows && k < p.n) {
                uint base = (row / p.inner) * p.n * p.inner + row % p.inner;
                if (p.final_ != 0) {
                    if (p.arg != 0)
                        oi[base + k * p.inner] = int(idx[s]);
                    else
                        ov[base + k * p.inner] = xr[base + idx[s] * p.inner];
                } else {
                    ix[row * p.n + k] = idx[s];
                }
            }
        }
        barrier();
    }
}
