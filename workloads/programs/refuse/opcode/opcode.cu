// refuse/opcode: one warp executes the PTX instruction `trap` (abort the kernel with an error).
//
// SASS at sm_75, sm_86 and sm_90 (ptxas 13.5): BPT.TRAP 0x1. On a GPU the launch fails with
// cudaErrorLaunchFailure ("unspecified launch failure"): the program checks for exactly that
// error and prints PASS. sassim does not model trap handlers: it must stop at the BPT.TRAP with an
// error naming the opcode, the kernel (trap_tile) and the PC, and exit non-zero.
// Why BPT.TRAP: it is legitimate (CUDA's own __trap()), the same opcode at all three
// architectures, needs no other unimplemented runtime call (unlike a texture fetch), and its
// semantics (the kernel's abort, the sticky context error) are not something a simulator gets in
// passing. (Until issue 17 this test executed HMMA.1688.F32, which the engine now implements.)
// Kernel: trap_tile (1 launch, 1 x 32): lanes write their index, then trap when the flag is set.
#include "check.h"

__global__ void trap_tile(int* out, int flag)
{
    out[threadIdx.x] = threadIdx.x;
    if (flag)
        asm volatile("trap;");
}

int main()
{
    int* d_out;
    CK(cudaMalloc(&d_out, sizeof(int) * 32));
    trap_tile<<<1, 32>>>(d_out, 1);
    CK_LAUNCH();
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaErrorLaunchFailure) {
        std::printf("FAIL expected cudaErrorLaunchFailure, got %s\n", cudaGetErrorString(e));
        return 1;
    }
    std::printf("PASS\n");
    return 0;
}
