// flops: FP32 FFMA throughput in the style of MaxFlops (Accel-Sim GPU microbenchmarks), our own code.
// Every thread runs a dependent chain r = fma(s1, s2, r), iters x 32 times, on two values it
// loads (s1 from x, s2 from y); the chain is 4-cycle latency bound per warp, so a full SM
// (32 warps = 8 per sub-core) is limited by issue and register-file read ports: each FFMA reads
// three registers. Grid (2) x block (1024): two SMs, each full.
// out[i] = the chain's result; the reference repeats it with f32::mul_add in the same order.
extern "C" __global__ void flops(const float* __restrict__ x, const float* __restrict__ y,
                                float* __restrict__ out, unsigned iters)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float s1 = x[i];
    float s2 = y[i];
    float r = 0.0f;
    for (unsigned j = 0; j < iters; ++j) {
#pragma unroll
        for (int k = 0; k < 32; ++k)
            r = fmaf(s1, s2, r);
    }
    out[i] = r;
}
