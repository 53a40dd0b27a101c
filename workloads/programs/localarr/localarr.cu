// localarr: per-thread arrays indexed with run-time values (local memory: STL/LDL) and
// generic-address loads/stores (a pointer that may point to shared or global memory).
//
// Kernels:
//   local_sort   - each thread copies LEN (<= 32) values into a local array, insertion-sorts it,
//                  builds a 16-bin local histogram with data-dependent indices, and writes
//                  the median, a position-weighted checksum and its most frequent bin   (1 launch)
//   generic_mix  - a __noinline__ __device__ function mix(float* p, ...) is called once with a
//                  pointer to shared memory and once with a pointer to global memory, and each
//                  thread also picks shared or global through a run-time condition, so the
//                  accesses are generic LD/ST (CALL.REL/RET, stack frame on sm_75+)      (1 launch)
// Check: exact against a host emulation (integer results; the float ones are single products
// and sums of exactly representable values, so they are exact too).
// Arguments: localarr [THREADS=512 [LEN=24 [SEED=14]]]
#include "check.h"

#include <algorithm>
#include <vector>

#define MAXLEN 32
#define MIX_THREADS 128

__global__ void local_sort(const unsigned* __restrict__ in, unsigned* __restrict__ out, int n, int len)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned a[MAXLEN];
    int hist[16];
    for (int b = 0; b < 16; ++b)
        hist[b] = 0;
    for (int k = 0; k < len; ++k) {
        unsigned v = in[(size_t)i * len + k];
        a[k] = v;
        hist[v & 15]++;
    }
    for (int k = 1; k < len; ++k) { // insertion sort with run-time indices
        unsigned v = a[k];
        int j = k - 1;
        while (j >= 0 && a[j] > v) {
            a[j + 1] = a[j];
            --j;
        }
        a[j + 1] = v;
    }
    unsigned sum = 0;
    for (int k = 0; k < len; ++k)
        sum += a[k] * (unsigned)(k + 1);
    int best = 0;
    for (int b = 1; b < 16; ++b)
        if (hist[b] > hist[best])
            best = b;
    out[3 * i] = a[len / 2];
    out[3 * i + 1] = sum;
    out[3 * i + 2] = (unsigned)best | ((unsigned)hist[best] << 8);
}

// Not inlined, so the pointer's state space is unknown: generic loads and stores.
__device__ __noinline__ float mix(float* p, int k, float v)
{
    float old = p[k];
    p[k] = old * 0.5f + v;
    return old;
}

__global__ void generic_mix(float* __restrict__ g, float* __restrict__ out)
{
    __shared__ float sh[MIX_THREADS];
    const int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    sh[t] = (float)t;
    __syncthreads();
    float r0 = mix(sh, (t * 5) % MIX_THREADS, (float)i);  // shared, through a generic pointer
    __syncthreads();
    float r1 = mix(g, i, 2.0f);                          // global, through a generic pointer
    float* p = (t & 1) ? &sh[t] : &g[i];                 // shared or global, decided at run time
    *p += 1.0f;
    __syncthreads();
    out[3 * i] = r0;
    out[3 * i + 1] = r1 + *p;
    out[3 * i + 2] = sh[t];
}

