// nbody: all-pairs gravitational n-body simulation, a few leapfrog-style time steps.
//
// Kernels (per step):
//   body_forces - acceleration of each body: tiles of positions staged in dynamic shared memory
//                 (blockDim float4), softened 1/r^3 via rsqrtf (MUFU.RSQ)      (STEPS launches)
//   integrate   - v += a dt, p += v dt                                         (STEPS launches)
// Host: cudaGetDeviceProperties (shared memory per block must fit the tile, warpSize 32),
// cudaFuncSetAttribute(MaxDynamicSharedMemorySize), cudaOccupancyMaxActiveBlocksPerMultiprocessor
// (must be >= 1). Nothing device-specific is printed.
// Check: positions and velocities against a double-precision host simulation, tolerance
// 1e-4 (1 + |want|) (rsqrtf is not correctly rounded; the observed error is ~1e-6).
// Arguments: nbody [N=128 [STEPS=4 [THREADS=64 [SEED=10]]]]  (N a multiple of THREADS)
// Exercises: dynamic shared memory, LDS.128 / float4 loads, MUFU.RSQ, long FFMA sequences,
// BAR.SYNC inside a loop, the occupancy and attribute API.
#include "check.h"

#include <vector>

__global__ void body_forces(const float4* __restrict__ pos, float4* __restrict__ acc, int n, float eps2)
{
    extern __shared__ float4 tile[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 p = pos[i];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int base = 0; base < n; base += blockDim.x) {
        tile[threadIdx.x] = pos[base + threadIdx.x];
        __syncthreads();
        for (int j = 0; j < (int)blockDim.x; ++j) {
            float4 q = tile[j];
            float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
            float d2 = dx * dx + dy * dy + dz * dz + eps2;
            float inv = rsqrtf(d2);
            float s = q.w * inv * inv * inv;
            ax += dx * s;
            ay += dy * s;
            az += dz * s;
        }
        __syncthreads();
    }
    acc[i] = make_float4(ax, ay, az, 0.0f);
}

__global__ void integrate(float4* __restrict__ pos, float4* __restrict__ vel, const float4* __restrict__ acc, int n,
                          float dt)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float4 p = pos[i], v = vel[i], a = acc[i];
    v.x += a.x * dt;
    v.y += a.y * dt;
    v.z += a.z * dt;
    p.x += v.x * dt;
    p.y += v.y * dt;
    p.z += v.z * dt;
    pos[i] = p;
    vel[i] = v;
}

int main(int argc, char** argv)
{
    const int n = (int)arg_int(argc, argv, 1, 128, 1, 1 << 20, "N");
    const int steps = (int)arg_int(argc, argv, 2, 4, 1, 100000, "STEPS");
    const int threads = (int)arg_int(argc, argv, 3, 64, 32, 1024, "THREADS");
    const uint64_t seed = (uint64_t)arg_int(argc, argv, 4, 10, 0, 1L << 40, "SEED");
    if (n % threads)
        fail("N must be a multiple of THREADS");
    const float eps2 = 0.01f, dt = 0.01f;
    const size_t smem = sizeof(float4) * threads;

    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    if (prop.warpSize != 32 || prop.sharedMemPerBlock < smem || prop.maxThreadsPerBlock < threads)
        fail("device properties: warpSize != 32 or the tile does not fit");
    CK(cudaFuncSetAttribute(body_forces, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, body_forces, threads, smem));
    if (per_sm < 1)
        fail("occupancy calculator: no block of body_forces fits on an SM");

    Rng rng(seed);
    std::vector<float4> p(n), v(n);
    for (int i = 0; i < n; ++i) {
        p[i] = make_float4(rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(0.5f, 1.0f) / n);
        v[i] = make_float4(rng.uniform(-0.1f, 0.1f), rng.uniform(-0.1f, 0.1f), rng.uniform(-0.1f, 0.1f), 0.0f);
    }

    float4 *d_p, *d_v, *d_a;
    CK(cudaMalloc(&d_p, sizeof(float4) * n));
    CK(cudaMalloc(&d_v, sizeof(float4) * n));
    CK(cudaMalloc(&d_a, sizeof(float4) * n));
    CK(cudaMemcpy(d_p, p.data(), sizeof(float4) * n, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_v, v.data(), sizeof(float4) * n, cudaMemcpyHostToDevice));
    for (int s = 0; s < steps; ++s) {
        body_forces<<<n / threads, threads, smem>>>(d_p, d_a, n, eps2);
        CK_LAUNCH();
        integrate<<<n / threads, threads>>>(d_p, d_v, d_a, n, dt);
        CK_LAUNCH();
    }
    std::vector<float4> gp(n), gv(n);
    CK(cudaMemcpy(gp.data(), d_p, sizeof(float4) * n, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(gv.data(), d_v, sizeof(float4) * n, cudaMemcpyDeviceToHost));
    CK(cudaFree(d_p));
    CK(cudaFree(d_v));
    CK(cudaFree(d_a));

    // Host reference in double.
    std::vector<double> P(4 * n), V(3 * n), A(3 * n);
    for (int i = 0; i < n; ++i) {
        P[4 * i] = p[i].x, P[4 * i + 1] = p[i].y, P[4 * i + 2] = p[i].z, P[4 * i + 3] = p[i].w;
        V[3 * i] = v[i].x, V[3 * i + 1] = v[i].y, V[3 * i + 2] = v[i].z;
    }
    for (int s = 0; s < steps; ++s) {
        for (int i = 0; i < n; ++i) {
            double ax = 0, ay = 0, az = 0;
            for (int j = 0; j < n; ++j) {
                double dx = P[4 * j] - P[4 * i], dy = P[4 * j + 1] - P[4 * i + 1], dz = P[4 * j + 2] - P[4 * i + 2];
                double d2 = dx * dx + dy * dy + dz * dz + (double)eps2;
                double inv = 1.0 / std::sqrt(d2);
                double sc = P[4 * j + 3] * inv * inv * inv;
                ax += dx * sc, ay += dy * sc, az += dz * sc;
            }
            A[3 * i] = ax, A[3 * i + 1] = ay, A[3 * i + 2] = az;
        }
        for (int i = 0; i < n; ++i)
            for (int c = 0; c < 3; ++c) {
                V[3 * i + c] += A[3 * i + c] * (double)dt;
                P[4 * i + c] += V[3 * i + c] * (double)dt;
            }
    }
    std::vector<float> got(6 * n);
    std::vector<double> want(6 * n), tol(6 * n);
    for (int i = 0; i < n; ++i) {
        const float g[6] = {gp[i].x, gp[i].y, gp[i].z, gv[i].x, gv[i].y, gv[i].z};
        const double w[6] = {P[4 * i], P[4 * i + 1], P[4 * i + 2], V[3 * i], V[3 * i + 1], V[3 * i + 2]};
        for (int c = 0; c < 6; ++c) {
            got[6 * i + c] = g[c];
            want[6 * i + c] = w[c];
            tol[6 * i + c] = 1e-4 * (1.0 + std::fabs(w[c]));
        }
    }
    std::printf("nbody: %d bodies, %d steps\n", n, steps);
    return verdict(count_mismatches("pos/vel", got.data(), want.data(), tol.data(), 6L * n));
}
