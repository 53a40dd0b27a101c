// divsqrt: IEEE FP32 division / square root / reciprocal, integer and floating-point
// conversions, bit-manipulation intrinsics and warp-wide intrinsics, all checked bit-exactly.
//
// Kernels:
//   fp32_ops    - a/b, __fdiv_rn(b, a), sqrtf(a), __frcp_rn(b) under default flags (IEEE round to
//                 nearest: FCHK / MUFU.RCP / MUFU.RSQ fast paths and the CALL.REL slow-path
//                 subroutines for denormals, overflow and special values)           (1 launch)
//   conversions - char/short/unsigned char/unsigned short truncations, int<->float, float<->double,
//                 float->half->float (PTX cvt.rn.f16.f32), double->long long, unsigned->double, round-toward-zero
//                 int->float (I2F/F2I/F2F/I2I/PRMT/SGXT variants)                    (1 launch)
//   bitops      - __popc, __clz, __brev, __ffs, __clzll, __byte_perm, __funnelshift_l, __umulhi (1 launch)
//   warp_ops    - __ballot/__all/__any_sync, __shfl(_up/_down/_xor)_sync incl. width 8/16,
//                 __match_any_sync, __reduce_{add,min,max,and,or,xor}_sync (REDUX on sm_80+; a
//                 shuffle loop on sm_75), and in a divergent branch __activemask, __match_all_sync,
//                 __reduce_add_sync and a broadcast over the active lanes only      (1 launch)
// Check: every output word against a host emulation, exactly (NaN results compared as NaN).
// Arguments: divsqrt [N=2048 [SEED=12]]   (N is rounded up to a multiple of 128)
#include "check.h"

#include <climits>

#include <vector>

#define CONV_WORDS 16
#define BIT_WORDS 8
#define WARP_WORDS 18
#define FULL 0xffffffffu

__global__ void fp32_ops(int n, const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = a[i], y = b[i];
    out[4 * i + 0] = x / y;
    out[4 * i + 1] = __fdiv_rn(y, x);
    out[4 * i + 2] = sqrtf(x);
    out[4 * i + 3] = __frcp_rn(y);
}

// float -> half (round to nearest even) -> float, as __float2half / __half2float do; written in
// PTX so that the program needs no cuda_fp16.h (and so no CCCL headers).
__device__ __forceinline__ float half_roundtrip(float f)
{
    unsigned short h;
    float r;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    asm("cvt.f32.f16 %0, %1;" : "=f"(r) : "h"(h));
    return r;
}

__global__ void conversions(int n, const int* __restrict__ iv, const float* __restrict__ fv,
                            const double* __restrict__ dv, unsigned* __restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int v = iv[i];
    float f = fv[i];
    double d = dv[i];
    unsigned* o = out + (size_t)CONV_WORDS * i;
    o[0] = (unsigned)(int)(signed char)v;
    o[1] = (unsigned)(unsigned short)v;
    o[2] = (unsigned)(int)(short)v;
    o[3] = __float_as_uint((float)v);
    o[4] = (unsigned)(int)f;
    o[5] = (unsigned)__float2int_rn(f);
    o[6] = __float_as_uint((float)d);
    o[7] = __float_as_uint((float)((double)f * d));
    o[8] = __float_as_uint(half_roundtrip(f * 1e-5f));
    o[9] = (unsigned)(unsigned char)(v >> 3);
    long long ll = (long long)(d * 1e6);
    o[10] = (unsigned)ll;
    o[11] = (unsigned)(ll >> 32);
    o[12] = __float_as_uint((float)(long long)v * 3.0f);
    double ud = (double)(unsigned)v;
    o[13] = (unsigned)__double_as_longlong(ud);
    o[14] = (unsigned)(__double_as_longlong(ud) >> 32);
    o[15] = __float_as_uint(__uint2float_rz((unsigned)v));
}

__global__ void bitops(int n, const unsigned* __restrict__ u, unsigned* __restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned x = u[i], y = u[(i + 1) % n];
    unsigned* o = out + (size_t)BIT_WORDS * i;
    o[0] = __popc(x);
    o[1] = __clz(x);
    o[2] = __brev(x);
    o[3] = __ffs(x);
    o[4] = __clzll(((unsigned long long)(x >> (y & 31)) << 32) | y);
    o[5] = __byte_perm(x, y, 0x5140 + (y & 0x0303)); // selector nibbles < 8
    o[6] = __funnelshift_l(x, y, y);
    o[7] = __umulhi(x, y);
}

