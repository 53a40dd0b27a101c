// stencil2d: Jacobi iteration of the 5-point Laplace stencil on a W x H grid with fixed
// boundary values, ping-pong buffers, one launch per step.
//
// The device grids are pitched (row pitch = W rounded up to 32 floats): both buffers are
// cleared with cudaMemset, filled from the tightly packed host grid with cudaMemcpy2D, and the
// result comes back with cudaMemcpy2D. The padding columns must still be zero at the end.
// Kernels:
//   jacobi_step - interior point (x, y): out = 0.25 (up + down + left + right)   (STEPS launches)
// Check: against the same float arithmetic on the host, |got - want| <= 2^-20 (values in [0, 1];
// the order of the additions is the same, so results are normally bit-identical).
// Arguments: stencil2d [W=60 [H=44 [STEPS=10 [SEED=4]]]]
// Exercises: 2-D blocks with edge predicates, pitched addressing, cudaMemset, cudaMemcpy2D,
// many short launches alternating two buffers.
#include "check.h"

#include <vector>

__global__ void jacobi_step(const float* __restrict__ in, float* __restrict__ out, int w, int h, int pitch)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1)
        return; // boundary points are fixed and present in both buffers
    const float* c = in + (size_t)y * pitch + x;
    out[(size_t)y * pitch + x] = 0.25f * (c[-pitch] + c[pitch] + c[-1] + c[1]);
}

int main(int argc, char** argv)
{
    const int w = (int)arg_int(argc, argv, 1, 60, 3, 1 << 14, "W");
    const int h = (int)arg_int(argc, argv, 2, 44, 3, 1 << 14, "H");
    const int steps = (int)arg_int(argc, argv, 3, 10, 1, 100000, "STEPS");
    const uint64_t seed = (uint64_t)arg_int(argc, argv, 4, 4, 0, 1L << 40, "SEED");
    const int pitch = (w + 31) / 32 * 32; // floats per device row

    Rng rng(seed);
    std::vector<float> u((size_t)w * h);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            bool edge = x == 0 || y == 0 || x == w - 1 || y == h - 1;
            u[(size_t)y * w + x] = edge ? (float)x / (float)(w - 1) : rng.uniform(0.0f, 1.0f);
        }

    float* d_buf[2];
    const size_t bytes = sizeof(float) * (size_t)pitch * h;
    for (auto& b : d_buf) {
        CK(cudaMalloc(&b, bytes));
        CK(cudaMemset(b, 0, bytes));
        CK(cudaMemcpy2D(b, sizeof(float) * pitch, u.data(), sizeof(float) * w, sizeof(float) * w, h,
                        cudaMemcpyHostToDevice));
    }

    dim3 block(16, 16), grid((w + 15) / 16, (h + 15) / 16);
    for (int s = 0; s < steps; ++s) {
        jacobi_step<<<grid, block>>>(d_buf[s & 1], d_buf[(s + 1) & 1], w, h, pitch);
        CK_LAUNCH();
    }
    std::vector<float> got((size_t)w * h), raw((size_t)pitch * h);
    CK(cudaMemcpy2D(got.data(), sizeof(float) * w, d_buf[steps & 1], sizeof(float) * pitch, sizeof(float) * w, h,
                    cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(raw.data(), d_buf[steps & 1], bytes, cudaMemcpyDeviceToHost));
    for (auto& b : d_buf)
        CK(cudaFree(b));

    // Host reference with the same float operations in the same order.
    std::vector<float> a = u, b = u;
    for (int s = 0; s < steps; ++s) {
        for (int y = 1; y < h - 1; ++y)
            for (int x = 1; x < w - 1; ++x) {
                const float* c = &a[(size_t)y * w + x];
                b[(size_t)y * w + x] = 0.25f * (c[-w] + c[w] + c[-1] + c[1]);
            }
        std::swap(a, b);
    }
    std::vector<double> tol(a.size(), 0x1p-20);
    std::printf("stencil2d: %d x %d, %d steps\n", w, h, steps);
    long bad = count_mismatches("u", got.data(), a.data(), tol.data(), (long)a.size());
    for (int y = 0; y < h; ++y)
        for (int x = w; x < pitch; ++x)
            if (raw[(size_t)y * pitch + x] != 0.0f) {
                if (bad < 5)
                    std::printf("mismatch: padding (%d, %d) = %g, want 0\n", x, y, raw[(size_t)y * pitch + x]);
                ++bad;
            }
    return verdict(bad);
}
