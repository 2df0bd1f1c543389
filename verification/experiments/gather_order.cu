// Measurement program (not part of the product; issue 31, session 48): read bandwidth of chunk gathers in three
// orders, to test whether visiting a batch's blocks out of memory order (a size class's selection) costs bandwidth
// (TLB reach, DRAM locality).
// Each warp reads chunks of C bytes (coalesced, 8 bytes a lane), grid-stride over the chunk list in its order.
// Build and run on a GPU machine: nvcc -O3 -arch=sm_90 -std=c++17 gather_order.cu -o gather_order && ./gather_order 2
// (argument: GB read). Results: verification/results/issue31_s48_2026-11-28.txt, section 1.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <random>
#include <cuda_runtime.h>

__global__ void gather(const double* __restrict__ a, const long long* __restrict__ order, long long nchunks,
                       int cd, double* __restrict__ out)
{
  const int lane = threadIdx.x & 31;
  const long long w0 = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32;
  const long long nw = (gridDim.x * (long long)blockDim.x) / 32;
  double s = 0.0;
  for (long long w = w0; w < nchunks; w += nw) {
    const long long c = order ? order[w] : w;
    const double* p = a + c * cd;
    for (int e = lane; e < cd; e += 32) s += p[e];
  }
  if (s == 12345.678) out[0] = s;
}

__global__ void copyk(const double* __restrict__ a, double* __restrict__ b, long long n)
{
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    b[i] = a[i];
}

int main(int argc, char** argv)
{
  const double gb = argc > 1 ? atof(argv[1]) : 2.0;
  const size_t bytes = size_t(gb * 1e9);
  double *a, *b, *out;
  cudaMalloc(&a, bytes);
  cudaMalloc(&b, bytes);
  cudaMalloc(&out, 8);
  cudaMemset(a, 0, bytes);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  auto timeit = [&](auto f) {
    f();
    cudaDeviceSynchronize();
    std::vector<float> t;
    for (int r = 0; r < 7; ++r) {
      cudaEventRecord(e0);
      f();
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
      float ms;
      cudaEventElapsedTime(&ms, e0, e1);
      t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[3];
  };
  const long long nd = bytes / 8;
  const float tc = timeit([&] { copyk<<<132 * 16, 256>>>(a, b, nd); });
  printf("%.2f GB: copy %.0f GB/s (read+write)\n", gb, 2.0 * bytes / tc / 1e6);
  const int sizes[] = {9, 16, 21, 32};
  for (int n : sizes) {
    const int cd = n * n;
    const long long nch = nd / cd;
    std::vector<long long> seq(nch), str(nch), rnd(nch);
    for (long long i = 0; i < nch; ++i) seq[i] = i;
    long long k = 0;
    for (int s = 0; s < 24; ++s)
      for (long long i = s; i < nch; i += 24) str[k++] = i;
    rnd = seq;
    std::shuffle(rnd.begin(), rnd.end(), std::mt19937_64(7));
    long long* d;
    cudaMalloc(&d, nch * 8);
    const char* names[] = {"sequential", "stride-24 classes", "random"};
    const std::vector<long long>* ords[] = {&seq, &str, &rnd};
    for (int o = 0; o < 3; ++o) {
      cudaMemcpy(d, ords[o]->data(), nch * 8, cudaMemcpyHostToDevice);
      const float t = timeit([&] { gather<<<132 * 16, 128>>>(a, d, nch, cd, out); });
      const double rb = double(nch) * cd * 8 + nch * 8.0;
      printf("  chunk %2dx%-2d (%5d B) %-18s read %6.0f GB/s = %5.1f%% of copy\n", n, n, cd * 8, names[o], rb / t / 1e6,
             100.0 * (rb / t) / (2.0 * bytes / tc));
    }
    cudaFree(d);
  }
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