int main(int argc, char** argv)
{
    const int n = (int)arg_int(argc, argv, 1, 512, 1, 1 << 22, "THREADS");
    const int len = (int)arg_int(argc, argv, 2, 24, 1, MAXLEN, "LEN");
    const uint64_t seed = (uint64_t)arg_int(argc, argv, 3, 14, 0, 1L << 40, "SEED");

    Rng rng(seed);
    std::vector<unsigned> in((size_t)n * len), out(3 * n), ref(3 * n);
    for (auto& v : in)
        v = rng.below(1000) * 97u + rng.below(7);
    // generic_mix works on whole blocks of MIX_THREADS.
    const int nmix = (n + MIX_THREADS - 1) / MIX_THREADS * MIX_THREADS;
    std::vector<float> g(nmix), gout(3 * nmix), gref(3 * nmix), gfinal(nmix), gfinal_ref(nmix);
    for (auto& v : g)
        v = (float)rng.below(1 << 16);

    unsigned *d_in, *d_out;
    float *d_g, *d_gout;
    CK(cudaMalloc(&d_in, sizeof(unsigned) * in.size()));
    CK(cudaMalloc(&d_out, sizeof(unsigned) * out.size()));
    CK(cudaMalloc(&d_g, sizeof(float) * nmix));
    CK(cudaMalloc(&d_gout, sizeof(float) * gout.size()));
    CK(cudaMemcpy(d_in, in.data(), sizeof(unsigned) * in.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_g, g.data(), sizeof(float) * nmix, cudaMemcpyHostToDevice));
    local_sort<<<(n + 127) / 128, 128>>>(d_in, d_out, n, len);
    CK_LAUNCH();
    generic_mix<<<nmix / MIX_THREADS, MIX_THREADS>>>(d_g, d_gout);
    CK_LAUNCH();
    CK(cudaMemcpy(out.data(), d_out, sizeof(unsigned) * out.size(), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(gout.data(), d_gout, sizeof(float) * gout.size(), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(gfinal.data(), d_g, sizeof(float) * nmix, cudaMemcpyDeviceToHost));
    CK(cudaFree(d_in));
    CK(cudaFree(d_out));
    CK(cudaFree(d_g));
    CK(cudaFree(d_gout));

    // Host reference of local_sort.
    for (int i = 0; i < n; ++i) {
        std::vector<unsigned> a(in.begin() + (size_t)i * len, in.begin() + (size_t)(i + 1) * len);
        int hist[16] = {0};
        for (unsigned v : a)
            hist[v & 15]++;
        std::sort(a.begin(), a.end());
        unsigned sum = 0;
        for (int k = 0; k < len; ++k)
            sum += a[k] * (unsigned)(k + 1);
        int best = 0;
        for (int b = 1; b < 16; ++b)
            if (hist[b] > hist[best])
                best = b;
        ref[3 * i] = a[len / 2];
        ref[3 * i + 1] = sum;
        ref[3 * i + 2] = (unsigned)best | ((unsigned)hist[best] << 8);
    }
    // Host reference of generic_mix, block by block. Shared slot j is mixed by the thread t with
    // (5 t) % 128 == j (a permutation: 5 is odd), then odd threads add 1 to their own slot.
    for (int blk = 0; blk < nmix / MIX_THREADS; ++blk) {
        float sh[MIX_THREADS];
        for (int t = 0; t < MIX_THREADS; ++t)
            sh[t] = (float)t;
        float r0[MIX_THREADS];
        for (int t = 0; t < MIX_THREADS; ++t) {
            int k = (t * 5) % MIX_THREADS, i = blk * MIX_THREADS + t;
            r0[t] = sh[k];
            sh[k] = sh[k] * 0.5f + (float)i;
        }
        for (int t = 0; t < MIX_THREADS; ++t) {
            int i = blk * MIX_THREADS + t;
            float r1 = g[i];
            float gi = g[i] * 0.5f + 2.0f;
            float pv;
            if (t & 1)
                pv = sh[t] += 1.0f; // each odd thread only touches its own slot
            else
                pv = gi += 1.0f;
            gfinal_ref[i] = gi;
            gref[3 * i] = r0[t];
            gref[3 * i + 1] = r1 + pv;
        }
        for (int t = 0; t < MIX_THREADS; ++t)
            gref[3 * (blk * MIX_THREADS + t) + 2] = sh[t];
    }

    std::printf("localarr: %d threads, %d values each\n", n, len);
    long bad = count_exact_mismatches("local_sort", out.data(), ref.data(), 3L * n);
    bad += count_exact_mismatches("generic_mix", gout.data(), gref.data(), 3L * nmix);
    bad += count_exact_mismatches("g", gfinal.data(), gfinal_ref.data(), nmix);
    return verdict(bad);
}
