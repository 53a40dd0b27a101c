// consttab: __constant__ tables (initialised in the source and rewritten between launches) and
// __device__ variables that keep their values across launches.
//
// Symbols:
//   c_coef[8]    __constant__ float, initialised in the source; entries 4..7 are overwritten with
//                cudaMemcpyToSymbol(offset = 16 bytes) before round 2
//   c_perm[256]  __constant__ int, written whole with cudaMemcpyToSymbol before round 0 and
//                half of it (offset 512 bytes) before each later round
//   d_launches   __device__ unsigned = 100 (initialised in the source), +1 by one thread per launch
//   d_total      __device__ unsigned long long, atomicAdd of every input's low byte
//   d_hist[16]   __device__ unsigned, atomicAdd histogram of the inputs' low 4 bits
// Kernel:
//   apply - out[i] = c_coef[in & 7] * c_perm[(in >> 3) & 255] + c_coef[round & 7] (a per-thread
//           constant index: LDC with a register; a uniform one), and the atomics    (ROUNDS launches)
// After the last round: cudaMemcpyFromSymbol of c_coef, c_perm, d_launches, d_total, d_hist.
// Check: outputs of every round (exact: small integers times small floats) and all symbols.
// Arguments: consttab [N=4096 [ROUNDS=3 [SEED=15]]]
// Exercises: constant bank 3 (user __constant__ data) with run-time indices, .nv.global.init data,
// symbol copies with offsets, global atomics on 32- and 64-bit values.
#include "check.h"

#include <vector>

__constant__ float c_coef[8] = {1.0f, -2.0f, 0.5f, 3.0f, -0.25f, 8.0f, 1.5f, -4.0f};
__constant__ int c_perm[256];
__device__ unsigned d_launches = 100;
__device__ unsigned long long d_total;
__device__ unsigned d_hist[16];

__global__ void apply(const unsigned* __restrict__ in, float* __restrict__ out, int n, int round)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0)
        d_launches += 1;
    if (i >= n)
        return;
    unsigned v = in[i];
    out[i] = c_coef[v & 7] * (float)c_perm[(v >> 3) & 255] + c_coef[round & 7];
    atomicAdd(&d_total, (unsigned long long)(v & 0xff));
    atomicAdd(&d_hist[v & 15], 1u);
}

int main(int argc, char** argv)
{
    const int n = (int)arg_int(argc, argv, 1, 4096, 1, 1 << 24, "N");
    const int rounds = (int)arg_int(argc, argv, 2, 3, 1, 1000, "ROUNDS");
    const uint64_t seed = (uint64_t)arg_int(argc, argv, 3, 15, 0, 1L << 40, "SEED");

    Rng rng(seed);
    std::vector<unsigned> in(n);
    for (auto& v : in)
        v = rng.u32();
    float coef[8] = {1.0f, -2.0f, 0.5f, 3.0f, -0.25f, 8.0f, 1.5f, -4.0f}; // host copy of c_coef
    int perm[256];
    for (int k = 0; k < 256; ++k)
        perm[k] = (int)rng.below(2001) - 1000;

    unsigned* d_in;
    float* d_out;
    CK(cudaMalloc(&d_in, sizeof(unsigned) * n));
    CK(cudaMalloc(&d_out, sizeof(float) * n));
    CK(cudaMemcpy(d_in, in.data(), sizeof(unsigned) * n, cudaMemcpyHostToDevice));
    CK(cudaMemcpyToSymbol(c_perm, perm, sizeof(perm)));

    long bad = 0;
    std::vector<float> out(n);
    unsigned long long total = 0;
    unsigned hist[16] = {0};
    for (int r = 0; r < rounds; ++r) {
        if (r > 0) { // new second half of the permutation table
            for (int k = 128; k < 256; ++k)
                perm[k] = (int)rng.below(2001) - 1000;
            CK(cudaMemcpyToSymbol(c_perm, perm + 128, sizeof(int) * 128, sizeof(int) * 128));
        }
        if (r == 2) { // overwrite the source-initialised coefficients 4..7
            const float upd[4] = {0.75f, -6.0f, 2.0f, 16.0f};
            std::memcpy(coef + 4, upd, sizeof(upd));
            CK(cudaMemcpyToSymbol(c_coef, upd, sizeof(upd), sizeof(float) * 4, cudaMemcpyHostToDevice));
        }
        apply<<<(n + 255) / 256, 256>>>(d_in, d_out, n, r);
        CK_LAUNCH();
        CK(cudaMemcpy(out.data(), d_out, sizeof(float) * n, cudaMemcpyDeviceToHost));
        std::vector<float> want(n);
        for (int i = 0; i < n; ++i) {
            unsigned v = in[i];
            want[i] = coef[v & 7] * (float)perm[(v >> 3) & 255] + coef[r & 7];
            total += v & 0xff;
            hist[v & 15]++;
        }
        char what[32];
        std::snprintf(what, sizeof(what), "out(round %d)", r);
        bad += count_exact_mismatches(what, out.data(), want.data(), n);
    }

    float coef_back[8];
    int perm_back[256];
    unsigned launches = 0, hist_back[16];
    unsigned long long total_back = 0;
    CK(cudaMemcpyFromSymbol(coef_back, c_coef, sizeof(coef_back)));
    CK(cudaMemcpyFromSymbol(perm_back, c_perm, sizeof(perm_back)));
    CK(cudaMemcpyFromSymbol(&launches, d_launches, sizeof(launches)));
    CK(cudaMemcpyFromSymbol(&total_back, d_total, sizeof(total_back)));
    CK(cudaMemcpyFromSymbol(hist_back, d_hist, sizeof(hist_back), 0, cudaMemcpyDeviceToHost));
    CK(cudaFree(d_in));
    CK(cudaFree(d_out));

    bad += count_exact_mismatches("c_coef", coef_back, coef, 8);
    bad += count_exact_mismatches("c_perm", perm_back, perm, 256);
    unsigned want_launches = 100u + (unsigned)rounds;
    bad += count_exact_mismatches("d_launches", &launches, &want_launches, 1);
    bad += count_exact_mismatches("d_total", &total_back, &total, 1);
    bad += count_exact_mismatches("d_hist", hist_back, hist, 16);
    std::printf("consttab: %d elements, %d rounds\n", n, rounds);
    return verdict(bad);
}
