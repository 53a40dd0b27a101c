// refuse/opcode: one warp multiplies two fp16 tiles on the tensor cores with the PTX
// instruction mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 (available from sm_75 on).
//
// SASS at sm_75, sm_86 and sm_90 (ptxas 13.5): HMMA.1688.F32. On a GPU the program prints
// PASS. A simulator without tensor-core instructions must stop at the HMMA with an error
// naming the opcode, the kernel (mma_tile) and the PC, and exit non-zero.
// Why HMMA: it is a legitimate, widely used instruction that passes on real hardware at all
// three architectures, it is the same opcode at all three, it needs no other unimplemented
// runtime call (unlike a texture fetch), and it is not a simple ALU operation that a simulator
// would add in passing (unlike IDP.4A or BAR.RED.POPC). brkpt/trap compile to BPT.TRAP, which a
// simulator needs for device assert anyway; pmevent compiles to PMTRIG (a no-op).
// Kernel: mma_tile (1 launch, 1 x 32). A (16x8) is all 1.0, B (8x8) all 2.0, C = 0, so every
// element of D is 8 x 1 x 2 = 16 whatever the fragment layout.
#include "check.h"

#include <vector>

__global__ void mma_tile(const unsigned* __restrict__ a, const unsigned* __restrict__ b, float* __restrict__ d)
{
    unsigned lane = threadIdx.x & 31;
    float d0 = 0.0f, d1 = 0.0f, d2 = 0.0f, d3 = 0.0f;
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
                 "{%0, %1, %2, %3};"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                 : "r"(a[2 * lane]), "r"(a[2 * lane + 1]), "r"(b[lane]));
    d[4 * lane] = d0;
    d[4 * lane + 1] = d1;
    d[4 * lane + 2] = d2;
    d[4 * lane + 3] = d3;
}

int main()
{
    // Two fp16 values per 32-bit register: 1.0 = 0x3c00, 2.0 = 0x4000.
    std::vector<unsigned> a(64, 0x3c003c00u), b(32, 0x40004000u);
    std::vector<float> d(128), want(128, 16.0f);
    unsigned *d_a, *d_b;
    float* d_d;
    CK(cudaMalloc(&d_a, sizeof(unsigned) * a.size()));
    CK(cudaMalloc(&d_b, sizeof(unsigned) * b.size()));
    CK(cudaMalloc(&d_d, sizeof(float) * d.size()));
    CK(cudaMemcpy(d_a, a.data(), sizeof(unsigned) * a.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_b, b.data(), sizeof(unsigned) * b.size(), cudaMemcpyHostToDevice));
    mma_tile<<<1, 32>>>(d_a, d_b, d_d);
    CK_LAUNCH();
    CK(cudaMemcpy(d.data(), d_d, sizeof(float) * d.size(), cudaMemcpyDeviceToHost));
    CK(cudaFree(d_a));
    CK(cudaFree(d_b));
    CK(cudaFree(d_d));
    return verdict(count_exact_mismatches("d", d.data(), want.data(), (long)d.size()));
}
