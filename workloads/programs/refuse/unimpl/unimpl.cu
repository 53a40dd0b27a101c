// refuse/unimpl: reads a 2-D float image through a texture object backed by a CUDA array.
//
// Runtime calls in order: cudaMallocArray, cudaMemcpy2DToArray, cudaCreateTextureObject, a
// launch, cudaDestroyTextureObject, cudaFreeArray. On a GPU it prints PASS. A simulator
// runtime without CUDA arrays and textures must fail at the first of them, cudaMallocArray,
// with an error naming the call (never report success while doing nothing); the CK macro then
// prints "FAIL ... cudaMallocArray(...): <error string>" and exits 1.
// Kernel: scale_tex (1 launch, (2, 2) x (16, 16)): out[y][x] = 2 tex2D(x + 0.5, y + 0.5),
// SASS TEX.SCR.LL (sm_75/86) / TEX.LL (sm_90).
#include "check.h"

#include <vector>

__global__ void scale_tex(cudaTextureObject_t tex, float* out, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h)
        out[y * w + x] = 2.0f * tex2D<float>(tex, x + 0.5f, y + 0.5f);
}

int main()
{
    const int w = 32, h = 20;
    std::vector<float> img(w * h), out(w * h), want(w * h);
    for (int i = 0; i < w * h; ++i) {
        img[i] = (float)(i % 37) - 18.0f;
        want[i] = 2.0f * img[i];
    }
    cudaChannelFormatDesc desc = {}; // filled by hand: cudaCreateChannelDesc would be a runtime call
    desc.x = 32;
    desc.f = cudaChannelFormatKindFloat;
    cudaArray_t arr;
    CK(cudaMallocArray(&arr, &desc, w, h));
    CK(cudaMemcpy2DToArray(arr, 0, 0, img.data(), sizeof(float) * w, sizeof(float) * w, h, cudaMemcpyHostToDevice));
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    cudaTextureDesc td = {};
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModePoint;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 0;
    cudaTextureObject_t tex;
    CK(cudaCreateTextureObject(&tex, &res, &td, nullptr));
    float* d_out;
    CK(cudaMalloc(&d_out, sizeof(float) * w * h));
    scale_tex<<<dim3(2, 2), dim3(16, 16)>>>(tex, d_out, w, h);
    CK_LAUNCH();
    CK(cudaMemcpy(out.data(), d_out, sizeof(float) * w * h, cudaMemcpyDeviceToHost));
    CK(cudaDestroyTextureObject(tex));
    CK(cudaFreeArray(arr));
    CK(cudaFree(d_out));
    return verdict(count_exact_mismatches("out", out.data(), want.data(), w * h));
}
