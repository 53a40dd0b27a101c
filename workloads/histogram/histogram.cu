// histogram: bins[data[i] % NBINS] += 1 for i < n.
// Privatized per block in shared memory (shared atomicAdd), then merged into the
// global bins with global atomicAdd. Grid-stride loop over the input.
#define NBINS 64
extern "C" __global__ void histogram(const unsigned* __restrict__ data, unsigned* bins, unsigned n)
{
    __shared__ unsigned local[NBINS];
    for (unsigned b = threadIdx.x; b < NBINS; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local[data[i] % NBINS], 1u);
    __syncthreads();
    for (unsigned b = threadIdx.x; b < NBINS; b += blockDim.x)
        if (local[b] != 0) atomicAdd(&bins[b], local[b]);
}
