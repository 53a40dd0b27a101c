// simtune: the two calibration kernels measured on a real H100 PCIe
// (shared/hardware/h100-pcie/README.md), each launched once as <<<BLOCKS, THREADS>>>.
//
// Kernels:
//   emptykernel - empty body (sm_90 SASS: LDC R1 (stack pointer), EXIT)
//   ffmakernel  - a chain of 20 dependent FFMAs on one register starting from constants (inline
//                 PTX fma.rn.f32, so the chain is not folded), and a store only if the result is
//                 0, which it never is (sm_90 SASS by ptxas 13.5: LDC, HFMA2.MMA, MOV, 20 x FFMA,
//                 FSETP, @P0 EXIT = 25 instructions per warp; the store path after it never runs)
// Usage: simtune empty|ffma BLOCKS THREADS   - one launch
//        simtune                             - both kernels once, <<<1, 32>>> each (2 launches)
// Check: the launch succeeds and the ffmakernel's output buffer is still all zero (no store).
#include "check.h"

#include <cstring>
#include <vector>

#define OUT_WORDS 256 // ffmakernel's (never written) output buffer

__global__ void emptykernel() {}

__global__ void ffmakernel(float* out)
{
    float x = 1.0f;
    const float a = 0.999f, b = 0.5f;
#pragma unroll
    for (int i = 0; i < 20; ++i)
        asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(x) : "f"(a), "f"(b));
    if (x == 0.0f) // x converges to 0.5 / (1 - 0.999) = 500: never 0
        out[(blockIdx.x * blockDim.x + threadIdx.x) & (OUT_WORDS - 1)] = x;
}

static long run(const char* which, int blocks, int threads)
{
    const size_t n = OUT_WORDS;
    if (std::strcmp(which, "empty") == 0) {
        emptykernel<<<blocks, threads>>>();
        CK_LAUNCH();
        CK(cudaDeviceSynchronize());
        return 0;
    }
    float* d_out;
    CK(cudaMalloc(&d_out, sizeof(float) * n));
    CK(cudaMemset(d_out, 0, sizeof(float) * n));
    ffmakernel<<<blocks, threads>>>(d_out);
    CK_LAUNCH();
    std::vector<float> out(n, 1.0f);
    CK(cudaMemcpy(out.data(), d_out, sizeof(float) * n, cudaMemcpyDeviceToHost));
    CK(cudaFree(d_out));
    std::vector<float> zero(n, 0.0f);
    return count_exact_mismatches("ffmakernel out", out.data(), zero.data(), (long)n);
}

int main(int argc, char** argv)
{
    if (argc == 1) {
        long bad = run("empty", 1, 32) + run("ffma", 1, 32);
        std::printf("simtune: empty and ffma, 1 x 32\n");
        return verdict(bad);
    }
    if (argc != 4 || (std::strcmp(argv[1], "empty") != 0 && std::strcmp(argv[1], "ffma") != 0)) {
        std::printf("FAIL usage: simtune [empty|ffma BLOCKS THREADS]\n");
        return 2;
    }
    const int blocks = (int)arg_int(argc, argv, 2, 1, 1, 1 << 20, "BLOCKS");
    const int threads = (int)arg_int(argc, argv, 3, 32, 1, 1024, "THREADS");
    long bad = run(argv[1], blocks, threads);
    std::printf("simtune: %s, %d x %d\n", argv[1], blocks, threads);
    return verdict(bad);
}
