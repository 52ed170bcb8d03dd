// sgemm_probe.cu — dot's large f32 kernel (shaders/dot/gemm.comp, the
// tall_vec variant: 256 x 128 tiles, BK 8, 16 x 8 outputs a thread, 4-vector
// loads, double-buffered shared tiles with one 4-vector of padding a row)
// written again in CUDA, line for line, so that Nsight Compute, which reads
// the counters of CUDA kernels only, can say what limits the algorithm
// (occupancy, shared-memory wavefronts and bank conflicts, stall reasons,
// instruction mix); the Vulkan kernel's own time is vkt-bench's. Row-major
// A [M, K] and B [K, N] as vkt-bench's dot rows, M, N, K multiples of the
// tiles. Prints TFLOP/s (median of --reps after a timed warm-up) and the
// largest error of 256 sampled outputs against a double-precision sum.
// -DPREF loads the shared-memory fragments of step k + 1 while step k
// multiplies (gemm.comp's PREF variants); -DBK=16 -DPAD=0 takes twice the K
// per barrier.
// Build and run on the GPU machine:
//   nvcc -O3 -arch=sm_90 -o sgemm_probe tools/bench/vkt/sgemm_probe.cu
//   ./sgemm_probe 4096 [reps]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#ifndef BK
#define BK 8
#endif
#define BM 256
#define BN 128
#define RM 4
#define RN 2
#ifndef PAD
#define PAD 1
#endif
#define TX (BN / (4 * RN))
#define TY (BM / (4 * RM))
#define NT (TX * TY)
#define LA4 (BM * BK / 4 / NT)
#define LB4 (BN * BK / 4 / NT)

