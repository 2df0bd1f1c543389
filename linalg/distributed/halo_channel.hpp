// The halo exchange of vectors in executor memory (issue 33): what a distributed matrix product and a distributed
// state (the models' cells plus their ghost cells) share. On the CPU backend the exchange runs straight between the
// vector and its ghost entries. On a CUDA executor (one GPU per rank) it is staged through pinned host memory, as
// the MPI on the GPU machines is not CUDA-aware: the entries to send are packed on the device
// (kernels::cuda::halo_pack) and copied to the host, MPI moves them, and finish() copies the ghosts back onto the
// device on the executor's stream. (NCCL, which would keep the exchange on the device, is a later step.)
#pragma once

#include "linalg/array.hpp"
#include "linalg/distributed/halo_plan.hpp"

#include <memory>

namespace blockres::dist {

class HaloChannel {
 public:
  // plan must outlive the channel.
  HaloChannel(ExecPtr exec, CommPtr comm, const HaloPlan& plan, int bs);
  ~HaloChannel();
  HaloChannel(const HaloChannel&) = delete;
  HaloChannel& operator=(const HaloChannel&) = delete;

  // Starts the exchange of one vector: owned (the map's owned entries, bs each, executor memory) to the peers,
  // their entries into ghosts (plan.ghosts() bs doubles, executor memory) by finish(). CUDA: the host waits for
  // the stream's work up to here (the packed entries), unless this rank neither sends nor receives anything.
  void start(const double* owned, double* ghosts);
  // Waits for the exchange; CUDA: the copy of the ghosts onto the device is queued on the stream.
  void finish();
  // Bytes one exchange sends from this rank.
  double bytes_sent() const { return exchange_.bytes_sent(); }

 private:
  ExecPtr exec_;
  const HaloPlan* plan_;
  int bs_;
  HaloExchange exchange_;
  double* ghosts_ = nullptr;  // of the exchange under way
  // CUDA: the ids to pack and the packed entries (device), pinned host buffers.
  Array<index_t> send_ids_dev_;
  Array<double> send_dev_;
  struct Pinned;
  std::unique_ptr<Pinned> pinned_;
};

}  // namespace blockres::dist
