// Device-to-device transfers between the ranks of a run (issue 33): NCCL point-to-point sends and receives, queued
// on a CUDA stream, so that a halo exchange or a gather of a vector in GPU memory needs neither a copy through the
// host nor a wait of the host for the GPU. The MPI on the GPU machines is not CUDA-aware; NCCL is the field's
// route there (AMGX, PETSc's and Ginkgo's NCCL back ends). MPI still starts the ranks and moves host data.
//
// A run uses it where it can: the build has NCCL (BLOCKRES_HAVE_NCCL, a CUDA and MPI build that found nccl.h and
// libnccl), the run has several ranks, each on a GPU of its own, and the environment does not ask for the host path
// (BLOCKRES_HALO=host). Elsewhere (the CPU backend, ranks sharing a GPU, which NCCL refuses) the halo goes through
// pinned host memory as before. The choice is collective: every rank makes the same.
#pragma once

#include "linalg/distributed/communicator.hpp"

#include <memory>
#include <span>
#include <string>

namespace blockres::dist {

class DeviceComm {
 public:
  // The device communicator of comm's ranks on this thread's current CUDA device; created on the first call for
  // comm, which is collective (every rank of comm calls it at the same point), later calls are local. Null where
  // the device path is not used; why_not() then says why.
  static std::shared_ptr<const DeviceComm> of(const CommPtr& comm);
  // Why of(comm) is null (empty when it is not, or before the first call).
  static std::string why_not(const Communicator& comm);

  // One message of a grouped transfer: count doubles to or from peer (device memory).
  struct Send {
    const double* data;
    std::size_t count;
    int peer;
  };
  struct Recv {
    double* data;
    std::size_t count;
    int peer;
  };
  // The sends and receives, as one NCCL group queued on stream (a cudaStream_t of this rank's device): every peer
  // must post the matching halves in the same order of groups. The host does not wait. Every transfer of one
  // communicator runs on its stream(): the caller orders it after its own work and before its next (events).
  void exchange(std::span<const Send> sends, std::span<const Recv> recvs, void* stream) const;
  // Every rank's `counts[rank]` doubles of `mine` into all, concatenated in rank order (device memory): after the
  // work queued on stream so far, and before the work queued on it next (on stream(); the host does not wait).
  void allgatherv(const double* mine, std::span<const std::size_t> counts, double* all, void* stream) const;
  // v (k doubles, device memory) summed over the ranks in place, in rank order (the bits of Communicator::sum on
  // the host): an all-gather of every rank's k values and kernels::cuda::sum_ranks, queued after the work on
  // stream so far and before its next; the host does not wait.
  void sum(double* v, int k, void* stream) const;
  // A stream of this rank's device for the transfers that overlap work on the executor's stream (non-blocking).
  void* stream() const { return stream_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  ~DeviceComm();
  DeviceComm(const DeviceComm&) = delete;
  DeviceComm& operator=(const DeviceComm&) = delete;

 private:
  DeviceComm() = default;
  void* nccl_ = nullptr;    // ncclComm_t
  void* stream_ = nullptr;  // cudaStream_t
  void* event_ = nullptr;   // cudaEvent_t of allgatherv's hand-over (recorded and waited for within one call)
  mutable double* scratch_ = nullptr;  // sum's all-gathered partials (device memory), grown on demand
  mutable std::size_t scratch_doubles_ = 0;
  int rank_ = 0, size_ = 1;
};

// Whether this build has NCCL.
bool nccl_available();

}  // namespace blockres::dist
