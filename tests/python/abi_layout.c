/* abi_layout.c - the C layout of vkt.h's structs, as JSON, for test_abi.py to hold the vkt
 * package's ctypes declarations to: {"struct": {"size": N, "field": offset, ...}, ...}. */
#include <stddef.h>
#include <stdio.h>

#include "vkt.h"

#define FIELD(s, f) printf(", \"" #f "\": %zu", offsetof(s, f))

int main(void)
{
    printf("{\"vkt_conv_opts\": {\"size\": %zu", sizeof(vkt_conv_opts));
    FIELD(vkt_conv_opts, strides);
    FIELD(vkt_conv_opts, padding_lo);
    FIELD(vkt_conv_opts, padding_hi);
    FIELD(vkt_conv_opts, input_dilation);
    FIELD(vkt_conv_opts, kernel_dilation);
    FIELD(vkt_conv_opts, feature_group_size);
    FIELD(vkt_conv_opts, batch_group_size);
    FIELD(vkt_conv_opts, has_input_permutation);
    FIELD(vkt_conv_opts, has_kernel_permutation);
    FIELD(vkt_conv_opts, has_output_permutation);
    FIELD(vkt_conv_opts, input_permutation);
    FIELD(vkt_conv_opts, kernel_permutation);
    FIELD(vkt_conv_opts, output_permutation);
    printf("},\n \"vkt_window_opts\": {\"size\": %zu", sizeof(vkt_window_opts));
    FIELD(vkt_window_opts, strides);
    FIELD(vkt_window_opts, padding_lo);
    FIELD(vkt_window_opts, padding_hi);
    FIELD(vkt_window_opts, window_dilations);
    printf("},\n \"vkt_stats_entry\": {\"size\": %zu", sizeof(vkt_stats_entry));
    FIELD(vkt_stats_entry, op);
    FIELD(vkt_stats_entry, native);
    FIELD(vkt_stats_entry, fallback);
    FIELD(vkt_stats_entry, host);
    printf("},\n \"vkt_profile_entry\": {\"size\": %zu", sizeof(vkt_profile_entry));
    FIELD(vkt_profile_entry, op);
    FIELD(vkt_profile_entry, kernel);
    FIELD(vkt_profile_entry, gpu_ns);
    printf("}}\n");
    return 0;
}
