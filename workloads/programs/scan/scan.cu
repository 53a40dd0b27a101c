// scan: exclusive prefix sum of N unsigned integers (mod 2^32), multi-level.
//
// Level 0 scans blocks of B = 2 * THREADS elements (work-efficient up-sweep / down-sweep in
// dynamic shared memory, padded against bank conflicts) and writes each block's total; the
// totals are scanned the same way (recursively, until one block is left) and added back.
// Kernels:
//   block_scan   - per-block exclusive scan + block total     (one launch per level)
//   add_offsets  - out[i] += scanned_totals[i / B]            (one launch per level but the last)
// Default N = 20000, THREADS = 64: 157 blocks -> 2 blocks -> 1 block, i.e. 3 levels, 5 launches.
// Host: pinned buffers (cudaMallocHost), a stream with cudaMemcpyAsync in and out, events
// around the scan (elapsed time checked >= 0, not printed), cudaStreamSynchronize.
// Check: exact, against a host exclusive scan.
// Arguments: scan [N=20000 [THREADS=64 [SEED=7]]]  (THREADS: power of two in [32, 512])
// Exercises: dynamic shared memory (<<<g, b, bytes>>>), BAR.SYNC in loops with shrinking
// active sets, LDS/STS with computed addresses, host recursion over levels, pinned memory.
#include "check.h"

#include <vector>

#define PAD(i) ((i) + ((i) >> 5)) // one padding word per 32 elements

__global__ void block_scan(const unsigned* __restrict__ in, unsigned* __restrict__ out, unsigned* __restrict__ sums,
                           int n)
{
    extern __shared__ unsigned s[];
    const int t = threadIdx.x, b = 2 * blockDim.x;
    const int base = blockIdx.x * b;
    const int ai = t, bi = t + blockDim.x;
    s[PAD(ai)] = base + ai < n ? in[base + ai] : 0u;
    s[PAD(bi)] = base + bi < n ? in[base + bi] : 0u;
    int offset = 1;
    for (int d = b >> 1; d > 0; d >>= 1) { // up-sweep: partial sums in place
        __syncthreads();
        if (t < d) {
            int x = offset * (2 * t + 1) - 1, y = offset * (2 * t + 2) - 1;
            s[PAD(y)] += s[PAD(x)];
        }
        offset <<= 1;
    }
    if (t == 0) {
        if (sums)
            sums[blockIdx.x] = s[PAD(b - 1)];
        s[PAD(b - 1)] = 0u;
    }
    for (int d = 1; d < b; d <<= 1) { // down-sweep
        offset >>= 1;
        __syncthreads();
        if (t < d) {
            int x = offset * (2 * t + 1) - 1, y = offset * (2 * t + 2) - 1;
            unsigned v = s[PAD(x)];
            s[PAD(x)] = s[PAD(y)];
            s[PAD(y)] += v;
        }
    }
    __syncthreads();
    if (base + ai < n)
        out[base + ai] = s[PAD(ai)];
    if (base + bi < n)
        out[base + bi] = s[PAD(bi)];
}

__global__ void add_offsets(unsigned* out, const unsigned* __restrict__ offs, int n, int b)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] += offs[i / b];
}

struct Level {
    int n;          // elements scanned at this level
    int blocks;     // blocks of block_scan
    unsigned* sums; // block totals (input of the next level)
    unsigned* scan; // their exclusive scan (output of the next level)
};

// Scans d_in[0..n) into d_out at `lv` and the levels after it.
static void scan_level(std::vector<Level>& levels, size_t lv, const unsigned* d_in, unsigned* d_out, int threads,
                       cudaStream_t st, int& launches)
{
    const int b = 2 * threads;
    const Level& L = levels[lv];
    const size_t smem = sizeof(unsigned) * PAD(b);
    block_scan<<<L.blocks, threads, smem, st>>>(d_in, d_out, L.blocks > 1 ? L.sums : nullptr, L.n);
    CK_LAUNCH();
    ++launches;
    if (L.blocks > 1) {
        scan_level(levels, lv + 1, L.sums, L.scan, threads, st, launches);
        add_offsets<<<(L.n + 255) / 256, 256, 0, st>>>(d_out, L.scan, L.n, b);
        CK_LAUNCH();
        ++launches;
    }
}

int main(int argc, char** argv)
{
    const int n = (int)arg_int(argc, argv, 1, 20000, 1, 1 << 26, "N");
    const int threads = (int)arg_int(argc, argv, 2, 64, 32, 512, "THREADS");
    const uint64_t seed = (uint64_t)arg_int(argc, argv, 3, 7, 0, 1L << 40, "SEED");
    if (threads & (threads - 1))
        fail("THREADS must be a power of two");
    const int b = 2 * threads;

    unsigned *h_in, *h_out;
    CK(cudaMallocHost(&h_in, sizeof(unsigned) * n));
    CK(cudaMallocHost(&h_out, sizeof(unsigned) * n));
    Rng rng(seed);
    for (int i = 0; i < n; ++i)
        h_in[i] = (i % 97 == 0) ? rng.u32() : rng.below(1000); // a few huge values make the sum wrap

    // Level sizes and buffers.
    std::vector<Level> levels;
    for (int m = n;;) {
        Level L{m, (m + b - 1) / b, nullptr, nullptr};
        if (L.blocks > 1) {
            CK(cudaMalloc(&L.sums, sizeof(unsigned) * L.blocks));
            CK(cudaMalloc(&L.scan, sizeof(unsigned) * L.blocks));
        }
        levels.push_back(L);
        if (L.blocks == 1)
            break;
        m = L.blocks;
    }

    unsigned *d_in, *d_out;
    CK(cudaMalloc(&d_in, sizeof(unsigned) * n));
    CK(cudaMalloc(&d_out, sizeof(unsigned) * n));
    cudaStream_t st;
    cudaEvent_t start, stop;
    CK(cudaStreamCreate(&st));
    CK(cudaEventCreate(&start));
    CK(cudaEventCreate(&stop));

    CK(cudaMemcpyAsync(d_in, h_in, sizeof(unsigned) * n, cudaMemcpyHostToDevice, st));
    CK(cudaEventRecord(start, st));
    int launches = 0;
    scan_level(levels, 0, d_in, d_out, threads, st, launches);
    CK(cudaEventRecord(stop, st));
    CK(cudaMemcpyAsync(h_out, d_out, sizeof(unsigned) * n, cudaMemcpyDeviceToHost, st));
    CK(cudaStreamSynchronize(st));
    float ms = -1.0f;
    CK(cudaEventElapsedTime(&ms, start, stop));

    CK(cudaEventDestroy(start));
    CK(cudaEventDestroy(stop));
    CK(cudaStreamDestroy(st));
    for (auto& L : levels) {
        CK(cudaFree(L.sums)); // cudaFree(nullptr) is a no-op
        CK(cudaFree(L.scan));
    }
    CK(cudaFree(d_in));
    CK(cudaFree(d_out));

    std::vector<unsigned> ref(n);
    unsigned acc = 0;
    for (int i = 0; i < n; ++i) {
        ref[i] = acc;
        acc += h_in[i];
    }
    std::printf("scan: %d elements, %zu levels, %d launches\n", n, levels.size(), launches);
    long bad = count_exact_mismatches("out", h_out, ref.data(), n);
    if (!(ms >= 0.0f)) {
        std::printf("mismatch: elapsed time %g ms < 0\n", ms);
        ++bad;
    }
    CK(cudaFreeHost(h_in));
    CK(cudaFreeHost(h_out));
    return verdict(bad);
}
