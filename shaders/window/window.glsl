// window.glsl — the window family's parameter block, shared by its kernels.
// Geometry travels in a small storage buffer, not push constants: seven or more
// numbers per axis for six axes exceed the 128-byte push limit. Axes are padded
// to six at the front (size 1, window 1), so one loop nest serves every rank.
// Loops over window positions run in slices [k0, k1) set by the host: lavapipe
// ends an invocation's loops after 65,535 iterations in all, so long windows
// take several dispatches, each continuing from what the last one stored.
#include "common.glsl"

// The parameter block's offsets (W_*, WP) are in layouts.h.

layout(std430, binding = WIN_PARAMS) readonly buffer Params { int prm[]; };

layout(push_constant) uniform Push { WN_PUSH_FIELDS } pc;

layout(local_size_x = LOCAL) in;

// Axes in use after the host merged neighbouring pass-through axes (window 1,
// stride 1, no padding): the loops below skip the leading padded ones at
// compile time, which matters on CPU devices where integer division is slow.
layout(constant_id = 1) const int NR = MAXR;
#define AXES(d) [[unroll]] for (int d = MAXR - 1; d >= MAXR - NR; d--)
#define AXES_UP(d) [[unroll]] for (int d = MAXR - NR; d < MAXR; d++)

// The geometry, read once per invocation rather than per work item.
int g_in[MAXR], g_out[MAXR], g_win[MAXR], g_str[MAXR], g_lo[MAXR], g_dil[MAXR], g_ist[MAXR], g_sst[MAXR],
    g_nb[MAXR];
void load_geometry()
{
    AXES(d) {
        g_in[d] = prm[d * WP + W_IN];
        g_out[d] = prm[d * WP + W_OUT];
        g_win[d] = prm[d * WP + W_WIN];
        g_str[d] = prm[d * WP + W_STR];
        g_lo[d] = prm[d * WP + W_LO];
        g_dil[d] = prm[d * WP + W_DIL];
        g_ist[d] = prm[d * WP + W_IST];
        g_sst[d] = prm[d * WP + W_SST];
        g_nb[d] = prm[d * WP + W_NB];
    }
}
