// printf: device printf (vprintf) from one thread per launch, so the output order is fixed,
// with many conversion specifiers; a device assert that holds; printf's return value.
//
// Kernels:
//   work   - out[i] = 3 in[i] + round; assert(in[i] >= 0) in every thread (never fires); the
//            thread i == round * 37 % n prints two lines and stores printf's return values
//            (the number of arguments, 10 and 6)                     (ROUNDS launches, synchronised)
//   banner - one thread prints a line with a string argument, %c, %% and a double (1 launch)
// Expected stdout at the defaults (N=256, ROUNDS=3), before the final PASS:
//   banner: sassim printf test, 3 rounds, 100% ok, pi=3.14159
//   round 0: thread 0 in=0 out=0 hex=0x0 oct=0 neg=-1 big=1099511627776 f=0.500 e=2.500000e-01
//   round 0: g=0.125 s=[ok] c=A u=4294967295 w=[   7]
//   round 1: thread 37 in=37 out=112 hex=0x25 oct=45 neg=-38 big=1099511627813 f=19.000 e=9.500000e+00
//   round 1: g=4.75 s=[ok] c=B u=4294967258 w=[  44]
//   round 2: thread 74 in=74 out=224 hex=0x4a oct=112 neg=-75 big=1099511627850 f=37.500 e=1.875000e+01
//   round 2: g=9.375 s=[ok] c=C u=4294967221 w=[  81]
// Check (by the program): out of every round exact, printf return values 10 and 6 (the number of
// arguments after the format). The printed text itself is for the test harness to compare.
// Arguments: printf [N=256 [ROUNDS=3]]
// Exercises: the vprintf call (CALL.ABS.NOINC to vprintf, argument buffer on the stack: STL,
// local-to-generic address), __assertfail behind a never-taken branch, CALL/RET.
#include "check.h"

#include <cassert>
#include <vector>

__global__ void banner(int rounds)
{
    if (threadIdx.x == 0 && blockIdx.x == 0)
        printf("banner: %s, %d rounds, 100%% %c%c, pi=%.5f\n", "sassim printf test", rounds, 'o', 'k',
               3.14159265358979);
}

__global__ void work(const int* __restrict__ in, int* __restrict__ out, int* __restrict__ ret, int n, int round)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int v = in[i];
    assert(v >= 0);
    int o = 3 * v + round;
    out[i] = o;
    if (i == round * 37 % n) {
        float f = 0.5f * v + 0.5f;
        ret[2 * round] = printf("round %d: thread %d in=%d out=%d hex=0x%x oct=%o neg=%d big=%lld f=%.3f e=%e\n",
                                round, i, v, o, v, v, -v - 1, (1LL << 40) + v, f, f * 0.5f);
        ret[2 * round + 1] = printf("round %d: g=%g s=[%s] c=%c u=%u w=[%4d]\n", round, f * 0.25f, "ok",
                                    'A' + round, 4294967295u - (unsigned)v, v + 7);
    }
}

int main(int argc, char** argv)
{
    const int n = (int)arg_int(argc, argv, 1, 256, 1, 1 << 24, "N");
    const int rounds = (int)arg_int(argc, argv, 2, 3, 1, 26, "ROUNDS");

    std::vector<int> in(n), out(n), ret(2 * rounds);
    for (int i = 0; i < n; ++i)
        in[i] = i;
    int *d_in, *d_out, *d_ret;
    CK(cudaMalloc(&d_in, sizeof(int) * n));
    CK(cudaMalloc(&d_out, sizeof(int) * n));
    CK(cudaMalloc(&d_ret, sizeof(int) * 2 * rounds));
    CK(cudaMemcpy(d_in, in.data(), sizeof(int) * n, cudaMemcpyHostToDevice));
    CK(cudaMemset(d_ret, 0xff, sizeof(int) * 2 * rounds));

    std::fflush(stdout); // host and device output interleave in program order
    banner<<<1, 32>>>(rounds);
    CK_LAUNCH();
    CK(cudaDeviceSynchronize());
    long bad = 0;
    for (int r = 0; r < rounds; ++r) {
        work<<<(n + 127) / 128, 128>>>(d_in, d_out, d_ret, n, r);
        CK_LAUNCH();
        CK(cudaDeviceSynchronize()); // flushes this launch's printf output
        CK(cudaMemcpy(out.data(), d_out, sizeof(int) * n, cudaMemcpyDeviceToHost));
        std::vector<int> want(n);
        for (int i = 0; i < n; ++i)
            want[i] = 3 * in[i] + r;
        bad += count_exact_mismatches("out", out.data(), want.data(), n);
    }
    CK(cudaMemcpy(ret.data(), d_ret, sizeof(int) * 2 * rounds, cudaMemcpyDeviceToHost));
    CK(cudaFree(d_in));
    CK(cudaFree(d_out));
    CK(cudaFree(d_ret));
    for (int r = 0; r < rounds; ++r) {
        const int want[2] = {10, 6};
        bad += count_exact_mismatches("printf return value", &ret[2 * r], want, 2);
    }
    return verdict(bad);
}
