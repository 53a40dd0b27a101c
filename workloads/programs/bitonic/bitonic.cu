// bitonic: bitonic sort of 2^LOGN unsigned keys in global memory, one launch per (k, j) step.
//
// Kernels:
//   bitonic_step    - thread i compares key i with key i^j and swaps them into the order of its
//                     k-sized sequence               (LOGN (LOGN + 1) / 2 launches: 66 by default)
//   count_descents  - counts positions with a[i] > a[i+1] with a global atomicAdd (1 launch; must be 0)
// Check: the keys equal std::sort of the input (exact), and the device descent count is 0.
// Arguments: bitonic [LOGN=11 [SEED=6]]
// Exercises: many short launches from a host loop, data-dependent swaps (divergence), XOR
// partner addressing, global atomics (RED/ATOMG), unsigned compares.
#include "check.h"

#include <algorithm>
#include <vector>

__global__ void bitonic_step(unsigned* a, unsigned j, unsigned k)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned p = i ^ j;
    if (p > i) {
        unsigned x = a[i], y = a[p];
        bool up = (i & k) == 0;
        if ((x > y) == up) {
            a[i] = y;
            a[p] = x;
        }
    }
}

__global__ void count_descents(const unsigned* a, unsigned n, unsigned* count)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 1 < n && a[i] > a[i + 1])
        atomicAdd(count, 1u);
}

int main(int argc, char** argv)
{
    const int logn = (int)arg_int(argc, argv, 1, 11, 1, 26, "LOGN");
    const uint64_t seed = (uint64_t)arg_int(argc, argv, 2, 6, 0, 1L << 40, "SEED");
    const unsigned n = 1u << logn;

    Rng rng(seed);
    std::vector<unsigned> keys(n);
    for (auto& k : keys)
        k = rng.u32() >> (rng.below(4) * 8); // mixed magnitudes, some duplicates among small keys

    unsigned *d_a, *d_count;
    CK(cudaMalloc(&d_a, sizeof(unsigned) * n));
    CK(cudaMalloc(&d_count, sizeof(unsigned)));
    CK(cudaMemcpy(d_a, keys.data(), sizeof(unsigned) * n, cudaMemcpyHostToDevice));
    CK(cudaMemset(d_count, 0, sizeof(unsigned)));

    const unsigned threads = n < 256 ? n : 256, blocks = n / threads;
    int launches = 0;
    for (unsigned k = 2; k <= n; k <<= 1)
        for (unsigned j = k >> 1; j > 0; j >>= 1) {
            bitonic_step<<<blocks, threads>>>(d_a, j, k);
            CK_LAUNCH();
            ++launches;
        }
    count_descents<<<blocks, threads>>>(d_a, n, d_count);
    CK_LAUNCH();

    std::vector<unsigned> got(n);
    unsigned descents = 0;
    CK(cudaMemcpy(got.data(), d_a, sizeof(unsigned) * n, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&descents, d_count, sizeof(unsigned), cudaMemcpyDeviceToHost));
    CK(cudaFree(d_a));
    CK(cudaFree(d_count));

    std::sort(keys.begin(), keys.end());
    std::printf("bitonic: %u keys, %d bitonic_step launches\n", n, launches);
    long bad = count_exact_mismatches("key", got.data(), keys.data(), n);
    if (descents != 0) {
        std::printf("mismatch: count_descents = %u, want 0\n", descents);
        ++bad;
    }
    return verdict(bad);
}
