// stencil3d: 7-point heat-diffusion stencil on an NX x NY x NZ grid with fixed boundary
// values, ping-pong buffers, one launch per time step, 3-D grid of 3-D blocks.
//
// Kernels:
//   heat_step - interior point: out = C0 u + C1 (sum of the 6 neighbours)   (STEPS launches)
//   (C0 = 0.4, C1 = 0.1 are kernel arguments; the weights sum to 1 so values stay in [0, 1])
// Check: against a float host reference, |got - want| <= 2^-16 (the device may contract
// C0 u + C1 s into one FFMA, the host does not; errors stay near 1 ulp per step).
// Arguments: stencil3d [NX=32 [NY=16 [NZ=16 [STEPS=4 [SEED=5]]]]]
// Exercises: blockIdx.z / threadIdx.z, 3-D index arithmetic (IMAD chains), plane-strided loads.
#include "check.h"

#include <vector>

__global__ void heat_step(const float* __restrict__ in, float* __restrict__ out, int nx, int ny, int nz, float c0,
                          float c1)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < 1 || y < 1 || z < 1 || x >= nx - 1 || y >= ny - 1 || z >= nz - 1)
        return;
    const size_t plane = (size_t)nx * ny;
    const size_t i = (size_t)z * plane + (size_t)y * nx + x;
    float s = in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx] + in[i - plane] + in[i + plane];
    out[i] = c0 * in[i] + c1 * s;
}

int main(int argc, char** argv)
{
    const int nx = (int)arg_int(argc, argv, 1, 32, 3, 1024, "NX");
    const int ny = (int)arg_int(argc, argv, 2, 16, 3, 1024, "NY");
    const int nz = (int)arg_int(argc, argv, 3, 16, 3, 1024, "NZ");
    const int steps = (int)arg_int(argc, argv, 4, 4, 1, 100000, "STEPS");
    const uint64_t seed = (uint64_t)arg_int(argc, argv, 5, 5, 0, 1L << 40, "SEED");
    const float c0 = 0.4f, c1 = 0.1f;
    const size_t npts = (size_t)nx * ny * nz;

    Rng rng(seed);
    std::vector<float> u(npts);
    for (auto& v : u)
        v = rng.uniform(0.0f, 1.0f);

    float* d_buf[2];
    for (auto& b : d_buf) {
        CK(cudaMalloc(&b, sizeof(float) * npts));
        CK(cudaMemcpy(b, u.data(), sizeof(float) * npts, cudaMemcpyHostToDevice));
    }
    dim3 block(32, 4, 2), grid((nx + 31) / 32, (ny + 3) / 4, (nz + 1) / 2);
    for (int s = 0; s < steps; ++s) {
        heat_step<<<grid, block>>>(d_buf[s & 1], d_buf[(s + 1) & 1], nx, ny, nz, c0, c1);
        CK_LAUNCH();
    }
    std::vector<float> got(npts);
    CK(cudaMemcpy(got.data(), d_buf[steps & 1], sizeof(float) * npts, cudaMemcpyDeviceToHost));
    for (auto& b : d_buf)
        CK(cudaFree(b));

    std::vector<float> a = u, b = u;
    const size_t plane = (size_t)nx * ny;
    for (int s = 0; s < steps; ++s) {
        for (int z = 1; z < nz - 1; ++z)
            for (int y = 1; y < ny - 1; ++y)
                for (int x = 1; x < nx - 1; ++x) {
                    size_t i = (size_t)z * plane + (size_t)y * nx + x;
                    float sum = a[i - 1] + a[i + 1] + a[i - nx] + a[i + nx] + a[i - plane] + a[i + plane];
                    b[i] = c0 * a[i] + c1 * sum;
                }
        std::swap(a, b);
    }
    std::vector<double> tol(npts, 0x1p-16);
    std::printf("stencil3d: %d x %d x %d, %d steps\n", nx, ny, nz, steps);
    return verdict(count_mismatches("u", got.data(), a.data(), tol.data(), (long)npts));
}
