// StreamGraph (linalg/stream_graph.hpp): CUDA stream capture and graph replay.
#include "linalg/stream_graph.hpp"

#if BLOCKRES_HAVE_CUDA
#include "kernels/cuda_check.hpp"
#endif

#include <stdexcept>

namespace blockres {

bool StreamGraph::capturing(const Executor& exec)
{
#if BLOCKRES_HAVE_CUDA
  if (!exec.is_cuda()) return false;
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  BLOCKRES_CUDA_CHECK(cudaStreamIsCapturing(exec.stream(), &st));
  return st != cudaStreamCaptureStatusNone;
#else
  (void)exec;
  return false;
#endif
}

bool StreamGraph::record(const std::function<void()>& body)
{
  reset();
#if BLOCKRES_HAVE_CUDA
  if (!exec_->is_cuda()) return false;
  const cudaStream_t s = exec_->stream();
  BLOCKRES_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  try {
    body();
  } catch (...) {
    // A CUDA call that cannot be recorded fails and invalidates the capture: then say so (false);
    // any other exception is the caller's.
    cudaGraph_t g = nullptr;
    const cudaError_t end = cudaStreamEndCapture(s, &g);
    if (g) cudaGraphDestroy(g);
    (void)cudaGetLastError();
    if (end == cudaErrorStreamCaptureInvalidated) return false;
    throw;
  }
  cudaGraph_t g = nullptr;
  if (cudaStreamEndCapture(s, &g) != cudaSuccess || !g) {  // a call inside could not be recorded
    if (g) cudaGraphDestroy(g);
    (void)cudaGetLastError();
    return false;
  }
  cudaGraphExec_t e = nullptr;
  const cudaError_t err = cudaGraphInstantiate(&e, g, 0);
  cudaGraphDestroy(g);
  BLOCKRES_CUDA_CHECK(err);
  exec_graph_ = e;
  return true;
#else
  (void)body;
  return false;
#endif
}

void StreamGraph::replay() const
{
  if (!exec_graph_) throw std::logic_error("StreamGraph::replay without a recording");
#if BLOCKRES_HAVE_CUDA
  BLOCKRES_CUDA_CHECK(cudaGraphLaunch(static_cast<cudaGraphExec_t>(exec_graph_), exec_->stream()));
#endif
}

void StreamGraph::reset()
{
#if BLOCKRES_HAVE_CUDA
  if (exec_graph_) cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec_graph_));
#endif
  exec_graph_ = nullptr;
}

}  // namespace blockres
