/* conv.c — Nx.conv (XLA ConvGeneralDilated) on the host: the oracle the conv
 * shaders are checked against, so it walks canonical indices with plain loops
 * and accumulates in double, favouring an obvious mapping over speed.
 *
 * Layouts: canonical axis i of input/kernel/output is the tensor's axis perm[i]
 * (identity when the has_* flag is clear), as Nx and XLA dimension numbers
 * define it. Groups split contiguous ranges: feature group g owns input features
 * [g*Cg, (g+1)*Cg) and output features [g*O/G, (g+1)*O/G); batch group b owns
 * input batch [b*N/B, (b+1)*N/B) and output features [b*O/B, (b+1)*O/B). */
#include "common.h"

#define CV_MAXSP (VKT_MAX_RANK - 2)

static int64_t opt_or_one(int64_t v)
{
    return v > 0 ? v : 1;
}

/* Canonical sizes and element strides of a row-major tensor seen through perm. */
static void canon(const ref_view *v, bool has, const int *perm, int64_t *size, int64_t *stride)
{
    int64_t st[VKT_MAX_RANK];
    ref_contig_strides(v->rank, v->shape, st);
    for (int i = 0; i < v->rank; i++) {
        int a = has ? perm[i] : i;
        size[i] = v->shape[a];
        stride[i] = st[a];
    }
}

int ref_conv(const ref_view *input, const ref_view *kernel, const vkt_conv_opts *opts,
             ref_view *out)
{
    static const vkt_conv_opts none;
    const vkt_conv_opts *o = opts ? opts : &none;
    int rank = input->rank, nsp = rank - 2;
    int64_t isz[VKT_MAX_RANK], ist[VKT_MAX_RANK], ksz[VKT_MAX_RANK], kst[VKT_MAX_RANK];
    int64_t osz[VKT_MAX_RANK], ost[VKT_MAX_RANK];
    canon(input, o->has_input_permutation, o->input_permutation, isz, ist);
    canon(kernel, o->has_kernel_permutation, o->kernel_permutation, ksz, kst);
    canon(out, o->has_output_permutation, o->output_permutation, osz, ost);

    int64_t G = opt_or_one(o->feature_group_size), B = opt_or_one(o->batch_group_size);
    int64_t nout = osz[0], nfeat = osz[1], cg = ksz[1];
    int64_t per_fg = nfeat / G, per_bg = nfeat / B, batch_per_bg = isz[0] / B;
    int64_t stride[CV_MAXSP], lo[CV_MAXSP], ld[CV_MAXSP], rd[CV_MAXSP];
    int64_t ospatial = 1, kspatial = 1;
    for (int d = 0; d < nsp; d++) {
        stride[d] = opt_or_one(o->strides[d]);
        lo[d] = o->padding_lo[d];
        ld[d] = opt_or_one(o->input_dilation[d]);
        rd[d] = opt_or_one(o->kernel_dilation[d]);
        ospatial *= osz[2 + d];
        kspatial *= ksz[2 + d];
    }

    const void *x = input->data, *k = kernel->data;
    for (int64_t n = 0; n < nout; n++) {
        for (int64_t f = 0; f < nfeat; f++) {
            int64_t fg = f / per_fg, bg = f / per_bg;
            int64_t xbase = (bg * batch_per_bg + n) * ist[0] + fg * cg * ist[1];
            int64_t kbase = f * kst[0];
            for (int64_t os = 0; os < ospatial; os++) {
                int64_t opos[CV_MAXSP], ooff = n * ost[0] + f * ost[1];
                int64_t rest = os;
                for (int d = nsp - 1; d >= 0; d--) {
                    opos[d] = rest % osz[2 + d];
                    rest /= osz[2 + d];
                    ooff += opos[d] * ost[2 + d];
                }
                double acc = 0.0;
                for (int64_t ks = 0; ks < kspatial; ks++) {
                    int64_t krest = ks, xoff = xbase, koff = kbase;
                    bool inside = true;
                    for (int d = nsp - 1; d >= 0 && inside; d--) {
                        int64_t kp = krest % ksz[2 + d];
                        krest /= ksz[2 + d];
                        /* Position in the padded, dilated input; holes and
                         * padding contribute zero. */
                        int64_t p = opos[d] * stride[d] - lo[d] + kp * rd[d];
                        if (p < 0 || p % ld[d] != 0 || p / ld[d] >= isz[2 + d])
                            inside = false;
                        xoff += (p / ld[d]) * ist[2 + d];
                        koff += kp * kst[2 + d];
                    }
                    if (!inside)
                        continue;
                    for (int64_t c = 0; c < cg; c++)
                        acc += ref_load(input->dtype, x, xoff + c * ist[1]) *
                               ref_load(kernel->dtype, k, koff + c * kst[1]);
                }
                ref_store_double(out->dtype, out->data, ooff, acc);
            }
        }
    }
    return VKT_OK;
}
