// Shared by the CUDA probes of this folder (compiled on the GPU machine by verification/issue29_gpu.sh, not part
// of the build): a checked CUDA call, and the time per node of a recorded chain of launches.
#pragma once

#include <cstdio>
#include <cuda_runtime.h>

#define CK(x)                                                                               \
  do {                                                                                      \
    cudaError_t e_ = (x);                                                                   \
    if (e_ != cudaSuccess) {                                                                \
      std::printf("CUDA error %s at line %d: %s\n", #x, __LINE__, cudaGetErrorString(e_)); \
      return 1;                                                                             \
    }                                                                                       \
  } while (0)

// The launch configuration of a kernel node: grid x block on stream s, with programmatic dependent launch
// (the kernel may start while its predecessor finishes; it waits in cudaGridDependencySynchronize) when pdl.
struct ChainLaunch {
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute attr[1];
  ChainLaunch(unsigned grid, unsigned block, cudaStream_t s, bool pdl)
  {
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(block);
    cfg.stream = s;
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = pdl ? 1 : 0;
  }
};

// Records nodes() launches of record(k) (k = 0 .. nodes - 1) on s into a graph, replays it 5 times, then reps
// times under events: microseconds per node in *us. Returns 0, or 1 after a failed call (printed).
template <class Record>
int time_chain(cudaStream_t s, int nodes, int reps, Record record, double* us)
{
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int k = 0; k < nodes; ++k) CK(record(k));
  CK(cudaStreamEndCapture(s, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  for (int w = 0; w < 5; ++w) CK(cudaGraphLaunch(exec, s));
  CK(cudaEventRecord(a, s));
  for (int r = 0; r < reps; ++r) CK(cudaGraphLaunch(exec, s));
  CK(cudaEventRecord(b, s));
  CK(cudaEventSynchronize(b));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  *us = 1000.0 * ms / (double(reps) * nodes);
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return 0;
}
