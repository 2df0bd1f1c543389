// The latency floor of a chain of dependent GPU operations (issue 30: the 72k-cell run's linear iteration is a
// chain of about 70 dependent kernels): time per node of a CUDA graph of N dependent kernels, each updating n
// doubles (x[i] = 1.0001 x[i] + 1, a grid of n / 256 blocks), launched plainly and with programmatic dependent
// launch (PDL: the next kernel starts while this one drains and waits in cudaGridDependencySynchronize); and
// time per grid-wide barrier of one persistent cooperative kernel (one block of 256 threads per SM) doing the
// same updates between barriers. Not part of the build; verification/issue29_gpu.sh's `floor` mode compiles it
// with nvcc on the GPU machine.
#include "probe_util.cuh"

#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void step(double* x, int n, bool pdl)
{
  if (pdl) cudaGridDependencySynchronize();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 1.0001 * x[i] + 1.0;
}

__global__ void persistent(double* x, int n, int steps)
{
  cg::grid_group g = cg::this_grid();
  for (int s = 0; s < steps; ++s) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) x[i] = 1.0001 * x[i] + 1.0;
    g.sync();
  }
}

int main()
{
  cudaDeviceProp p{};
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("%s, %d SMs\n", p.name, p.multiProcessorCount);
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  double* x;
  const int nmax = 2000000;
  CK(cudaMalloc(&x, sizeof(double) * nmax));
  CK(cudaMemset(x, 0, sizeof(double) * nmax));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  const int N = 64, reps = 200;
  std::printf("%-10s %-6s %14s\n", "n", "launch", "us per node");
  for (int n : {1, 9000, 144000, 2000000}) {
    for (int pdl = 0; pdl < 2; ++pdl) {
      double us = 0;
      if (time_chain(s, N, reps, [&](int) {
            ChainLaunch l((n + 255) / 256, 256, s, pdl);
            return cudaLaunchKernelEx(&l.cfg, step, x, n, bool(pdl));
          }, &us))
        return 1;
      std::printf("%-10d %-6s %14.2f\n", n, pdl ? "pdl" : "plain", us);
    }
  }
  for (int n : {1, 9000, 144000}) {
    int steps = 2000;
    void* args[] = {&x, &n, &steps};
    const dim3 grid(p.multiProcessorCount), block(256);
    CK(cudaLaunchCooperativeKernel((void*)persistent, grid, block, args, 0, s));
    CK(cudaEventRecord(a, s));
    CK(cudaLaunchCooperativeKernel((void*)persistent, grid, block, args, 0, s));
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    std::printf("%-10d %-6s %14.2f   (persistent kernel, per grid barrier)\n", n, "coop", 1000.0 * ms / steps);
  }
  return 0;
}
