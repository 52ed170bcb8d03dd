// The reduce family's driver. The host coalesces the input into at most three
// kept and three reduced axis groups (each with an element stride), so every
// output element o reduces the elements base(o) + roff(k), k < nred, with no
// host round trip whatever the axis set. The reduced range may be split into
// nparts chunks: each (output, part) then writes one partial, and a later
// dispatch reduces the partials [nout, nparts] as contiguous rows.
//
// The including shader defines the accumulator type ACC and
//   ACC acc_ident()                 the identity (an empty chunk's value)
//   ACC acc_load(uint off, uint k)  element at offset off, reduced index k
//   ACC acc_from(TA x, uint k)      the same from a loaded value (vec4 path)
//   TA4 acc_load4(uint i)           the 4-vector of elements 4i..4i+3
//   ACC acc_comb(ACC a, ACC b)      associative and commutative combine
//   void acc_store(uint i, ACC v)   writes output (or partial) i
// after including common.glsl, defining ACC and declaring the buffers a (TA)
// and its vec4 alias a4 (TA4), and before defining those functions.

// enum ref_redop (backend/ref.h).
#define RED_SUM 0u
#define RED_PRODUCT 1u
#define RED_MAX 2u
#define RED_MIN 3u
#define RED_ALL 4u
#define RED_ANY 5u

layout(local_size_x = LOCAL) in;
// 0: the op (enum ref_redop, or ARG_MAX/ARG_MIN for argreduce).
layout(constant_id = 0) const uint OP = 0;
// 1: 0 = one thread per (output, part), 1 = a team of TEAM threads per
// (output, part).
layout(constant_id = 1) const uint MODE = 0;
// 2, 3: how many kept (0..3) and reduced (1..3) axis groups there are.
layout(constant_id = 2) const uint NKEEP = 0;
layout(constant_id = 3) const uint NRED = 1;
// 4: the reduced set is one contiguous run starting 4-aligned: vec4 loads.
layout(constant_id = 4) const uint VEC4 = 0;
// 5: argreduce only: bit 0 inputs are (value, index) partials, bit 1 write
// values next to the indices (a partial pass).
layout(constant_id = 5) const uint PAIRS = 0;
// 6: threads per team in MODE 1, a power of two dividing LOCAL.
layout(constant_id = 6) const uint TEAM = LOCAL;

layout(push_constant) uniform PC { RD_PUSH_FIELDS } pc;

ACC acc_ident();
ACC acc_load(uint off, uint k);
ACC acc_from(TA x, uint k);
TA4 acc_load4(uint i);
ACC acc_comb(ACC a, ACC b);
void acc_store(uint i, ACC v);

uint kept_offset(uint o)
{
    uint off = 0;
    [[unroll]] for (int d = 2; d >= 0; d--) {
        if (d >= int(NKEEP))
            continue;
        off += (o % pc.kshape[d]) * pc.kstride[d];
        o /= pc.kshape[d];
    }
    return off;
}

uint red_offset(uint k)
{
    if (NRED == 1)
        return k * pc.rstride[0];
    uint off = 0;
    [[unroll]] for (int d = 2; d >= 0; d--) {
        if (d >= int(NRED))
            continue;
        off += (k % pc.rshape[d]) * pc.rstride[d];
        k /= pc.rshape[d];
    }
    return off;
}

// Sequential walks step through the reduced groups with carries instead of a
// division per element.
struct RedIter {
    uint off;
    uint i[3];
};

RedIter red_begin(uint k)
{
    RedIter it;
    it.off = 0;
    [[unroll]] for (int d = 2; d >= 0; d--) {
        it.i[d] = 0;
        if (d >= int(NRED))
            continue;
        it.i[d] = k % pc.rshape[d];
        it.off += it.i[d] * pc.rstride[d];
        k /= pc.rshape[d];
    }
    return it;
}

void red_next(inout RedIter it)
{
    int d = int(NRED) - 1;
    it.off += pc.rstride[d];
    if (NRED == 1)
        return;
    while (d > 0 && ++it.i[d] == pc.rshape[d]) {
        it.off -= pc.rstride[d] * pc.rshape[d];
        it.i[d] = 0;
        d--;
        it.off += pc.rstride[d];
    }
}

shared ACC sh[LOCAL];

void main()
{
    uint total = pc.nout * pc.nparts;
    if (MODE == 0) {
        GRID_LOOP(t, total) {
            uint o = t % pc.nout, p = t / pc.nout;
            uint base = kept_offset(o);
            uint kb = p * pc.chunk, ke = min(pc.nred, kb + pc.chunk);
            ACC acc = acc_ident();
            if (kb < ke) {
                RedIter it = red_begin(kb);
                for (uint k = kb; k < ke; k++) {
                    acc = acc_comb(acc, acc_load(base + it.off, k));
                    red_next(it);
                }
            }
            acc_store(o * pc.nparts + p, acc);
        }
        return;
    }
    // Teams of TEAM threads, one per (output, part): short rows keep every
    // thread busy and pay log2(TEAM) barriers per LOCAL / TEAM outputs. Every
    // thread walks the same block list, so barriers stay in uniform control flow.
    const uint TEAMS = LOCAL / TEAM;
    uint t = gl_LocalInvocationID.x, lane = t % TEAM;
    for (uint g0 = gl_WorkGroupID.x * TEAMS; g0 < total; g0 += gl_NumWorkGroups.x * TEAMS) {
        uint g = g0 + t / TEAM;
        bool live = g < total;
        uint o = live ? g % pc.nout : 0, p = live ? g / pc.nout : 0;
        uint base = kept_offset(o);
        uint kb = p * pc.chunk, ke = live ? min(pc.nred, kb + pc.chunk) : 0;
        ACC acc = acc_ident();
        if (VEC4 != 0) {
            // base and kb are multiples of 4 (the host checks); the tail of a
            // row whose length is not is read element by element.
            uint n4 = kb < ke ? (ke - kb) / 4 : 0;
            uint b4 = (base + kb) / 4;
            for (uint j = lane; j < n4; j += TEAM) {
                TA4 v = acc_load4(b4 + j);
                uint k = kb + 4 * j;
                acc = acc_comb(acc, acc_comb(acc_comb(acc_from(v.x, k), acc_from(v.y, k + 1)),
                                             acc_comb(acc_from(v.z, k + 2), acc_from(v.w, k + 3))));
            }
            for (uint k = kb + 4 * n4 + lane; k < ke; k += TEAM)
                acc = acc_comb(acc, acc_load(base + k, k));
        } else {
            for (uint k = kb + lane; k < ke; k += TEAM)
                acc = acc_comb(acc, acc_load(base + red_offset(k), k));
        }
        sh[t] = acc;
        barrier();
        for (uint s = TEAM / 2; s > 0; s >>= 1) {
            if (lane < s)
                sh[t] = acc_comb(sh[t], sh[t + s]);
            barrier();
        }
        if (lane == 0 && live)
            acc_store(o * pc.nparts + p, sh[t]);
        barrier();
    }
}
