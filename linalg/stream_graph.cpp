// StreamGraph (linalg/stream_graph.hpp): CUDA stream capture and graph replay.
#include "linalg/stream_graph.hpp"

#if BLOCKRES_HAVE_CUDA
#include "kernels/cuda_check.hpp"
#endif

#include <algorithm>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

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

#if BLOCKRES_HAVE_CUDA
namespace {

// The node count of a recorded graph and its longest dependency chain (in nodes), by a topological
// sweep over its edges. Only for the run log: a query that fails gives zeros.
std::pair<std::size_t, std::size_t> graph_shape(cudaGraph_t g)
{
  std::size_t n = 0, m = 0;
  if (cudaGraphGetNodes(g, nullptr, &n) != cudaSuccess || cudaGraphGetEdges(g, nullptr, nullptr, nullptr, &m) != cudaSuccess) {
    (void)cudaGetLastError();
    return {0, 0};
  }
  std::vector<cudaGraphNode_t> nodes(n), from(m), to(m);
  if ((n && cudaGraphGetNodes(g, nodes.data(), &n) != cudaSuccess) ||
      (m && cudaGraphGetEdges(g, from.data(), to.data(), nullptr, &m) != cudaSuccess)) {
    (void)cudaGetLastError();
    return {n, 0};
  }
  std::unordered_map<cudaGraphNode_t, std::size_t> id;
  for (std::size_t i = 0; i < n; ++i) id[nodes[i]] = i;
  std::vector<std::vector<std::size_t>> out(n);
  std::vector<std::size_t> indeg(n, 0), level(n, 1);
  for (std::size_t k = 0; k < m; ++k) {
    out[id[from[k]]].push_back(id[to[k]]);
    ++indeg[id[to[k]]];
  }
  std::vector<std::size_t> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (indeg[i] == 0) ready.push_back(i);
  std::size_t depth = 0;
  while (!ready.empty()) {
    const std::size_t i = ready.back();
    ready.pop_back();
    depth = std::max(depth, level[i]);
    for (const std::size_t j : out[i]) {
      level[j] = std::max(level[j], level[i] + 1);
      if (--indeg[j] == 0) ready.push_back(j);
    }
  }
  return {n, depth};
}

}  // namespace
#endif

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
  const auto [nodes, depth] = graph_shape(g);
  cudaGraphExec_t e = nullptr;
  const cudaError_t err = cudaGraphInstantiate(&e, g, 0);
  cudaGraphDestroy(g);
  BLOCKRES_CUDA_CHECK(err);
  exec_graph_ = e;
  nodes_ = nodes, depth_ = depth;
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
  nodes_ = depth_ = 0;
}

}  // namespace blockres
