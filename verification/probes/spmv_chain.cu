// Issue 30 item 1: how much of a dependent small SpMV's time is latency that programmatic dependent launch
// (PDL) can hide. A chain of N SpMVs y <- A y on a 3-D 7-point matrix (CSR, G = 4 lanes per row, the AMG
// cycle kernels' layout) in one CUDA graph, three ways:
//   plain     ordinary launches;
//   pdl       PDL launches, cudaGridDependencySynchronize() first thing;
//   prefetch  PDL launches; each lane loads its row bounds and its first entries' columns and values (the
//             matrix: written by nobody in the chain) before cudaGridDependencySynchronize(), then only the
//             gathers of y wait for the previous SpMV; it triggers its successor's launch after the wait.
// Not part of the build; verification/issue29_gpu.sh's `floor` mode compiles it with nvcc on the GPU machine.
#include "probe_util.cuh"

#include <algorithm>
#include <vector>

constexpr int G = 4, PF = 2;  // lanes per row, entries per lane prefetched

template <int Mode>  // 0 plain, 1 pdl, 2 prefetch
__global__ void __launch_bounds__(256) spmv(int n, const int* __restrict__ rp, const int* __restrict__ ci,
                                            const double* __restrict__ v, const double* __restrict__ x,
                                            double* __restrict__ y)
{
  const int t = blockIdx.x * blockDim.x + threadIdx.x, row = t / G, lane = t % G;
  const bool valid = row < n;
  int p0 = 0, p1 = 0;
  int c[PF];
  double a[PF];
  if (Mode == 2) {
    if (valid) p0 = rp[row] + lane, p1 = rp[row + 1];
#pragma unroll
    for (int k = 0; k < PF; ++k) {
      const int p = p0 + k * G;
      c[k] = p < p1 ? ci[p] : 0;
      a[k] = p < p1 ? v[p] : 0.0;
    }
  }
  if (Mode >= 1) cudaGridDependencySynchronize();
  if (Mode == 2) cudaTriggerProgrammaticLaunchCompletion();
  double s = 0.0;
  if (Mode == 2) {
#pragma unroll
    for (int k = 0; k < PF; ++k) s += a[k] * x[c[k]];
    for (int p = p0 + PF * G; p < p1; p += G) s += v[p] * x[ci[p]];
  } else if (valid) {
    for (int p = rp[row] + lane; p < rp[row + 1]; p += G) s += v[p] * x[ci[p]];
  }
#pragma unroll
  for (int off = G / 2; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off, G);
  if (valid && lane == 0) y[row] = 0.5 * s;
}

int main()
{
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %d SMs; chain of 64 dependent SpMVs (7-point, 4 lanes a row) in one graph\n", prop.name,
              prop.multiProcessorCount);
  std::printf("%-9s %-9s %12s\n", "rows", "launch", "us per SpMV");
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t ea, eb;
  CK(cudaEventCreate(&ea));
  CK(cudaEventCreate(&eb));
  for (int m : {4, 12, 18, 42, 60}) {  // m x m x (m/2 or so) grids: 32 .. 108k rows
    const int nx = m, ny = m, nz = std::max(2, m / 2), n = nx * ny * nz;
    std::vector<int> rp(1, 0), ci;
    std::vector<double> v;
    for (int k = 0; k < nz; ++k)
      for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) {
          const int r = (k * ny + j) * nx + i;
          auto add = [&](int c, double a) { ci.push_back(c), v.push_back(a); };
          if (k > 0) add(r - nx * ny, -1);
          if (j > 0) add(r - nx, -1);
          if (i > 0) add(r - 1, -1);
          add(r, 6.5);
          if (i < nx - 1) add(r + 1, -1);
          if (j < ny - 1) add(r + nx, -1);
          if (k < nz - 1) add(r + nx * ny, -1);
          rp.push_back(int(ci.size()));
        }
    int *drp, *dci;
    double *dv, *x, *y;
    CK(cudaMalloc(&drp, sizeof(int) * rp.size()));
    CK(cudaMalloc(&dci, sizeof(int) * ci.size()));
    CK(cudaMalloc(&dv, sizeof(double) * v.size()));
    CK(cudaMalloc(&x, sizeof(double) * n));
    CK(cudaMalloc(&y, sizeof(double) * n));
    CK(cudaMemcpy(drp, rp.data(), sizeof(int) * rp.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dci, ci.data(), sizeof(int) * ci.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dv, v.data(), sizeof(double) * v.size(), cudaMemcpyHostToDevice));
    CK(cudaMemset(x, 0, sizeof(double) * n));
    CK(cudaMemset(y, 0, sizeof(double) * n));
    for (int mode = 0; mode < 3; ++mode) {
      const auto kernel = mode == 0 ? spmv<0> : mode == 1 ? spmv<1> : spmv<2>;
      double us = 0;
      if (time_chain(s, 64, 200, [&](int k) {
            ChainLaunch l((unsigned(n) * G + 255) / 256, 256, s, mode > 0);
            const double* in = k % 2 ? y : x;
            double* out = k % 2 ? x : y;
            return cudaLaunchKernelEx(&l.cfg, kernel, n, (const int*)drp, (const int*)dci, (const double*)dv, in, out);
          }, &us))
        return 1;
      std::printf("%-9d %-9s %12.2f\n", n, mode == 0 ? "plain" : mode == 1 ? "pdl" : "prefetch", us);
    }
    CK(cudaFree(drp));
    CK(cudaFree(dci));
    CK(cudaFree(dv));
    CK(cudaFree(x));
    CK(cudaFree(y));
  }
  return 0;
}
