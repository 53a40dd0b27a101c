// divergent: a data-dependent loop (each lane runs in[i] % 32 iterations) followed by an if/else
// on the result, so lanes of one warp diverge twice.
//   acc = i; for k in 0 .. in[i] % 32: acc = acc * 1664525 + 1013904223 + k   (mod 2^32)
//   if (acc & 1) out[i] = (acc ^ in[i]) * 3; else { out[i] = (acc >> 3) + i; alt[i] += 1 }
extern "C" __global__ void divergent(const unsigned* __restrict__ in, unsigned* __restrict__ out,
                                     unsigned* __restrict__ alt, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned x = in[i];
    unsigned trips = x % 32u;
    unsigned acc = i;
    for (unsigned k = 0; k < trips; ++k)
        acc = acc * 1664525u + 1013904223u + k;
    if (acc & 1u) {
        out[i] = (acc ^ x) * 3u;
    } else {
        out[i] = (acc >> 3) + i;
        alt[i] += 1u;
    }
}
