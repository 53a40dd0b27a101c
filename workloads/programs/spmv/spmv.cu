// spmv: y = A x for a sparse matrix in CSR form, by a scalar and a vector kernel.
//
// The host generates A (fixed seed): row r has 0..2*AVG entries at random columns, and every
// 64th row is long (4*AVG..8*AVG entries), so row lengths within a warp vary a lot.
// Kernels:
//   spmv_scalar - one thread per row                                            (1 launch)
//   spmv_vector - one warp per row: lanes stride over the row, __shfl_down_sync tree sum (1 launch)
// Check: both against a double host product, tolerance 4 len 2^-24 sum|a x| per row (any
// summation order is within it).
// Arguments: spmv [ROWS=1024 [COLS=1024 [AVG=8 [SEED=9]]]]
// Exercises: indirect (gathered) loads x[col[e]], loop trip counts that differ per thread,
// SHFL.DOWN reductions, empty rows.
#include "check.h"

#include <vector>

__global__ void spmv_scalar(int rows, const int* __restrict__ rowp, const int* __restrict__ col,
                            const float* __restrict__ val, const float* __restrict__ x, float* __restrict__ y)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    float s = 0.0f;
    for (int e = rowp[r]; e < rowp[r + 1]; ++e)
        s += val[e] * x[col[e]];
    y[r] = s;
}

__global__ void spmv_vector(int rows, const int* __restrict__ rowp, const int* __restrict__ col,
                            const float* __restrict__ val, const float* __restrict__ x, float* __restrict__ y)
{
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (warp >= rows) // the whole warp leaves together
        return;
    float s = 0.0f;
    for (int e = rowp[warp] + lane; e < rowp[warp + 1]; e += 32)
        s += val[e] * x[col[e]];
    for (int off = 16; off > 0; off >>= 1)
        s += __shfl_down_sync(0xffffffffu, s, off);
    if (lane == 0)
        y[warp] = s;
}

int main(int argc, char** argv)
{
    const int rows = (int)arg_int(argc, argv, 1, 1024, 1, 1 << 22, "ROWS");
    const int cols = (int)arg_int(argc, argv, 2, 1024, 1, 1 << 22, "COLS");
    const int avg = (int)arg_int(argc, argv, 3, 8, 1, 1024, "AVG");
    const uint64_t seed = (uint64_t)arg_int(argc, argv, 4, 9, 0, 1L << 40, "SEED");

    Rng rng(seed);
    std::vector<int> rowp(rows + 1), col;
    std::vector<float> val, x(cols);
    for (int r = 0; r < rows; ++r) {
        rowp[r] = (int)col.size();
        int len = (r % 64 == 63) ? 4 * avg + (int)rng.below(4 * avg + 1) : (int)rng.below(2 * avg + 1);
        for (int k = 0; k < len; ++k) {
            col.push_back((int)rng.below(cols));
            val.push_back(rng.uniform(-1.0f, 1.0f));
        }
    }
    rowp[rows] = (int)col.size();
    const int nnz = rowp[rows];
    for (auto& v : x)
        v = rng.uniform(-1.0f, 1.0f);

    int *d_rowp, *d_col;
    float *d_val, *d_x, *d_y1, *d_y2;
    CK(cudaMalloc(&d_rowp, sizeof(int) * (rows + 1)));
    CK(cudaMalloc(&d_col, sizeof(int) * (nnz > 0 ? nnz : 1)));
    CK(cudaMalloc(&d_val, sizeof(float) * (nnz > 0 ? nnz : 1)));
    CK(cudaMalloc(&d_x, sizeof(float) * cols));
    CK(cudaMalloc(&d_y1, sizeof(float) * rows));
    CK(cudaMalloc(&d_y2, sizeof(float) * rows));
    CK(cudaMemcpy(d_rowp, rowp.data(), sizeof(int) * (rows + 1), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_col, col.data(), sizeof(int) * nnz, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_val, val.data(), sizeof(float) * nnz, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_x, x.data(), sizeof(float) * cols, cudaMemcpyHostToDevice));

    const int threads = 128;
    spmv_scalar<<<(rows + threads - 1) / threads, threads>>>(rows, d_rowp, d_col, d_val, d_x, d_y1);
    CK_LAUNCH();
    const int warps_per_block = threads / 32;
    spmv_vector<<<(rows + warps_per_block - 1) / warps_per_block, threads>>>(rows, d_rowp, d_col, d_val, d_x, d_y2);
    CK_LAUNCH();
    std::vector<float> y1(rows), y2(rows);
    CK(cudaMemcpy(y1.data(), d_y1, sizeof(float) * rows, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(y2.data(), d_y2, sizeof(float) * rows, cudaMemcpyDeviceToHost));
    CK(cudaFree(d_rowp));
    CK(cudaFree(d_col));
    CK(cudaFree(d_val));
    CK(cudaFree(d_x));
    CK(cudaFree(d_y1));
    CK(cudaFree(d_y2));

    std::vector<double> ref(rows), tol(rows);
    for (int r = 0; r < rows; ++r) {
        double s = 0, sa = 0;
        for (int e = rowp[r]; e < rowp[r + 1]; ++e) {
            double t = (double)val[e] * x[col[e]];
            s += t;
            sa += std::fabs(t);
        }
        ref[r] = s;
        tol[r] = 4.0 * (rowp[r + 1] - rowp[r]) * 0x1p-24 * sa;
    }
    std::printf("spmv: %d x %d, %d non-zeros\n", rows, cols, nnz);
    long bad = count_mismatches("y_scalar", y1.data(), ref.data(), tol.data(), rows);
    bad += count_mismatches("y_vector", y2.data(), ref.data(), tol.data(), rows);
    return verdict(bad);
}
