// Shared helpers of the sassim program suite (workloads/programs/): CUDA error checks, a
// deterministic random generator, argument parsing with range checks, and result comparison.
// Every program prints "PASS" and exits 0, or prints "FAIL ..." and exits 1 (2 for a bad argument).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <cuda_runtime.h>

// Any CUDA runtime error is a failure of the program: print the call and the error, exit 1.
#define CK(call)                                                                                 \
    do {                                                                                         \
        cudaError_t ck_err_ = (call);                                                            \
        if (ck_err_ != cudaSuccess) {                                                            \
            std::printf("FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #call,                       \
                        cudaGetErrorString(ck_err_));                                            \
            std::exit(1);                                                                        \
        }                                                                                        \
    } while (0)

// After every kernel launch: launch-configuration errors are reported by cudaGetLastError.
#define CK_LAUNCH() CK(cudaGetLastError())

// xorshift64*: small, fast, and the same sequence on every host.
struct Rng {
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed ? seed : 0x9E3779B97F4A7C15ull) {}
    uint64_t next()
    {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        return s * 0x2545F4914F6CDD1Dull;
    }
    uint32_t u32() { return (uint32_t)(next() >> 32); }
    // Uniform integer in [0, n), n > 0 (modulo bias is irrelevant here).
    uint32_t below(uint32_t n) { return u32() % n; }
    // Uniform float in [lo, hi) with 24 random bits (exactly representable).
    float uniform(float lo, float hi) { return lo + (hi - lo) * ((float)(u32() >> 8) * (1.0f / 16777216.0f)); }
    double uniform_d(double lo, double hi) { return lo + (hi - lo) * ((double)(next() >> 11) * (1.0 / 9007199254740992.0)); }
};

// Positional argument `idx` (argv[idx]) as an integer in [lo, hi]; `def` when absent.
static inline long arg_int(int argc, char** argv, int idx, long def, long lo, long hi, const char* name)
{
    if (idx >= argc)
        return def;
    char* end = nullptr;
    long v = std::strtol(argv[idx], &end, 10);
    if (end == argv[idx] || *end != '\0' || v < lo || v > hi) {
        std::printf("FAIL bad argument %s='%s' (want an integer in [%ld, %ld])\n", name, argv[idx], lo, hi);
        std::exit(2);
    }
    return v;
}

static inline void fail(const char* msg)
{
    std::printf("FAIL %s\n", msg);
    std::exit(1);
}

// Compares got[i] with ref[i]: |got - ref| <= tol[i] (tol given per element, >= 0). NaN never
// passes. Prints the first few mismatches; returns the number of mismatches.
template <typename T, typename R>
static inline long count_mismatches(const char* what, const T* got, const R* ref, const double* tol, long n)
{
    long bad = 0;
    for (long i = 0; i < n; ++i) {
        double g = (double)got[i], r = (double)ref[i];
        double d = std::fabs(g - r);
        if (!(d <= tol[i])) {
            if (bad < 5)
                std::printf("mismatch %s[%ld]: got %.9g want %.9g (tolerance %.3g)\n", what, i, g, r, tol[i]);
            ++bad;
        }
    }
    return bad;
}

// Exact comparison of integer arrays.
template <typename T>
static inline long count_exact_mismatches(const char* what, const T* got, const T* ref, long n)
{
    long bad = 0;
    for (long i = 0; i < n; ++i) {
        if (got[i] != ref[i]) {
            if (bad < 5) {
                if (std::is_floating_point<T>::value)
                    std::printf("mismatch %s[%ld]: got %.9g want %.9g\n", what, i, (double)got[i], (double)ref[i]);
                else
                    std::printf("mismatch %s[%ld]: got %lld want %lld\n", what, i, (long long)got[i],
                                (long long)ref[i]);
            }
            ++bad;
        }
    }
    return bad;
}

// Final verdict.
static inline int verdict(long bad)
{
    if (bad) {
        std::printf("FAIL %ld mismatches\n", bad);
        return 1;
    }
    std::printf("PASS\n");
    return 0;
}
