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

HaloChannel::HaloChannel(ExecPtr exec, CommPtr comm, const HaloPlan& plan, int bs, Transport transport)
    : exec_(std::move(exec)), plan_(&plan), bs_(bs), exchange_(std::move(comm), plan, bs)
{
  if (exec_->is_cuda()) {
    send_ids_dev_ = Array<index_t>(exec_, std::span<const index_t>(plan.send_ids));
    send_dev_ = Array<double>(exec_, size64_t(plan.sent()) * bs);
    if (transport == Transport::automatic) dcomm_ = DeviceComm::of(exchange_.comm());
    if (!dcomm_) {
      pinned_ = std::make_unique<Pinned>(std::size_t(plan.sent()) * std::size_t(bs), std::size_t(plan.ghosts()) * std::size_t(bs));
      return;
    }
#if BLOCKRES_HAVE_CUDA
    const std::size_t b = std::size_t(bs);
    for (std::size_t k = 0; k < plan.send_rank.size(); ++k)
      sends_.push_back({send_dev_.data() + std::size_t(plan.send_ptr[k]) * b,
                        std::size_t(plan.send_ptr[k + 1] - plan.send_ptr[k]) * b, plan.send_rank[k]});
    for (std::size_t k = 0; k < plan.recv_rank.size(); ++k)
      recvs_.push_back({nullptr, std::size_t(plan.recv_ptr[k + 1] - plan.recv_ptr[k]) * b, plan.recv_rank[k]});
    cudaEvent_t e1 = nullptr, e2 = nullptr;
    BLOCKRES_CUDA_CHECK(cudaEventCreateWithFlags(&e1, cudaEventDisableTiming));
    BLOCKRES_CUDA_CHECK(cudaEventCreateWithFlags(&e2, cudaEventDisableTiming));
    packed_event_ = e1;
    done_event_ = e2;
    // One double to and from every peer now: NCCL connects a pair of ranks at their first transfer (a host-side
    // set-up of tenths of a second), which belongs to this set-up rather than to the first exchange of the run.
    if (!sends_.empty() || !recvs_.empty()) {
      Array<double> probe(exec_, size64_t(sends_.size() + recvs_.size()));
      std::vector<DeviceComm::Send> ps;
      std::vector<DeviceComm::Recv> pr;
      std::size_t at = 0;
      for (const auto& m : sends_) ps.push_back({probe.data() + at++, 1, m.peer});
      for (const auto& m : recvs_) pr.push_back({probe.data() + at++, 1, m.peer});
      const auto ds = static_cast<cudaStream_t>(dcomm_->stream());
      dcomm_->exchange(ps, pr, ds);
      BLOCKRES_CUDA_CHECK(cudaStreamSynchronize(ds));
    }
#endif
  }
}

HaloChannel::~HaloChannel()
{
#if BLOCKRES_HAVE_CUDA
  if (packed_event_) cudaEventDestroy(static_cast<cudaEvent_t>(packed_event_));
  if (done_event_) cudaEventDestroy(static_cast<cudaEvent_t>(done_event_));
#endif
}

void HaloChannel::start(const double* owned, double* ghosts)
{
  ghosts_ = ghosts;
  if (dcomm_) {
    if (plan_->sent() == 0 && plan_->ghosts() == 0) return;
#if BLOCKRES_HAVE_CUDA
    const auto s = static_cast<cudaStream_t>(exec_->stream());
    const auto ds = static_cast<cudaStream_t>(dcomm_->stream());
    if (plan_->sent())
      kernels::cuda::halo_pack(exec_->stream(), owned, send_ids_dev_.data(), plan_->sent(), bs_, send_dev_.data());
    // The device stream starts after everything queued so far: the pack, and the last reads of the ghosts.
    BLOCKRES_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(packed_event_), s));
    BLOCKRES_CUDA_CHECK(cudaStreamWaitEvent(ds, static_cast<cudaEvent_t>(packed_event_), 0));
    for (std::size_t k = 0; k < recvs_.size(); ++k) recvs_[k].data = ghosts + std::size_t(plan_->recv_ptr[k]) * std::size_t(bs_);
    dcomm_->exchange(sends_, recvs_, ds);
    BLOCKRES_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(done_event_), ds));
#endif
    return;
  }
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
  if (dcomm_) {
    if (plan_->sent() == 0 && plan_->ghosts() == 0) return;
#if BLOCKRES_HAVE_CUDA
    BLOCKRES_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(exec_->stream()),
                                            static_cast<cudaEvent_t>(done_event_), 0));
#endif
    return;
  }
  if (pinned_ && plan_->sent() == 0 && plan_->ghosts() == 0) return;
  exchange_.finish();
#if BLOCKRES_HAVE_CUDA
  if (pinned_ && plan_->ghosts() > 0)
    BLOCKRES_CUDA_CHECK(cudaMemcpyAsync(ghosts_, pinned_->recv, std::size_t(plan_->ghosts()) * std::size_t(bs_) * sizeof(double),
                                        cudaMemcpyHostToDevice, static_cast<cudaStream_t>(exec_->stream())));
#endif
}

}  // namespace blockres::dist
