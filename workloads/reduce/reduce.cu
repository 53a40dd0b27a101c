// reduce: per-block sum in dynamic shared memory (blockDim.x floats, blockDim.x a power of two).
// out[blockIdx.x] = sum of in[blockIdx.x*blockDim.x .. +blockDim.x) (elements >= n count as 0).
// Tree order: for s = blockDim.x/2 .. 1: sdata[t] += sdata[t + s] for t < s, __syncthreads() each step.
extern "C" __global__ void reduce(const float* __restrict__ in, float* __restrict__ out, unsigned n)
{
    extern __shared__ float sdata[];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + t;
    sdata[t] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) sdata[t] += sdata[t + s];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = sdata[0];
}