// __reduce_*_sync exist from sm_80 on (REDUX); sm_75 gets a loop over the lanes in `mask`.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define RED_LOOP(init, op)                                                                                   \
    unsigned r = init;                                                                                      \
    for (unsigned mm = mask; mm; mm &= mm - 1) {                                                             \
        unsigned w = __shfl_sync(mask, v, __ffs(mm) - 1);                                                   \
        r = op;                                                                                             \
    }                                                                                                       \
    return r;
__device__ unsigned red_add(unsigned mask, unsigned v) { RED_LOOP(0u, r + w) }
__device__ unsigned red_min(unsigned mask, unsigned v) { RED_LOOP(0xffffffffu, min(r, w)) }
__device__ int red_max(unsigned mask, int v)
{
    int r = INT_MIN;
    for (unsigned mm = mask; mm; mm &= mm - 1)
        r = max(r, __shfl_sync(mask, v, __ffs(mm) - 1));
    return r;
}
__device__ unsigned red_and(unsigned mask, unsigned v) { RED_LOOP(0xffffffffu, r & w) }
__device__ unsigned red_or(unsigned mask, unsigned v) { RED_LOOP(0u, r | w) }
__device__ unsigned red_xor(unsigned mask, unsigned v) { RED_LOOP(0u, r ^ w) }
#else
__device__ unsigned red_add(unsigned mask, unsigned v) { return __reduce_add_sync(mask, v); }
__device__ unsigned red_min(unsigned mask, unsigned v) { return __reduce_min_sync(mask, v); }
__device__ int red_max(unsigned mask, int v) { return __reduce_max_sync(mask, v); }
__device__ unsigned red_and(unsigned mask, unsigned v) { return __reduce_and_sync(mask, v); }
__device__ unsigned red_or(unsigned mask, unsigned v) { return __reduce_or_sync(mask, v); }
__device__ unsigned red_xor(unsigned mask, unsigned v) { return __reduce_xor_sync(mask, v); }
#endif

// Launched with whole warps only (n a multiple of 32).
__global__ void warp_ops(const unsigned* __restrict__ u, unsigned* __restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned lane = threadIdx.x & 31;
    unsigned v = u[i];
    unsigned* o = out + (size_t)WARP_WORDS * i;
    o[0] = __ballot_sync(FULL, v & 1);
    o[1] = __all_sync(FULL, v > 0x10000000u) ? 1u : 0u;
    o[2] = __any_sync(FULL, v < 0x01000000u) ? 1u : 0u;
    o[3] = __shfl_sync(FULL, v, (lane * 7 + 3) & 31);
    o[4] = __shfl_up_sync(FULL, v, 3);
    o[5] = __shfl_down_sync(FULL, v, 5);
    o[6] = __shfl_xor_sync(FULL, v, 9);
    o[7] = __match_any_sync(FULL, v & 7);
    o[8] = red_add(FULL, v & 0xffff);
    o[9] = red_min(FULL, v);
    o[10] = (unsigned)red_max(FULL, (int)v);
    o[11] = red_and(FULL, v | 0x0f0f0f0fu) ^ red_or(FULL, v & 0x00ff00ffu) ^ red_xor(FULL, v);
    o[12] = __shfl_sync(FULL, v, 2, 8);
    o[13] = __shfl_down_sync(FULL, v, 3, 16);
    if (lane % 3 != 0) { // lanes 1, 2, 4, 5, 7, ...: 21 active lanes
        unsigned m = __activemask();
        int pred = 0;
        o[14] = m;
        o[15] = red_add(m, v >> 8);
        o[16] = __match_all_sync(m, v >> 31, &pred) | (unsigned)(pred != 0); // bit 0: lane 0 is inactive
        o[17] = __shfl_sync(m, v, 4); // lane 4 is active
    } else {
        o[14] = o[15] = o[16] = o[17] = 0xdeadbeefu;
    }
}

