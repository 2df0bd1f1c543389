#include "linalg/distributed/halo_channel.hpp"

#include "kernels/halo/halo.hpp"

#if BLOCKRES_HAVE_CUDA
#include "kernels/cuda_check.hpp"

#include <cuda_runtime.h>
#endif

namespace blockres::dist {

// Pinned host buffers of the staged device halo (CUDA), freed with the channel.
struct HaloChannel::Pinned {
  double* send = nullptr;
  double* recv = nullptr;
  Pinned(std::size_t send_doubles, std::size_t recv_doubles)
  {
#if BLOCKRES_HAVE_CUDA
    if (send_doubles) BLOCKRES_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&send), send_doubles * sizeof(double)));
    if (recv_doubles) BLOCKRES_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&recv), recv_doubles * sizeof(double)));
#else
    (void)send_doubles, (void)recv_doubles;
#endif
  }
  ~Pinned()
  {
#if BLOCKRES_HAVE_CUDA
    if (send) cudaFreeHost(send);
    if (recv) cudaFreeHost(recv);
#endif
  }
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;
};

HaloChannel::HaloChannel(ExecPtr exec, CommPtr comm, const HaloPlan& plan, int bs)
    : exec_(std::move(exec)), plan_(&plan), bs_(bs), exchange_(std::move(comm), plan, bs)
{
  if (exec_->is_cuda()) {
    send_ids_dev_ = Array<index_t>(exec_, std::span<const index_t>(plan.send_ids));
    send_dev_ = Array<double>(exec_, size64_t(plan.sent()) * bs);
    pinned_ = std::make_unique<Pinned>(std::size_t(plan.sent()) * std::size_t(bs), std::size_t(plan.ghosts()) * std::size_t(bs));
  }
}

HaloChannel::~HaloChannel() = default;

void HaloChannel::start(const double* owned, double* ghosts)
{
  ghosts_ = ghosts;
  if (!pinned_) {  // host memory: the exchange straight from the vector into its ghosts
    exchange_.start(owned, ghosts);
    return;
  }
  if (plan_->sent() == 0 && plan_->ghosts() == 0) return;  // nothing moves: no wait for the stream
#if BLOCKRES_HAVE_CUDA
  const auto s = static_cast<cudaStream_t>(exec_->stream());
  const std::size_t sent = std::size_t(plan_->sent()) * std::size_t(bs_);
  if (sent) {
    kernels::cuda::halo_pack(exec_->stream(), owned, send_ids_dev_.data(), plan_->sent(), bs_, send_dev_.data());
    BLOCKRES_CUDA_CHECK(cudaMemcpyAsync(pinned_->send, send_dev_.data(), sent * sizeof(double), cudaMemcpyDeviceToHost, s));
  }
  // The packed entries on the host; also: the previous exchange's copy out of pinned_->recv is done.
  BLOCKRES_CUDA_CHECK(cudaStreamSynchronize(s));
  exchange_.start_packed(pinned_->send, pinned_->recv);
#endif
}

void HaloChannel::finish()
{
  if (pinned_ && plan_->sent() == 0 && plan_->ghosts() == 0) return;
  exchange_.finish();
#if BLOCKRES_HAVE_CUDA
  if (pinned_ && plan_->ghosts() > 0)
    BLOCKRES_CUDA_CHECK(cudaMemcpyAsync(ghosts_, pinned_->recv, std::size_t(plan_->ghosts()) * std::size_t(bs_) * sizeof(double),
                                        cudaMemcpyHostToDevice, static_cast<cudaStream_t>(exec_->stream())));
#endif
}

}  // namespace blockres::dist
