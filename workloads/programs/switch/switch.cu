// switch: a tiny bytecode interpreter; every thread runs its own random program of L
// instructions (16 opcodes on two registers acc, x) - dispatch is data-dependent and divergent.
//
// Kernels:
//   interp_switch - dispatch with a C++ switch (ptxas 13.5 emits a compare-and-branch tree: NVVM
//                   does not emit jump tables for switches)                         (1 launch)
//   interp_jump   - the same interpreter dispatching through a PTX jump table
//                   (.branchtargets + brx.idx): ptxas emits LDC from constant bank 2
//                   (the table) + BRX, one indirect branch per instruction, divergent targets
//                   within a warp                                                   (1 launch)
// Check: both kernels' final (acc, x) against a host interpreter, exactly.
// Arguments: switch [THREADS=1024 [L=12 [SEED=13]]]
// Exercises: BRX with a constant bank other than 0, divergent indirect branches, BSSY/BSYNC
// around a switch tree, POPC/FLO/BREV/SHF.L.W/IMAD in case bodies.
#include "check.h"

#include <vector>

// One interpreted instruction: low 4 bits opcode, bits 8..15 immediate k.
__host__ __device__ inline void step_cpp(unsigned op, unsigned k, unsigned& acc, unsigned& x)
{
    switch (op) {
    case 0: acc = acc + k; break;
    case 1: acc = acc - x; break;
    case 2: acc = acc * (k | 1u); break;
    case 3: acc = acc ^ x; break;
    case 4: {
        unsigned s = k & 31u;
        acc = s ? (acc << s) | (acc >> (32 - s)) : acc;
        break;
    }
    case 5: x = acc; break;
    case 6: acc = acc + x * k; break;
    case 7: acc = acc < x ? acc : x; break;
    case 8: acc = acc > x ? acc : x; break;
#ifdef __CUDA_ARCH__
    case 9: acc = (unsigned)__popc(acc) + x; break;
    case 10: acc = __brev(acc); break;
    case 14: acc = acc + (unsigned)__clz(acc); break;
#else
    case 9: acc = (unsigned)__builtin_popcount(acc) + x; break;
    case 10: {
        unsigned r = 0;
        for (int b = 0; b < 32; ++b)
            r |= ((acc >> b) & 1u) << (31 - b);
        acc = r;
        break;
    }
    case 14: acc = acc + (acc ? (unsigned)__builtin_clz(acc) : 32u); break;
#endif
    case 11: acc = ~acc ^ k; break;
    case 12: x = x + (acc >> 3); break;
    case 13: acc = acc >> (k & 31u); break;
    default: acc = acc * x + 1u; break; // 15
    }
}

__global__ void interp_switch(const unsigned short* __restrict__ prog, const unsigned* __restrict__ init,
                              unsigned* __restrict__ out, int n, int len)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned acc = init[i], x = (unsigned)i * 2654435761u;
    const unsigned short* p = prog + (size_t)i * len;
    for (int s = 0; s < len; ++s) {
        unsigned ins = p[s];
        step_cpp(ins & 15u, ins >> 8, acc, x);
    }
    out[2 * i] = acc;
    out[2 * i + 1] = x;
}

// The same instruction set behind a PTX jump table (brx.idx): labels are local to the { } scope.
__device__ __forceinline__ void step_jump(unsigned op, unsigned k, unsigned& acc, unsigned& x)
{
    asm("{\n\t"
        ".reg .u32 t0;\n\t"
        "ts: .branchtargets L0, L1, L2, L3, L4, L5, L6, L7, L8, L9, L10, L11, L12, L13, L14, L15;\n\t"
        "brx.idx %2, ts;\n"
        "L0:  add.u32 %0, %0, %3;\n\t bra.uni Ldone;\n"
        "L1:  sub.u32 %0, %0, %1;\n\t bra.uni Ldone;\n"
        "L2:  or.b32 t0, %3, 1;\n\t mul.lo.u32 %0, %0, t0;\n\t bra.uni Ldone;\n"
        "L3:  xor.b32 %0, %0, %1;\n\t bra.uni Ldone;\n"
        "L4:  and.b32 t0, %3, 31;\n\t shf.l.wrap.b32 %0, %0, %0, t0;\n\t bra.uni Ldone;\n"
        "L5:  mov.u32 %1, %0;\n\t bra.uni Ldone;\n"
        "L6:  mad.lo.u32 %0, %1, %3, %0;\n\t bra.uni Ldone;\n"
        "L7:  min.u32 %0, %0, %1;\n\t bra.uni Ldone;\n"
        "L8:  max.u32 %0, %0, %1;\n\t bra.uni Ldone;\n"
        "L9:  popc.b32 t0, %0;\n\t add.u32 %0, t0, %1;\n\t bra.uni Ldone;\n"
        "L10: brev.b32 %0, %0;\n\t bra.uni Ldone;\n"
        "L11: not.b32 t0, %0;\n\t xor.b32 %0, t0, %3;\n\t bra.uni Ldone;\n"
        "L12: shr.u32 t0, %0, 3;\n\t add.u32 %1, %1, t0;\n\t bra.uni Ldone;\n"
        "L13: and.b32 t0, %3, 31;\n\t shr.u32 %0, %0, t0;\n\t bra.uni Ldone;\n"
        "L14: clz.b32 t0, %0;\n\t add.u32 %0, %0, t0;\n\t bra.uni Ldone;\n"
        "L15: mad.lo.u32 %0, %0, %1, 1;\n"
        "Ldone:\n\t}"
        : "+r"(acc), "+r"(x)
        : "r"(op), "r"(k));
}

