// transpose: out = in^T for a ROWS x COLS float matrix (row-major), naive and tiled.
//
// Kernels:
//   transpose_naive - thread (x, y) copies in[y][x] to out[x][y]: coalesced reads, strided writes (1 launch)
//   transpose_tiled - 32 x 32 tile through shared memory padded to 33 columns (no bank conflicts),
//                     32 x 8 threads, 4 rows per thread, coalesced reads and writes    (1 launch)
// Sizes need not be multiples of 32 (edge predicates). Check: both outputs exact.
// Arguments: transpose [ROWS=200 [COLS=136 [SEED=8]]]
// Exercises: shared-memory staging with padding, BAR.SYNC, uncoalesced vs coalesced stores,
// partial tiles at the edges.
#include "check.h"

#include <vector>

#define TILE 32
#define ROWS_PER_PASS 8

__global__ void transpose_naive(const float* __restrict__ in, float* __restrict__ out, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows)
        out[(size_t)x * rows + y] = in[(size_t)y * cols + x];
}

__global__ void transpose_tiled(const float* __restrict__ in, float* __restrict__ out, int rows, int cols)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS_PER_PASS)
        if (x < cols && y + j < rows)
            tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x; // column of out = row of in
    y = blockIdx.x * TILE + threadIdx.y; // row of out = column of in
    for (int j = 0; j < TILE; j += ROWS_PER_PASS)
        if (x < rows && y + j < cols)
            out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

int main(int argc, char** argv)
{
    const int rows = (int)arg_int(argc, argv, 1, 200, 1, 1 << 14, "ROWS");
    const int cols = (int)arg_int(argc, argv, 2, 136, 1, 1 << 14, "COLS");
    const uint64_t seed = (uint64_t)arg_int(argc, argv, 3, 8, 0, 1L << 40, "SEED");
    const size_t n = (size_t)rows * cols;

    Rng rng(seed);
    std::vector<float> in(n), ref(n), o1(n), o2(n);
    for (auto& v : in)
        v = rng.uniform(-100.0f, 100.0f);
    for (int y = 0; y < rows; ++y)
        for (int x = 0; x < cols; ++x)
            ref[(size_t)x * rows + y] = in[(size_t)y * cols + x];

    float *d_in, *d_o1, *d_o2;
    CK(cudaMalloc(&d_in, sizeof(float) * n));
    CK(cudaMalloc(&d_o1, sizeof(float) * n));
    CK(cudaMalloc(&d_o2, sizeof(float) * n));
    CK(cudaMemcpy(d_in, in.data(), sizeof(float) * n, cudaMemcpyHostToDevice));

    dim3 block(TILE, ROWS_PER_PASS);
    dim3 grid_naive((cols + TILE - 1) / TILE, (rows + ROWS_PER_PASS - 1) / ROWS_PER_PASS);
    dim3 grid_tiled((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
    transpose_naive<<<grid_naive, block>>>(d_in, d_o1, rows, cols);
    CK_LAUNCH();
    transpose_tiled<<<grid_tiled, block>>>(d_in, d_o2, rows, cols);
    CK_LAUNCH();
    CK(cudaMemcpy(o1.data(), d_o1, sizeof(float) * n, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(o2.data(), d_o2, sizeof(float) * n, cudaMemcpyDeviceToHost));
    CK(cudaFree(d_in));
    CK(cudaFree(d_o1));
    CK(cudaFree(d_o2));

    std::printf("transpose: %d x %d\n", rows, cols);
    long bad = count_exact_mismatches("naive", o1.data(), ref.data(), (long)n);
    bad += count_exact_mismatches("tiled", o2.data(), ref.data(), (long)n);
    return verdict(bad);
}