// ---------------------------------------------------------------- host emulation
static uint32_t fbits(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}
static uint64_t dbits(double d)
{
    uint64_t u;
    std::memcpy(&u, &d, 8);
    return u;
}

// float -> IEEE half (round to nearest even, overflow to infinity) -> float; no NaN input.
static float half_round(float f)
{
    double a = std::fabs((double)f);
    if (a == 0.0 || std::isinf(a))
        return f;
    int e;
    std::frexp(a, &e);                          // a = m 2^e, m in [0.5, 1)
    int ulp_exp = (e - 1 < -14 ? -14 : e - 1) - 10; // half: 10 fraction bits, min normal 2^-14
    double q = std::nearbyint(std::ldexp(a, -ulp_exp)); // round half to even (default mode)
    double r = std::ldexp(q, ulp_exp);
    if (r > 65504.0)
        r = INFINITY;
    return (float)(f < 0 ? -r : r);
}

static unsigned uint2float_rz_bits(unsigned v)
{
    if (v < (1u << 24))
        return fbits((float)v);
    int len = 32 - __builtin_clz(v);
    unsigned kept = v & ~((1u << (len - 24)) - 1); // drop the bits a 24-bit significand cannot hold
    return fbits((float)kept);                     // exact
}

static void host_conversions(int v, float f, double d, unsigned* o)
{
    o[0] = (unsigned)(int)(signed char)v;
    o[1] = (unsigned)(unsigned short)v;
    o[2] = (unsigned)(int)(short)v;
    o[3] = fbits((float)v);
    o[4] = (unsigned)(int)f;
    o[5] = (unsigned)(int)std::nearbyint(f);
    o[6] = fbits((float)d);
    o[7] = fbits((float)((double)f * d));
    o[8] = fbits(half_round(f * 1e-5f));
    o[9] = (unsigned)(unsigned char)(v >> 3);
    long long ll = (long long)(d * 1e6);
    o[10] = (unsigned)ll;
    o[11] = (unsigned)((unsigned long long)ll >> 32);
    o[12] = fbits((float)(long long)v * 3.0f);
    double ud = (double)(unsigned)v;
    o[13] = (unsigned)dbits(ud);
    o[14] = (unsigned)(dbits(ud) >> 32);
    o[15] = uint2float_rz_bits((unsigned)v);
}

static unsigned byte_perm(unsigned x, unsigned y, unsigned s)
{
    unsigned long long xy = ((unsigned long long)y << 32) | x;
    unsigned r = 0;
    for (int k = 0; k < 4; ++k)
        r |= (unsigned)((xy >> (8 * ((s >> (4 * k)) & 7))) & 0xff) << (8 * k);
    return r;
}

static void host_bitops(unsigned x, unsigned y, unsigned* o)
{
    o[0] = (unsigned)__builtin_popcount(x);
    o[1] = x ? (unsigned)__builtin_clz(x) : 32u;
    unsigned r = 0;
    for (int k = 0; k < 32; ++k)
        r |= ((x >> k) & 1u) << (31 - k);
    o[2] = r;
    o[3] = x ? (unsigned)__builtin_ctz(x) + 1 : 0u;
    unsigned long long w = ((unsigned long long)(x >> (y & 31)) << 32) | y;
    o[4] = w ? (unsigned)__builtin_clzll(w) : 64u;
    o[5] = byte_perm(x, y, 0x5140 + (y & 0x0303));
    unsigned s = y & 31;
    o[6] = s ? (y << s) | (x >> (32 - s)) : y; // __funnelshift_l(lo=x, hi=y, s): high word of (y:x) << s
    o[7] = (unsigned)(((unsigned long long)x * y) >> 32);
}