__global__ void interp_jump(const unsigned short* __restrict__ prog, const unsigned* __restrict__ init,
                            unsigned* __restrict__ out, int n, int len)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned acc = init[i], x = (unsigned)i * 2654435761u;
    const unsigned short* p = prog + (size_t)i * len;
    for (int s = 0; s < len; ++s) {
        unsigned ins = p[s];
        step_jump(ins & 15u, ins >> 8, acc, x);
    }
    out[2 * i] = acc;
    out[2 * i + 1] = x;
}

int main(int argc, char** argv)
{
    const int n = (int)arg_int(argc, argv, 1, 1024, 1, 1 << 24, "THREADS");
    const int len = (int)arg_int(argc, argv, 2, 12, 1, 4096, "L");
    const uint64_t seed = (uint64_t)arg_int(argc, argv, 3, 13, 0, 1L << 40, "SEED");

    Rng rng(seed);
    std::vector<unsigned short> prog((size_t)n * len);
    std::vector<unsigned> init(n), ref(2 * n), o1(2 * n), o2(2 * n);
    for (auto& ins : prog)
        ins = (unsigned short)(rng.below(16) | (rng.below(256) << 8));
    for (auto& v : init)
        v = rng.u32();
    for (int i = 0; i < n; ++i) {
        unsigned acc = init[i], x = (unsigned)i * 2654435761u;
        for (int s = 0; s < len; ++s) {
            unsigned ins = prog[(size_t)i * len + s];
            step_cpp(ins & 15u, ins >> 8, acc, x);
        }
        ref[2 * i] = acc;
        ref[2 * i + 1] = x;
    }

    unsigned short* d_prog;
    unsigned *d_init, *d_o1, *d_o2;
    CK(cudaMalloc(&d_prog, sizeof(unsigned short) * prog.size()));
    CK(cudaMalloc(&d_init, sizeof(unsigned) * n));
    CK(cudaMalloc(&d_o1, sizeof(unsigned) * 2 * n));
    CK(cudaMalloc(&d_o2, sizeof(unsigned) * 2 * n));
    CK(cudaMemcpy(d_prog, prog.data(), sizeof(unsigned short) * prog.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_init, init.data(), sizeof(unsigned) * n, cudaMemcpyHostToDevice));
    const int threads = 128;
    interp_switch<<<(n + threads - 1) / threads, threads>>>(d_prog, d_init, d_o1, n, len);
    CK_LAUNCH();
    interp_jump<<<(n + threads - 1) / threads, threads>>>(d_prog, d_init, d_o2, n, len);
    CK_LAUNCH();
    CK(cudaMemcpy(o1.data(), d_o1, sizeof(unsigned) * 2 * n, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(o2.data(), d_o2, sizeof(unsigned) * 2 * n, cudaMemcpyDeviceToHost));
    CK(cudaFree(d_prog));
    CK(cudaFree(d_init));
    CK(cudaFree(d_o1));
    CK(cudaFree(d_o2));

    std::printf("switch: %d threads x %d instructions\n", n, len);
    long bad = count_exact_mismatches("interp_switch", o1.data(), ref.data(), 2L * n);
    bad += count_exact_mismatches("interp_jump", o2.data(), ref.data(), 2L * n);
    return verdict(bad);
}
