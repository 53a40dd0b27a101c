// fault_oob: a kernel stores one element past the end of its buffer (an illegal address on a
// GPU: cudaErrorIllegalAddress at the next synchronisation, sticky for later calls). The
// program prints the codes it got and exits 0 if they are the documented ones.
// Arguments: fault_oob [N=1000]
#include "check.h"

__global__ void fill(float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) // off by one: thread n writes out[n]
        out[i] = (float)i;
}

int main(int argc, char** argv)
{
    const int n = (int)arg_int(argc, argv, 1, 1000, 1, 1 << 20, "N");
    float* d;
    // Round the allocation to the 256-byte granularity so the store lands beyond it.
    const size_t bytes = ((sizeof(float) * n + 255) / 256) * 256;
    CK(cudaMalloc(&d, bytes));
    const int total = (int)(bytes / sizeof(float));
    fill<<<(total + 128) / 128, 128>>>(d, total);
    cudaError_t e1 = cudaDeviceSynchronize();
    float x = 0;
    cudaError_t e2 = cudaMemcpy(&x, d, sizeof(x), cudaMemcpyDeviceToHost); // sticky: still reported
    std::printf("kernel: %s; later call: %s\n", cudaGetErrorName(e1), cudaGetErrorName(e2));
    return (e1 == cudaErrorIllegalAddress && e2 == cudaErrorIllegalAddress) ? 0 : 1;
}