static void host_warp(const unsigned* v, unsigned* out)
{
    unsigned ballot = 0, allv = 1, anyv = 0, add = 0, mn = 0xffffffffu, a = 0xffffffffu, orr = 0, x = 0;
    int mx = INT_MIN;
    for (int l = 0; l < 32; ++l) {
        ballot |= (v[l] & 1u) << l;
        allv &= v[l] > 0x10000000u;
        anyv |= v[l] < 0x01000000u;
        add += v[l] & 0xffff;
        mn = v[l] < mn ? v[l] : mn;
        mx = (int)v[l] > mx ? (int)v[l] : mx;
        a &= v[l] | 0x0f0f0f0fu;
        orr |= v[l] & 0x00ff00ffu;
        x ^= v[l];
    }
    unsigned act = 0, dadd = 0;
    for (int l = 0; l < 32; ++l)
        if (l % 3 != 0) {
            act |= 1u << l;
            dadd += v[l] >> 8;
        }
    bool same = true;
    for (int l = 0; l < 32; ++l)
        if ((act >> l & 1) && (v[l] >> 31) != (v[1] >> 31))
            same = false;
    for (int l = 0; l < 32; ++l) {
        unsigned* o = out + (size_t)WARP_WORDS * l;
        o[0] = ballot;
        o[1] = allv;
        o[2] = anyv;
        o[3] = v[(l * 7 + 3) & 31];
        o[4] = l >= 3 ? v[l - 3] : v[l];
        o[5] = l + 5 < 32 ? v[l + 5] : v[l];
        o[6] = v[l ^ 9];
        unsigned m = 0;
        for (int k = 0; k < 32; ++k)
            m |= (unsigned)((v[k] & 7) == (v[l] & 7)) << k;
        o[7] = m;
        o[8] = add;
        o[9] = mn;
        o[10] = (unsigned)mx;
        o[11] = a ^ orr ^ x;
        o[12] = v[(l & ~7) + 2];
        o[13] = (l & 15) + 3 < 16 ? v[l + 3] : v[l];
        if (l % 3 != 0) {
            o[14] = act;
            o[15] = dadd;
            o[16] = same ? act | 1u : 0u; // the mask if all values are equal, else 0; pred in bit 0
            o[17] = v[4];
        } else {
            o[14] = o[15] = o[16] = o[17] = 0xdeadbeefu;
        }
    }
}

// FP32 operands: mostly ordinary numbers with exponents in [-64, 64), every 8th one special.
static float operand(Rng& rng, int i)
{
    static const float special[] = {1.4e-45f, -3.0e-39f, 1.0e-40f, 1.17549435e-38f, 3.0e38f, -2.0e38f, 0.0f,
                                    -0.0f,    INFINITY,  -INFINITY, NAN,            1.0f,    4.0f,     -1.0f};
    if (i % 8 == 7)
        return special[rng.below(sizeof(special) / sizeof(special[0]))];
    float m = rng.uniform(1.0f, 2.0f);
    return (rng.below(4) ? m : -m) * std::ldexp(1.0f, (int)rng.below(128) - 64);
}

static long compare_words(const char* what, const unsigned* got, const unsigned* want, long n, int words)
{
    long bad = 0;
    for (long k = 0; k < n; ++k)
        if (got[k] != want[k]) {
            if (bad < 5)
                std::printf("mismatch %s[%ld] word %ld: got 0x%08x want 0x%08x\n", what, k / words, k % words, got[k],
                            want[k]);
            ++bad;
        }
    return bad;
}

