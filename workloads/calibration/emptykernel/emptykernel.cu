// Calibration kernel (docs/validation.md, "Kernel launch on the H100 PCIe"): an empty body,
// as measured by ../../../fixtures/hardware/h100-pcie/ (`emptykernel`). Launched as
// <<<blocks, threads_per_block>>>, it times the GPU's kernel launch and thread-block dispatch.
extern "C" __global__ void emptykernel() {}
