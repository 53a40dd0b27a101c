// shfl_reduce: per-warp sum with __shfl_down_sync (offsets 16, 8, 4, 2, 1). Lane 0 of global warp w
// writes out[w]. Elements >= n count as 0. After the loop lane 0 holds
// (((v0 + v16) + (v8 + v24)) + ...) in the butterfly order the host reference reproduces.
extern "C" __global__ void shfl_reduce(const float* __restrict__ in, float* __restrict__ out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (i < n) ? in[i] : 0.0f;
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    if ((threadIdx.x & 31u) == 0) out[i / 32u] = v;
}