int main(int argc, char** argv)
{
    int n = (int)arg_int(argc, argv, 1, 2048, 1, 1 << 22, "N");
    const uint64_t seed = (uint64_t)arg_int(argc, argv, 2, 12, 0, 1L << 40, "SEED");
    n = (n + 127) / 128 * 128;

    Rng rng(seed);
    std::vector<float> a(n), b(n), fv(n), fout(4 * n);
    std::vector<int> iv(n);
    std::vector<double> dv(n);
    std::vector<unsigned> u(n), conv((size_t)CONV_WORDS * n), bits((size_t)BIT_WORDS * n),
        warp((size_t)WARP_WORDS * n);
    for (int i = 0; i < n; ++i) {
        a[i] = operand(rng, i);
        b[i] = operand(rng, i + 5);
        iv[i] = (int)rng.u32();
        fv[i] = rng.uniform(-2.0e9f, 2.0e9f) * (i % 4 == 0 ? 1.0f : 1e-4f) + (float)(i % 7) * 0.5f;
        dv[i] = rng.uniform_d(-1000.0, 1000.0);
        unsigned w = rng.u32();
        u[i] = (i % 16 == 5) ? 0u : (w >> rng.below(32)); // zeros and all bit lengths
    }

    float *d_a, *d_b, *d_fv, *d_fout;
    int* d_iv;
    double* d_dv;
    unsigned *d_u, *d_conv, *d_bits, *d_warp;
    CK(cudaMalloc(&d_a, sizeof(float) * n));
    CK(cudaMalloc(&d_b, sizeof(float) * n));
    CK(cudaMalloc(&d_fv, sizeof(float) * n));
    CK(cudaMalloc(&d_fout, sizeof(float) * 4 * n));
    CK(cudaMalloc(&d_iv, sizeof(int) * n));
    CK(cudaMalloc(&d_dv, sizeof(double) * n));
    CK(cudaMalloc(&d_u, sizeof(unsigned) * n));
    CK(cudaMalloc(&d_conv, sizeof(unsigned) * conv.size()));
    CK(cudaMalloc(&d_bits, sizeof(unsigned) * bits.size()));
    CK(cudaMalloc(&d_warp, sizeof(unsigned) * warp.size()));
    CK(cudaMemcpy(d_a, a.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_b, b.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_fv, fv.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_iv, iv.data(), sizeof(int) * n, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_dv, dv.data(), sizeof(double) * n, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_u, u.data(), sizeof(unsigned) * n, cudaMemcpyHostToDevice));

    fp32_ops<<<n / 128, 128>>>(n, d_a, d_b, d_fout);
    CK_LAUNCH();
    conversions<<<n / 128, 128>>>(n, d_iv, d_fv, d_dv, d_conv);
    CK_LAUNCH();
    bitops<<<n / 128, 128>>>(n, d_u, d_bits);
    CK_LAUNCH();
    warp_ops<<<n / 128, 128>>>(d_u, d_warp);
    CK_LAUNCH();
    CK(cudaMemcpy(fout.data(), d_fout, sizeof(float) * 4 * n, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(conv.data(), d_conv, sizeof(unsigned) * conv.size(), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(bits.data(), d_bits, sizeof(unsigned) * bits.size(), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(warp.data(), d_warp, sizeof(unsigned) * warp.size(), cudaMemcpyDeviceToHost));
    for (void* p : {(void*)d_a, (void*)d_b, (void*)d_fv, (void*)d_fout, (void*)d_iv, (void*)d_dv, (void*)d_u,
                    (void*)d_conv, (void*)d_bits, (void*)d_warp})
        CK(cudaFree(p));

    long bad = 0;
    for (int i = 0; i < n; ++i) {
        const float want[4] = {a[i] / b[i], b[i] / a[i], std::sqrt(a[i]), 1.0f / b[i]};
        for (int k = 0; k < 4; ++k) {
            float g = fout[4 * i + k];
            bool ok = std::isnan(want[k]) ? std::isnan(g) : fbits(g) == fbits(want[k]);
            if (!ok) {
                if (bad < 5)
                    std::printf("mismatch fp32_ops[%d] op %d (a=%.9g b=%.9g): got %.9g (0x%08x) want %.9g (0x%08x)\n",
                                i, k, a[i], b[i], g, fbits(g), want[k], fbits(want[k]));
                ++bad;
            }
        }
    }
    std::vector<unsigned> want_conv(conv.size()), want_bits(bits.size()), want_warp(warp.size());
    for (int i = 0; i < n; ++i) {
        host_conversions(iv[i], fv[i], dv[i], &want_conv[(size_t)CONV_WORDS * i]);
        host_bitops(u[i], u[(i + 1) % n], &want_bits[(size_t)BIT_WORDS * i]);
    }
    for (int w = 0; w < n / 32; ++w)
        host_warp(&u[32 * w], &want_warp[(size_t)WARP_WORDS * 32 * w]);
    bad += compare_words("conversions", conv.data(), want_conv.data(), (long)conv.size(), CONV_WORDS);
    bad += compare_words("bitops", bits.data(), want_bits.data(), (long)bits.size(), BIT_WORDS);
    bad += compare_words("warp_ops", warp.data(), want_warp.data(), (long)warp.size(), WARP_WORDS);
    std::printf("divsqrt: %d elements\n", n);
    return verdict(bad);
}
