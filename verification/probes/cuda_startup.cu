// Times the parts of a CUDA back end's start-up (driver, context, stream, cuBLAS handle, first calls) in a
// process of its own: what `blockres run`'s "output checks and the backend" start-up part is made of. Not part
// of the build; verification/issue29_gpu.sh's kprof mode compiles it with nvcc on the GPU machine.
#include <chrono>
#include <cstdio>
#include <cublas_v2.h>
#include <cuda_runtime.h>
using C = std::chrono::steady_clock;
static double ms(C::time_point a) { return std::chrono::duration<double, std::milli>(C::now() - a).count(); }
int main()
{
  auto t = C::now(); int n = 0; cudaGetDeviceCount(&n); printf("cudaGetDeviceCount %.1f ms\n", ms(t));
  t = C::now(); cudaSetDevice(0); printf("cudaSetDevice %.1f ms\n", ms(t));
  t = C::now(); cudaFree(0); printf("cudaFree(0) (context) %.1f ms\n", ms(t));
  t = C::now(); cudaDeviceProp p{}; cudaGetDeviceProperties(&p, 0); printf("cudaGetDeviceProperties %.1f ms\n", ms(t));
  t = C::now(); cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); printf("stream %.1f ms\n", ms(t));
  t = C::now(); cublasHandle_t h; cublasCreate(&h); printf("cublasCreate %.1f ms\n", ms(t));
  t = C::now(); void* d; cudaMalloc(&d, 1 << 20); printf("cudaMalloc 1 MB %.1f ms\n", ms(t));
  t = C::now(); double* v; cudaMalloc(&v, 8 * 1000); double r = 0; cublasSetStream(h, s);
  cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST); cublasDnrm2(h, 1000, v, 1, &r); cudaStreamSynchronize(s);
  printf("first cublasDnrm2 %.1f ms\n", ms(t));
  t = C::now(); cublasDnrm2(h, 1000, v, 1, &r); cudaStreamSynchronize(s); printf("second cublasDnrm2 %.3f ms\n", ms(t));
  t = C::now(); for (int i = 0; i < 100; ++i) { void* q; cudaMalloc(&q, 1 << 16); cudaFree(q); }
  printf("cudaMalloc+cudaFree 64 KB: %.1f us each\n", ms(t) * 10);
  return 0;
}
