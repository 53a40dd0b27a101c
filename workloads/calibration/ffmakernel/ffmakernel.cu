// Calibration kernel (docs/validation.md, "Kernel launch on the H100 PCIe"), as measured by
// ../../../fixtures/hardware/h100-pcie/ (`ffmakernel`): each thread runs a chain of 20
// dependent FFMAs on one register, starting from constants, and stores the result only when
// it equals `never`, which the launch makes false, so the kernel has no memory traffic.
extern "C" __global__ void ffmakernel(float *out, float never)
{
    float x = 1.0f;
    const float y = 0.5f;
#pragma unroll
    for (int i = 0; i < 20; i++) {
        x = fmaf(x, 0.999f, y);
    }
    if (x == never) {
        out[threadIdx.x] = x;
    }
}