__global__ void __launch_bounds__(NT) gemm_tall(const float *__restrict__ a, const float *__restrict__ b,
                                                float *__restrict__ o, int M, int N, int K)
{
    __shared__ float4 As[2][BK][BM / 4 + PAD];
    __shared__ float4 Bs[2][BK][BN / 4 + PAD];
    const int tid = threadIdx.x, tx = tid % TX, ty = tid / TX;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int ntk = K / BK;
    float4 acc[RM * 4][RN];
    for (int i = 0; i < RM * 4; i++)
        for (int j = 0; j < RN; j++)
            acc[i][j] = make_float4(0, 0, 0, 0);
    float4 va[LA4], vb[LB4];
    int buf = 0;
    for (int t = 0; t <= ntk; t++) {
        if (t < ntk) {
            const int k0 = t * BK;
#pragma unroll
            for (int i = 0; i < LA4; i++) { // A is k-contiguous: 4-vectors along k
                int u = tid + i * NT, mm = u / (BK / 4), kk = (u % (BK / 4)) * 4;
                va[i] = *reinterpret_cast<const float4 *>(a + (size_t)(m0 + mm) * K + k0 + kk);
            }
#pragma unroll
            for (int i = 0; i < LB4; i++) { // B is n-contiguous
                int u = tid + i * NT, nn = (u % (BN / 4)) * 4, kk = u / (BN / 4);
                vb[i] = *reinterpret_cast<const float4 *>(b + (size_t)(k0 + kk) * N + n0 + nn);
            }
        }
        if (t > 0) {
#ifdef PREF
            // fragments of step kk + 1 load while step kk multiplies
            float4 af[2][RM], bf[2][RN];
#pragma unroll
            for (int c = 0; c < RM; c++)
                af[0][c] = As[buf][0][c * TY + ty];
#pragma unroll
            for (int d = 0; d < RN; d++)
                bf[0][d] = Bs[buf][0][d * TX + tx];
#endif
#pragma unroll
            for (int kk = 0; kk < BK; kk++) {
#ifdef PREF
                if (kk + 1 < BK) {
#pragma unroll
                    for (int c = 0; c < RM; c++)
                        af[(kk + 1) & 1][c] = As[buf][kk + 1][c * TY + ty];
#pragma unroll
                    for (int d = 0; d < RN; d++)
                        bf[(kk + 1) & 1][d] = Bs[buf][kk + 1][d * TX + tx];
                }
                const float4 *av = af[kk & 1], *bv = bf[kk & 1];
#else
                float4 av[RM], bv[RN];
#pragma unroll
                for (int c = 0; c < RM; c++)
                    av[c] = As[buf][kk][c * TY + ty];
#pragma unroll
                for (int d = 0; d < RN; d++)
                    bv[d] = Bs[buf][kk][d * TX + tx];
#endif
#pragma unroll
                for (int c = 0; c < RM; c++) {
                    const float ar[4] = {av[c].x, av[c].y, av[c].z, av[c].w};
#pragma unroll
                    for (int i = 0; i < 4; i++)
#pragma unroll
                        for (int d = 0; d < RN; d++) {
                            acc[c * 4 + i][d].x += ar[i] * bv[d].x;
                            acc[c * 4 + i][d].y += ar[i] * bv[d].y;
                            acc[c * 4 + i][d].z += ar[i] * bv[d].z;
                            acc[c * 4 + i][d].w += ar[i] * bv[d].w;
                        }
                }
            }
            buf ^= 1;
        }
        if (t < ntk) {
#pragma unroll
            for (int i = 0; i < LA4; i++) { // the transposed store of gemm.comp's stage4
                int u = tid + i * NT, kk = (u % (BK / 4)) * 4, mm = u / (BK / 4);
                float *row = reinterpret_cast<float *>(&As[buf][0][0]);
                const float e[4] = {va[i].x, va[i].y, va[i].z, va[i].w};
#pragma unroll
                for (int j = 0; j < 4; j++)
                    row[((kk + j) * (BM / 4 + PAD) + (mm >> 2)) * 4 + (mm & 3)] = e[j];
            }
#pragma unroll
            for (int i = 0; i < LB4; i++) {
                int u = tid + i * NT;
                Bs[buf][u / (BN / 4)][u % (BN / 4)] = vb[i];
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int c = 0; c < RM; c++)
#pragma unroll
        for (int i = 0; i < 4; i++) {
            int m = m0 + c * (BM / RM) + ty * 4 + i;
#pragma unroll
            for (int d = 0; d < RN; d++) {
                int n = n0 + d * (BN / RN) + tx * 4;
                *reinterpret_cast<float4 *>(o + (size_t)m * N + n) = acc[c * 4 + i][d];
            }
        }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4096, reps = argc > 2 ? atoi(argv[2]) : 20;
    if (n % BM || n % BK) {
        fprintf(stderr, "sgemm_probe: the size must be a multiple of %d\n", BM);
        return 2;
    }
    size_t e = (size_t)n * n;
    std::vector<float> ha(e), hb(e), hc(e);
    unsigned s = 12345;
    for (size_t i = 0; i < e; i++) {
        s = s * 1664525u + 1013904223u;
        ha[i] = (float)((s >> 8) * (1.0 / 16777216.0) * 2 - 1);
        s = s * 1664525u + 1013904223u;
        hb[i] = (float)((s >> 8) * (1.0 / 16777216.0) * 2 - 1);
    }
    float *da, *db, *dc;
    cudaMalloc(&da, e * 4);
    cudaMalloc(&db, e * 4);
    cudaMalloc(&dc, e * 4);
    cudaMemcpy(da, ha.data(), e * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(db, hb.data(), e * 4, cudaMemcpyHostToDevice);
    dim3 grid(n / BN, n / BM);
    cudaEvent_t t0, t1;
    cudaEventCreate(&t0);
    cudaEventCreate(&t1);
    // warm the clocks for a second, then time each run
    float ms = 0;
    for (int w = 0; ms < 1000 && reps > 1; w++) {
        cudaEventRecord(t0);
        for (int i = 0; i < 10; i++)
            gemm_tall<<<grid, NT>>>(da, db, dc, n, n, n);
        cudaEventRecord(t1);
        cudaEventSynchronize(t1);
        float m;
        cudaEventElapsedTime(&m, t0, t1);
        ms += m;
    }
    std::vector<float> times;
    for (int r = 0; r < reps; r++) {
        cudaEventRecord(t0);
        gemm_tall<<<grid, NT>>>(da, db, dc, n, n, n);
        cudaEventRecord(t1);
        cudaEventSynchronize(t1);
        float m;
        cudaEventElapsedTime(&m, t0, t1);
        times.push_back(m);
    }
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) {
        fprintf(stderr, "sgemm_probe: %s\n", cudaGetErrorString(err));
        return 1;
    }
    std::sort(times.begin(), times.end());
    double med = times[times.size() / 2];
    cudaMemcpy(hc.data(), dc, e * 4, cudaMemcpyDeviceToHost);
    double worst = 0;
    for (int q = 0; q < 256; q++) {
        int i = (q * 7919) % n, j = (q * 104729) % n;
        double ref = 0;
        for (int k = 0; k < n; k++)
            ref += (double)ha[(size_t)i * n + k] * hb[(size_t)k * n + j];
        worst = std::max(worst, std::fabs(ref - hc[(size_t)i * n + j]) / std::sqrt((double)n));
    }
#ifdef PREF
    const char *pref = " PREF";
#else
    const char *pref = "";
#endif
    printf("sgemm_probe%s %d^3 BK %d: %.3f ms, %.1f TFLOP/s, worst |error| / sqrt(K) %.2e\n", pref, n, BK, med,
           2.0 * n * n * (double)n / (med * 1e-3) / 1e12, worst);
    return 0;
}
